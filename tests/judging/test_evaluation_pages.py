"""Evaluation pages: manager-only, tables and downloads, drill-downs, import, waive,
categories and panel difficulty write-back."""

import csv
import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from benchmark.models import Item, ItemEvent
from judging.evaluation.models import EvaluationRun
from judging.leaderboard.building import TABLE_ORDER
from tests.judging.factories import make_items, make_run
from tests.latex import assert_compiles


@pytest.fixture
def items(benchmark):
    return make_items(benchmark, 36)


@pytest.fixture
def runs(benchmark, items):
    made = [
        make_run(benchmark, items, [3] * 36, [False] * 36, model="alpha"),
        make_run(
            benchmark,
            items,
            [2] * 35 + [None],
            [True] * 3 + [False] * 33,
            model="beta",
            category="open MoE",
        ),
    ]
    return made


def test_pages_are_for_managers_only(client_for, benchmark, runs):
    urls = [
        reverse("judging:evaluations"),
        reverse("judging:leaderboard", args=[benchmark.slug]),
        reverse("judging:evaluation_runs", args=[benchmark.slug]),
        reverse("judging:evaluation_run", args=[runs[0].pk]),
        reverse("judging:table_download", args=[benchmark.slug, "leaderboard", "csv"]),
    ]
    for url in urls:
        assert client_for("expert").get(url).status_code == 403
        assert client_for("manager").get(url).status_code == 200


def test_leaderboard_page_shows_every_table(client_for, benchmark, runs):
    page = client_for("manager").get(
        reverse("judging:leaderboard", args=[benchmark.slug])
    )
    html = page.content.decode()
    for slug in (
        "leaderboard",
        "capability",
        "industry",
        "difficulty",
        "mode",
        "multilingual",
        "ci",
        "pairs",
    ):
        assert f'id="{slug}"' in html
    assert "open MoE" in html and "uncategorised" in html
    assert "1 item is pending" in html
    assert reverse("judging:cell_items", args=[benchmark.slug]) in html


def test_downloads_are_csv_and_latex(client_for, benchmark, runs):
    client = client_for("manager")
    response = client.get(
        reverse("judging:table_download", args=[benchmark.slug, "leaderboard", "csv"])
    )
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    # A byte-order mark, so that Excel reads the UTF-8 (Chinese model names, items).
    assert response.content.startswith("\ufeff".encode())
    rows = list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert rows[0][:4] == ["Rank", "Model", "Category", "Final (SV)"]
    assert rows[1][1] == "alpha" and float(rows[1][3]) == 3.0
    latex = client.get(
        reverse("judging:table_download", args=[benchmark.slug, "capability", "tex"])
    ).content.decode()
    assert "\\begin{tabular}" in latex and "\\toprule" in latex
    assert "$^{\\dagger}$" in latex  # 36 items over 7 capabilities: low support
    missing = client.get(
        reverse("judging:table_download", args=[benchmark.slug, "nope", "csv"])
    )
    assert missing.status_code == 404


def test_latex_downloads_are_ascii_for_ascii_data(client_for, benchmark, runs):
    """pdflatex compiles them: Δ, ±, −, – … are macros, not raw Unicode."""
    client = client_for("manager")
    downloads = {
        slug: client.get(
            reverse("judging:table_download", args=[benchmark.slug, slug, "tex"])
        ).content.decode()
        for slug in TABLE_ORDER
    }
    for slug, latex in downloads.items():
        assert latex.isascii(), slug
        assert latex.startswith("% Needs \\usepackage{booktabs"), slug
        assert_compiles(latex)
    leaderboard = downloads["leaderboard"]
    assert r"$\pm$95\% CI" in leaderboard and r"$\Delta$rank" in leaderboard
    assert r"raw rank $-$ final rank" in leaderboard
    assert r"Mean final score (0--3)" in downloads["capability"]


def test_heatmap_cell_lists_its_items_with_reasons(client_for, benchmark, runs):
    beta = runs[1]
    label = (
        Item.objects.get(external_id="item-000")
        .final_labels.get(dimension__code="capability")
        .label
    )
    page = client_for("manager").get(
        reverse("judging:cell_items", args=[benchmark.slug]),
        {"run": beta.pk, "dimension": "capability", "group": label.code},
    )
    html = page.content.decode()
    assert page.status_code == 200
    assert "item-000" in html and "violates" in html and "judge says 2" in html
    difficulty = client_for("manager").get(
        reverse("judging:cell_items", args=[benchmark.slug]),
        {"run": beta.pk, "dimension": "difficulty", "group": "hard"},
    )
    assert difficulty.status_code == 200
    bad = client_for("manager").get(
        reverse("judging:cell_items", args=[benchmark.slug]),
        {"run": beta.pk, "dimension": "difficulty", "group": "impossible"},
    )
    assert bad.status_code == 404


def test_item_drill_down_shows_each_models_answer(client_for, benchmark, runs):
    page = client_for("manager").get(
        reverse("judging:item_results", args=[benchmark.slug, "item-035"])
    )
    html = page.content.decode()
    assert html.count("answer item-035") == 2
    assert "pending" in html  # beta's judge gave no verdict on item-035


def test_upload_page_imports_or_lists_row_errors(client_for, benchmark, items):
    client = client_for("manager")
    url = reverse("judging:import_evaluation_run", args=[benchmark.slug])
    header = (
        "id,model_response,model_name,score,judge_reason,safety_violation,"
        "safety_review_reason,final_score\n"
    )
    bad = io.BytesIO((header + "item-000,ok,m,3,r,maybe,,3\n").encode())
    bad.name = "bad.csv"
    response = client.post(
        url, {"file": bad, "model_name": "m", "language": "zh"}, follow=True
    )
    assert "line 2 (id item-000)" in response.content.decode()
    assert EvaluationRun.objects.count() == 0
    good = io.BytesIO((header + "item-000,ok,m,3,r,false,,3\n").encode())
    good.name = "good.csv"
    response = client.post(
        url, {"file": good, "model_name": "m", "language": "zh"}, follow=True
    )
    run = EvaluationRun.objects.get()
    assert response.redirect_chain[-1][0] == reverse(
        "judging:evaluation_run", args=[run.pk]
    )
    assert run.origin == "imported" and run.created_by.username == "manager"


def test_waiving_pending_items_needs_a_reason_and_completes_the_run(
    client_for, personas, runs
):
    beta = runs[1]
    beta.status = EvaluationRun.Status.ATTENTION
    beta.save(update_fields=["status"])
    client = client_for("manager")
    pending_id = beta.responses.get(item__external_id="item-035").pk
    url = reverse("judging:waive_pending", args=[beta.pk])
    client.post(url, {"response": [pending_id], "note": ""})
    beta.refresh_from_db()
    assert beta.status == "attention"
    answered_id = beta.responses.get(item__external_id="item-000").pk
    response = client.post(url, {"response": [answered_id], "note": "x"}, follow=True)
    assert "Only pending items can be waived" in response.content.decode()
    client.post(url, {"response": [pending_id], "note": "judge keeps timing out"})
    beta.refresh_from_db()
    waived = beta.responses.get(pk=pending_id)
    assert waived.waived_by == personas["manager"] and waived.waive_note
    assert beta.status == "complete"


def test_run_page_polls_until_complete(client_for, runs):
    run = runs[0]
    run.status = EvaluationRun.Status.RUNNING
    run.save(update_fields=["status"])
    client = client_for("manager")
    url = reverse("judging:evaluation_run", args=[run.pk])
    polling = client.get(url, headers={"HX-Request": "true"})
    assert polling.status_code == 200 and 'hx-trigger="every 2s"' in polling.text
    # A run whose pending items wait for a manager has nothing more to show.
    run.status = EvaluationRun.Status.ATTENTION
    run.save(update_fields=["status"])
    assert client.get(url, headers={"HX-Request": "true"}).headers["HX-Refresh"]
    run.status = EvaluationRun.Status.COMPLETE
    run.save(update_fields=["status"])
    assert client.get(url, headers={"HX-Request": "true"}).headers["HX-Refresh"]


def test_manager_cancels_a_running_run_from_its_page(client_for, runs):
    run = runs[0]
    run.status = EvaluationRun.Status.RUNNING
    run.save(update_fields=["status"])
    url = reverse("judging:run_control", args=["evaluation", run.pk, "cancel"])
    assert client_for("expert").post(url).status_code == 403
    client = client_for("manager")
    page = client.get(reverse("judging:evaluation_run", args=[run.pk])).text
    assert url in page and "Cancel run" in page
    response = client.post(url, follow=True)
    assert f"Run {run.pk} cancelled; what it recorded is kept." in response.text
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.CANCELLED and run.finished_at
    assert "Cancel run" not in response.text
    again = client.post(url, follow=True)
    assert f"Run {run.pk} is cancelled." in again.text


def test_cancel_run_command_cancels_any_kind(runs):
    run = runs[0]
    run.status = EvaluationRun.Status.RUNNING
    run.save(update_fields=["status"])
    out = io.StringIO()
    call_command("cancel_run", "evaluation", str(run.pk), stdout=out)
    assert f"Cancelled evaluation run {run.pk}" in out.getvalue()
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.CANCELLED
    with pytest.raises(CommandError, match="is cancelled"):
        call_command("cancel_run", "evaluation", str(run.pk))
    with pytest.raises(CommandError, match="No labelling run 999999"):
        call_command("cancel_run", "labelling", "999999")


def test_category_and_panel_difficulty_write_back(client_for, benchmark, runs):
    client = client_for("manager")
    client.post(
        reverse("judging:set_category", args=[benchmark.slug]),
        {"model_name": "alpha", "category": "closed"},
    )
    assert runs[0].__class__.objects.get(pk=runs[0].pk).model_category == "closed"
    url = reverse("judging:write_difficulty", args=[benchmark.slug])
    panel = {"run": [runs[0].pk, runs[1].pk]}
    # First the preview: what would change, and nothing written.
    preview = client.post(url, panel)
    html = preview.content.decode()
    assert preview.status_code == 200
    assert '<strong data-testid="difficulty-changed">36</strong>' in html
    assert str(runs[0]) in html and str(runs[1]) in html
    assert not Item.objects.filter(benchmark=benchmark).exclude(difficulty="").exists()
    assert not ItemEvent.objects.filter(kind="difficulty").exists()
    client.post(url, {**panel, "confirm": "1"})
    counts = {
        level: Item.objects.filter(benchmark=benchmark, difficulty=level).count()
        for level in ("easy", "medium", "hard")
    }
    # 35 items share the panel mean 2.5 and are never split across tiers;
    # item-035 has beta's raw pending, alpha's 3: mean 3, highest; easiest.
    assert counts == {"easy": 1, "medium": 35, "hard": 0}
    item = Item.objects.get(external_id="item-035")
    assert item.difficulty == "easy"
    assert "runs" in item.difficulty_provenance
    event = ItemEvent.objects.filter(item=item, kind="difficulty").get()
    assert event.after["difficulty"] == "easy" and event.user.username == "manager"
    page = client.get(reverse("judging:leaderboard", args=[benchmark.slug]))
    assert "stored item difficulty" in page.content.decode()


def test_one_run_control_serves_every_kind_and_goes_back_only_on_this_site(
    client_for, runs
):
    run = runs[0]
    run.status = EvaluationRun.Status.RUNNING
    run.save(update_fields=["status"])
    client = client_for("manager")
    for kind, action in [("nonsense", "cancel"), ("evaluation", "explode")]:
        url = reverse("judging:run_control", args=[kind, run.pk, action])
        assert client.post(url).status_code == 404
    cancel = reverse("judging:run_control", args=["evaluation", run.pk, "cancel"])
    away = client.post(cancel, {"next": "https://elsewhere.example/"})
    assert away.url == reverse("judging:evaluation_run", args=[run.pk])
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.CANCELLED
    # A cancelled evaluation run is not resumed: the refusal is said, nothing moves.
    resume = reverse("judging:run_control", args=["evaluation", run.pk, "resume"])
    back = client.post(resume, {"next": "/judging/evaluations/"}, follow=True)
    assert back.redirect_chain[0][0] == "/judging/evaluations/"
    assert "A cancelled run cannot be retried." in back.text
    run.refresh_from_db()
    assert (run.status, run.retry_round) == (EvaluationRun.Status.CANCELLED, 0)
