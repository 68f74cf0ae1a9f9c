"""The checks on the release sample: exact dedup (exact twins rejected) and
dangling references (pending for a person), each its own stage run on the
sample only; the review action and the review page."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from construction import pipeline
from construction.actions import do_review_flag, do_start_stage
from construction.models import StageDecision, StageRun
from construction.release import do_release
from judging.runs import lifecycle
from tests.construction.factories import make_candidate, make_source

SAMPLED = [("dedup", "pass", ""), ("quality", "pass", ""), ("release", "pass", "")]


@pytest.fixture
def pool(benchmark):
    source = make_source(benchmark, text="插座额定电压 250 V")
    return {
        "clean": make_candidate(source, "插座的额定电压最高是多少伏？", SAMPLED),
        "twin": make_candidate(source, "插座的额定电压最高是多少伏?", SAMPLED),
        "product": make_candidate(source, "该产品的额定电流是多少？", SAMPLED),
        "english": make_candidate(
            source, "What current does THIS MODEL take?", SAMPLED
        ),
        "rejected": make_candidate(
            source, "该型号怎么样？", [("dedup", "pass", ""), ("quality", "reject", "")]
        ),
        "not_drawn": make_candidate(
            source,
            "插座的额定电压最高是多少伏",
            [*SAMPLED[:2], ("release", "reject", "Not drawn in the release sample")],
        ),
    }


def run_check(benchmark, stage, **options) -> StageRun:
    """Start a check's run and do its work here: it calls nothing, so no worker."""
    run = do_start_stage(benchmark, stage, **options)
    lifecycle.start(pipeline.STAGES, run.pk)
    for run_id, units in pipeline.open_chunks(run):
        pipeline.stage_chunk(run_id, units)
    lifecycle.finish(pipeline.STAGES, run.pk)
    run.refresh_from_db()
    return run


def run_post(benchmark, **options) -> StageRun:
    """Both checks in the paper's order; the dangling run is returned."""
    run_check(benchmark, "exact_dedup")
    return run_check(benchmark, "dangling", **options)


def post(candidate):
    return candidate.decisions.get(stage="dangling")


def test_exact_dedup_runs_on_the_sample_only(benchmark, pool):
    run = run_check(benchmark, "exact_dedup")
    assert (run.status, run.total_units, run.prompt_version) == (
        "complete",
        4,
        "exact-question",
    )
    exact = {name: c.decisions.filter(stage="exact_dedup") for name, c in pool.items()}
    twin = exact["twin"].get()
    assert (twin.outcome, twin.evidence["twin"]) == ("reject", pool["clean"].pk)
    assert twin.reason == f"Exact duplicate of candidate {pool['clean'].pk}"
    assert exact["clean"].get().outcome == "pass"
    # Not in the sample: neither checked nor a twin of anything.
    assert not exact["not_drawn"].exists() and not exact["rejected"].exists()


def test_dangling_needs_exact_dedup_and_the_sample_first(benchmark, pool):
    with pytest.raises(ValidationError, match="exact dedup stage first"):
        do_start_stage(benchmark, "dangling")
    StageDecision.objects.filter(stage="release").delete()
    with pytest.raises(ValidationError, match="Draw the release sample first"):
        do_start_stage(benchmark, "exact_dedup")


def test_dangling_flags_wait_for_a_person(benchmark, pool):
    run = run_post(benchmark, phrases="")
    assert run.status == "attention"
    assert post(pool["clean"]).outcome == "pass"
    assert not pool["twin"].decisions.filter(stage="dangling").exists()
    product = post(pool["product"])
    assert (product.outcome, product.reason) == (
        "pending",
        "dangling reference: 该产品",
    )
    assert product.evidence["dangling"]["question"] == [["该产品", 0, 3]]


def test_a_flagged_candidate_is_released_only_once_approved(benchmark, pool, personas):
    run_post(benchmark)
    manager = personas["manager"]
    product = post(pool["product"])
    with pytest.raises(ValidationError, match="1 dangling-reference flag"):
        do_release(benchmark, user=manager)
    do_review_flag(product, "pass", user=manager)
    product.refresh_from_db()
    assert (product.outcome, product.decided_by, product.reason) == (
        "pass",
        manager,
        "Approved",
    )
    assert product.evidence["flag"] == "dangling reference: 该产品"
    # The sample less its twin.
    assert do_release(benchmark, user=manager).released == 3


def test_remove_needs_a_reason_and_review_is_idempotent(benchmark, pool, personas):
    run_post(benchmark)
    manager = personas["manager"]
    product = post(pool["product"])
    with pytest.raises(ValidationError, match="Say why"):
        do_review_flag(product, "reject", reason="  ", user=manager)
    do_review_flag(product, "reject", reason="Names no product.", user=manager)
    do_review_flag(product, "reject", reason="Again.", user=manager)
    product.refresh_from_db()
    assert (product.outcome, product.reason) == ("reject", "Names no product.")
    with pytest.raises(ValidationError, match="already removed"):
        do_review_flag(product, "pass", user=manager)
    with pytest.raises(ValidationError, match="dangling-reference flag"):
        do_review_flag(post(pool["clean"]), "reject", reason="x", user=manager)


def test_review_page_highlights_and_acts(benchmark, pool, client_for, personas):
    run_post(benchmark)
    client = client_for("manager")
    url = reverse("construction:review", args=[benchmark.slug])
    assert client.get(url).context["flag"] is None  # opening it leases nothing
    page = client.post(url, {"action": "next"})
    body = page.content.decode()
    assert '<mark class="hl">该产品</mark>的额定电流是多少？' in body
    assert "插座额定电压 250 V" in body  # the source excerpt
    product = post(pool["product"])
    assert page.context["flag"]["decision"] == product
    assert page.context["flag"]["waiting"] == 1
    act = reverse("construction:review_flag", args=[benchmark.slug, product.pk])
    response = client.post(act, {"outcome": "reject", "reason": ""})
    # Back at the same flag (the person's lease), with the reason asked for.
    assert response.url == url
    again = client.get(response.url)
    assert again.context["flag"]["decision"] == product
    assert "Say why the candidate is removed." in again.content.decode()
    # With htmx the refusal answers 400 with the flag and the reason box open.
    refused = client.post(
        act, {"outcome": "reject", "reason": ""}, headers={"HX-Request": "true"}
    )
    assert refused.status_code == 400
    assert 'id="remover" class="card q-card">' in refused.content.decode()
    product.refresh_from_db()
    assert product.outcome == "pending"
    response = client.post(act, {"outcome": "pass"})
    assert response.url == url
    product.refresh_from_db()
    assert (product.outcome, product.decided_by) == ("pass", personas["manager"])
    done = client.post(url, {"action": "next"})
    assert done.context["flag"] is None
    assert "Nothing waits for review." in done.content.decode()
    # Back shows the decided flag, not to be decided again.
    assert done.context["previous_flag_id"] == product.pk
    back = client.get(url, {"flag": product.pk})
    assert "A decided flag is not decided again." in back.content.decode()


def test_review_page_skips_and_refuses_a_stale_tab(
    benchmark, pool, client_for, personas
):
    """The review screens' shared submit (reviewqueue.views.ReviewScreen)."""
    source = pool["product"].source
    weight = make_candidate(source, "该产品的重量是多少？", SAMPLED)
    run_post(benchmark)
    client = client_for("manager")
    htmx = {"HX-Request": "true"}
    url = reverse("construction:review", args=[benchmark.slug])
    product = client.post(url, {"action": "next"}, headers=htmx).context["flag"]
    assert product["decision"] == post(pool["product"])

    def act(decision):
        return reverse("construction:review_flag", args=[benchmark.slug, decision.pk])

    skipped = client.post(act(post(pool["product"])), {"action": "skip"}, headers=htmx)
    second = post(weight)
    assert skipped.context["flag"]["decision"] == second
    # Decided meanwhile in another tab: the other verdict is refused, said, and
    # the screen moves on (the skipped flag is not offered to this person again).
    do_review_flag(second, "pass", user=personas["manager"])
    stale = client.post(
        act(second), {"outcome": "reject", "reason": "Vague."}, headers=htmx
    )
    assert stale.status_code == 200
    assert f"Candidate {second.candidate_id} was already approved" in (
        stale.content.decode()
    )
    assert stale.context["flag"] is None
    second.refresh_from_db()
    assert second.outcome == "pass"
    assert post(pool["product"]).outcome == "pending"


@pytest.mark.parametrize("persona", ["expert", "adjudicator", "reviewer", "outsider"])
def test_review_is_for_managers(benchmark, pool, client_for, persona):
    run_post(benchmark)
    product = post(pool["product"])
    client = client_for(persona)
    assert (
        client.get(reverse("construction:review", args=[benchmark.slug])).status_code
        == 403
    )
    act = reverse("construction:review_flag", args=[benchmark.slug, product.pk])
    assert client.post(act, {"outcome": "pass"}).status_code == 403
    product.refresh_from_db()
    assert product.outcome == "pending"


def test_run_stage_command_takes_a_phrase_file(benchmark, pool, tmp_path):
    from django.core.management import call_command

    phrases = tmp_path / "phrases.txt"
    phrases.write_text("this model\n\nthis model\n", encoding="utf-8")
    run_check(benchmark, "exact_dedup")
    call_command(
        "run_stage", "dangling", "--benchmark", benchmark.slug, "--phrases", phrases
    )
    assert StageRun.objects.get(stage="dangling").phrases == "this model"
