"""Malformed requests to manager pages get a clear 4xx answer and change nothing —
never a 500 (issue 13's probe)."""

import pytest
from django.urls import reverse

from annotation.models import Campaign
from benchmark.models import Item
from judging.evaluation.models import EvaluationRun, Response
from tests.judging.factories import make_items, make_run


@pytest.fixture
def run(benchmark):
    items = make_items(benchmark, 6)
    return make_run(benchmark, items, [3, 2, None, 3, 1, 0], [False] * 6, model="alpha")


@pytest.fixture
def manager(client_for):
    client = client_for("manager")
    client.raise_request_exception = False
    return client


def test_a_nul_anywhere_in_a_request_is_refused(manager, benchmark, run):
    cases = [
        manager.get(
            reverse("judging:leaderboard", args=[benchmark.slug]) + "?lang=%00"
        ),
        manager.get(
            reverse(
                "judging:table_download", args=[benchmark.slug, "leaderboard", "csv"]
            )
            + "?lang=%00"
        ),
        manager.get(f"/judging/evaluations/{benchmark.slug}/items/%00/"),
        manager.post(
            reverse("judging:set_category", args=[benchmark.slug]),
            {"model_name": "alpha", "category": "open\x00MoE"},
        ),
    ]
    for response in cases:
        assert response.status_code == 400, response.request
        assert "NUL" in response.content.decode()
    assert not EvaluationRun.objects.exclude(model_category=run.model_category).exists()


@pytest.mark.parametrize("value", ["abc", "-1", "1e30", "99999999999999999999"])
def test_cell_drill_down_with_a_bad_run_is_a_404(manager, benchmark, run, value):
    response = manager.get(
        reverse("judging:cell_items", args=[benchmark.slug]),
        {"run": value, "dimension": "capability", "group": "x"},
    )
    assert response.status_code == 404


@pytest.mark.parametrize("value", ["abc", "1e30", "99999999999999999999"])
def test_waiving_a_malformed_response_id_says_so(manager, run, value):
    response = manager.post(
        reverse("judging:waive_pending", args=[run.pk]),
        {"response": value, "note": "why"},
        follow=True,
    )
    assert response.status_code == 200
    assert "Only pending items can be waived." in response.content.decode()
    assert not Response.objects.filter(waived_at__isnull=False).exists()


def test_unknown_language_is_refused_not_reflected(manager, benchmark, run):
    url = reverse("judging:table_download", args=[benchmark.slug, "leaderboard", "csv"])
    response = manager.get(url, {"lang": 'x"; filename="evil.exe'})
    assert response.status_code == 404
    assert "evil" not in response.get("Content-Disposition", "")
    ok = manager.get(url, {"lang": "zh"})
    assert ok["Content-Disposition"] == (
        f'attachment; filename="{benchmark.slug}-zh-leaderboard.csv"'
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [("seed", "-5"), ("seed", "1e30"), ("size", "1e30"), ("size", str(10**20))],
)
def test_campaign_form_validates_ranges(manager, benchmark, run, field, value):
    data = {
        "kind": Campaign.Kind.GRADING,
        "name": "Probe",
        "benchmark": benchmark.pk,
        "runs": [run.pk],
        "size": "4",
        "seed": "7",
        field: value,
    }
    response = manager.post(reverse("annotation:campaign_new"), data)
    assert response.status_code == 400
    assert not Campaign.objects.exists()
    assert "errorlist" in response.content.decode()


def test_item_ids_with_url_unsafe_characters_have_working_pages(
    manager, benchmark, run
):
    item = Item.objects.filter(benchmark=benchmark).first()
    item.external_id = "GB/T 3098.1?#%"
    item.save(update_fields=["external_id"])
    url = reverse("judging:item_results", args=[benchmark.slug, item.external_id])
    assert manager.get(url).status_code == 200
    run_page = manager.get(reverse("judging:evaluation_run", args=[run.pk]))
    assert run_page.status_code == 200
    assert EvaluationRun.objects.count() == 1


@pytest.mark.django_db
def test_an_htmx_request_without_a_session_gets_401_not_the_sign_in_page(client):
    url = reverse("annotation:queues")
    assert client.get(url).status_code == 302
    signed_out = client.post(url, HTTP_HX_REQUEST="true")
    assert signed_out.status_code == 401
    assert signed_out.content == b"You are signed out."
