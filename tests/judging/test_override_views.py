"""Overriding a judge verdict on an item's results page: managers and adjudicators
may, everyone else gets 403; htmx gets the response's block back, a plain form a
redirect to it."""

import pytest
from django.urls import reverse

from judging.evaluation.models import Judgment, ScoreOverride
from tests.judging.factories import make_items, make_run


@pytest.fixture
def run(benchmark):
    items = make_items(benchmark, 2)
    return make_run(benchmark, items, [3, 1], [False, True], model="alpha")


@pytest.fixture
def target(run):
    return run.responses.get(item__external_id="item-000")


def url_of(response) -> str:
    item = response.item
    return reverse("judging:item_results", args=[item.benchmark.slug, item.external_id])


def override(target, **fields) -> dict:
    return {
        "response": target.pk,
        "kind": "rubric",
        "value": "1",
        "reason": "misses the unit",
        **fields,
    }


@pytest.mark.parametrize("persona", ["manager", "adjudicator"])
def test_managers_and_adjudicators_see_and_use_the_override(
    client_for, target, persona, personas
):
    client = client_for(persona)
    page = client.get(url_of(target))
    assert page.status_code == 200
    assert "Override score" in page.text and "Override SV flag" in page.text
    posted = client.post(url_of(target), override(target))
    assert posted.status_code == 302
    assert posted.url == f"{url_of(target)}#response-{target.pk}"
    row = ScoreOverride.objects.get()
    assert (row.score, row.judge_score, row.user) == (1, 3, personas[persona])
    page = client.get(url_of(target))
    assert "Override saved." in page.text
    assert "misses the unit" in page.text and f"<strong>{persona}</strong>" in page.text
    assert '<s class="muted" title="the judge\'s score">3</s> 1' in page.text


@pytest.mark.parametrize("persona", ["expert", "reviewer", "outsider"])
def test_other_people_get_403_and_change_nothing(client_for, target, persona):
    client = client_for(persona)
    assert client.get(url_of(target)).status_code == 403
    assert client.post(url_of(target), override(target)).status_code == 403
    htmx = client.post(url_of(target), override(target), HTTP_HX_REQUEST="true")
    assert htmx.status_code == 403
    assert not ScoreOverride.objects.exists()


def test_anonymous_posts_are_sent_to_sign_in(client, target):
    response = client.post(url_of(target), override(target))
    assert response.status_code == 302 and "login" in response.url
    assert not ScoreOverride.objects.exists()


def test_htmx_gets_the_response_block_back(client_for, target):
    client = client_for("adjudicator")
    block = client.post(url_of(target), override(target), HTTP_HX_REQUEST="true")
    assert block.status_code == 200
    html = block.text
    assert html.lstrip().startswith(f'<tbody id="response-{target.pk}"')
    assert "<html" not in html
    assert "Saved: the leaderboard now uses it." in html
    assert "in force" in html and "Restore the judge's score" in html

    refused = client.post(
        url_of(target), override(target, reason=" "), HTTP_HX_REQUEST="true"
    )
    assert refused.status_code == 200
    assert "a reason is required" in refused.text
    assert ScoreOverride.objects.count() == 1

    reverted = client.post(
        url_of(target),
        {"response": target.pk, "kind": "rubric", "action": "revert", "reason": "ok"},
        HTTP_HX_REQUEST="true",
    )
    assert "judge&#x27;s verdict restored" in reverted.text
    assert "Restore the judge" not in reverted.text
    assert ScoreOverride.objects.filter(is_latest=True).get().reverts


def test_sv_flag_override_and_bad_values(client_for, run):
    flagged = run.responses.get(item__external_id="item-001")
    client = client_for("manager")
    client.post(url_of(flagged), override(flagged, kind="safety", value="0"))
    row = ScoreOverride.objects.get()
    assert (row.kind, row.safety_violation, row.judge_safety_violation) == (
        Judgment.Kind.SAFETY,
        False,
        True,
    )
    for bad in (
        override(flagged, value="7"),
        override(flagged, kind="safety", value="maybe"),
        override(flagged, kind="final"),
    ):
        page = client.post(url_of(flagged), bad, follow=True)
        assert page.status_code == 200 and 'class="message error"' in page.text
    assert ScoreOverride.objects.count() == 1
    other_item = run.responses.get(item__external_id="item-000")
    # A response of another item is not this page's.
    assert client.post(url_of(flagged), override(other_item)).status_code == 404
    assert client.post(url_of(flagged), {"response": "x"}).status_code == 404


def test_item_ids_with_url_unsafe_characters_keep_working(client_for, target):
    item = target.item
    item.external_id = "GB/T 3098.1?#%"
    item.save(update_fields=["external_id"])
    client = client_for("manager")
    page = client.get(url_of(target))
    assert f'action="{url_of(target)}"' in page.text
    posted = client.post(url_of(target), override(target))
    assert posted.url.startswith(url_of(target) + "#response-")
    assert client.get(posted.url.split("#")[0]).status_code == 200
    assert ScoreOverride.objects.count() == 1
