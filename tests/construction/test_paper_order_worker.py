"""Done-when of IndustryBench's order: a small industrial source set goes
through every stage in the paper's order on a real Celery worker — generation →
dedup (within each source family) → quality → search → deep → the verified
pool opened as draft items and labelled by a three-annotator labelling run →
a release sample stratified by capability × industry → exact dedup on the
sample → dangling references on the sample → a person removes the flag →
released — against the OpenAI-protocol and SearxNG-protocol test servers
(both answer from what they are sent), giving a known funnel whose last rows
are release → exact dedup → dangling → released.

Dedup within each source family keeps the contactor record's two repeats of
GB/T questions (other punctuation) apart from their twins; exact dedup on the
sample catches those that were drawn with their twin, as the paper's exact
dedup caught what semantic dedup missed."""

import pytest

from benchmark.models import FinalLabel, Item
from construction.actions import do_import_sources, do_review_flag
from construction.models import Candidate, StageDecision
from construction.release import (
    candidate_strata,
    do_draw_release_sample,
    do_open_pool,
    do_release,
)
from construction.report import funnel_rows
from construction.sampling import allocate
from judging.labelling.actions import do_start_labelling
from judging.llm.actions import do_save_endpoint
from judging.llm.prompts import default_template
from tests.construction.stage_fixtures import run_stage, stub_endpoint
from tests.construction.verification_fixtures import (
    respond,
    search_results,
    source_records,
)
from tests.judging.labelling_fixtures import wait_until
from tests.openai_stub import OpenAIStub
from tests.search_stub import SearchStub

# Generation asks one source at a time, so candidate ids follow the source
# file and the seeded sample is the same on every run: this one draws the
# bearing's 上述 question and one repeat together with its twin.
SAMPLE_SIZE, SAMPLE_SEED = 17, 8
# stage: (in, out, rejected, pending), every row of the funnel in its order.
PAPER_ORDER_FUNNEL = [
    ("generation", (30, 30, 0, 0)),
    ("dedup", (30, 30, 0, 0)),  # within each family: the repeats are kept
    ("quality", (30, 27, 3, 0)),
    ("search", (27, 23, 4, 0)),
    ("deep", (23, 21, 2, 0)),
    ("release", (21, SAMPLE_SIZE, 21 - SAMPLE_SIZE, 0)),
    ("exact_dedup", (SAMPLE_SIZE, SAMPLE_SIZE - 1, 1, 0)),
    ("dangling", (SAMPLE_SIZE - 1, SAMPLE_SIZE - 2, 1, 0)),
    ("released", (SAMPLE_SIZE - 2, SAMPLE_SIZE - 2, 0, 0)),
]


def funnel(benchmark):
    return [
        (row.stage, (row.entered, row.passed, row.rejected, row.pending))
        for row in funnel_rows(benchmark.pk)
        if row.group == "all"
    ]


@pytest.mark.worker
def test_the_paper_order_gives_a_known_funnel(
    running_worker, benchmark, personas, monkeypatch
):
    monkeypatch.setenv("STUB_API_KEY", "k")
    manager = personas["manager"]
    assert do_import_sources(benchmark, source_records(), "sources.jsonl").added == 10
    with (
        OpenAIStub(responder=respond) as llm,
        SearchStub(responder=search_results) as search,
    ):
        endpoint = stub_endpoint(llm)
        from construction.actions import do_save_search_service

        service = do_save_search_service(
            "searx-test", adapter="searxng", base_url=search.base_url
        )
        template = default_template
        serial = do_save_endpoint(
            "stub-writer-serial",
            base_url=llm.base_url,
            model="writer-model",
            api_key_env="STUB_API_KEY",
            max_concurrency=1,
        )
        run_stage(
            benchmark,
            "generation",
            endpoint=serial,
            template=template("generation"),
            questions_per_source=3,
        )
        for kind in ("gbt_standard", "product_record"):
            run_stage(benchmark, "dedup", threshold=0.9, source_kind=kind)
        run_stage(
            benchmark, "quality", endpoint=endpoint, template=template("quality_check")
        )
        run_stage(
            benchmark,
            "search",
            endpoint=endpoint,
            template=template("search_queries"),
            verifier_template=template("search_verification"),
            search_service=service,
        )
        run_stage(
            benchmark,
            "deep",
            endpoint=endpoint,
            template=template("deep_claims"),
            verifier_template=template("deep_verification"),
            search_service=service,
        )

        # The verified pool becomes draft items; three annotators label them.
        assert do_open_pool(benchmark, user=manager) == 21
        annotators = [
            do_save_endpoint(
                f"annotator-{n}",
                base_url=llm.base_url,
                model=f"annotator-{n}",
                api_key_env="STUB_API_KEY",
            )
            for n in range(3)
        ]
        do_start_labelling(
            benchmark,
            annotators,
            template("labelling"),
            item_filter={"status": "draft"},
        )
        labelled = FinalLabel.objects.filter(item__benchmark=benchmark)
        wait_until(lambda: labelled.count() == 2 * 21, 60, "no consensus labels")
        assert set(labelled.values_list("provenance", flat=True)) == {"full_consensus"}

        sample = do_draw_release_sample(
            benchmark, SAMPLE_SIZE, SAMPLE_SEED, user=manager
        )
        run_stage(benchmark, "exact_dedup")
        dangling = run_stage(benchmark, "dangling", phrases="")
        assert dangling.status == "attention"
        (flag,) = StageDecision.objects.filter(stage="dangling", outcome="pending")
        assert flag.reason == "dangling reference: 上述"
        do_review_flag(flag, "reject", reason="上述 points nowhere.", user=manager)
        result = do_release(benchmark, user=manager)

    assert funnel(benchmark) == PAPER_ORDER_FUNNEL
    assert result.released == SAMPLE_SIZE - 2
    assert Item.objects.filter(benchmark=benchmark, status="active").count() == (
        SAMPLE_SIZE - 2
    )
    # The repeat drawn with its twin is the one exact dedup removed.
    (twin,) = StageDecision.objects.filter(stage="exact_dedup", outcome="reject")
    assert twin.candidate.source.reference == "contactors CJX2-1810"

    # The sample keeps each capability × industry stratum within one item of
    # its share of the verified pool.
    pool = list(Candidate.objects.filter(decisions__stage="release"))
    strata = candidate_strata(pool)
    names = sorted(set(strata.values()))
    sizes = [list(strata.values()).count(name) for name in names]
    drawn = set(
        StageDecision.objects.filter(stage="release", outcome="pass").values_list(
            "candidate", flat=True
        )
    )
    taken = [sum(strata[pk] == name for pk in drawn) for name in names]
    assert taken == list(allocate(sizes, SAMPLE_SIZE))
    assert sample.strata == {
        name: (size, n) for name, size, n in zip(names, sizes, taken, strict=True)
    }
    for size, n in zip(sizes, taken, strict=True):
        assert abs(n - size * SAMPLE_SIZE / len(pool)) < 1
    assert llm.duplicate_answers() == {}
