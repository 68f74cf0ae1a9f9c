"""Leaderboard page with all slices for 17 runs × 2,049 items from PostgreSQL.

    DATABASE_URL=postgres://… .venv/bin/python bench/leaderboard_bench.py [--repeat 7]

Creates (once) a benchmark `bench-leaderboard` with 2,049 labelled items and 17
scored runs (rubric + SV judgments; a second rubric judge on every response so the
judge filter has work to do; people's overrides on 1% of the responses, some
superseded or reverted, so the override joins have rows to find), then requests
the leaderboard page as a manager through Django's test client and reports server
time per request (view + template), plus the split between reading scores,
building the report and rendering. Target ≤ 500 ms.
Repeat views are served from the cache (judging.leaderboard.building.cached_report and
judging.leaderboard.presenting.leaderboard_tables); "cold" clears the cache first.
"""

import argparse
import os
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assay.settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.core.cache import cache  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from benchmark.actions import do_create_benchmark, do_create_user  # noqa: E402
from benchmark.models import (  # noqa: E402
    Benchmark,
    FinalLabel,
    Item,
    Label,
    Rendering,
)
from judging.evaluation.models import (  # noqa: E402
    EvaluationRun,
    Judgment,
    Response,
    ScoreOverride,
)
from judging.evaluation.pipeline import scores_changed  # noqa: E402
from judging.evaluation.scores import benchmark_runs, load_scores  # noqa: E402
from judging.leaderboard.building import build_report  # noqa: E402

SLUG = "bench-leaderboard"
RUNS, ITEMS = 17, 2049
OVERRIDE_SHARE = 0.01


def override_rows(responses, scores, rng, user) -> list[ScoreOverride]:
    """Rubric overrides on OVERRIDE_SHARE of `responses`: each a superseded row
    and the latest one; every fourth latest row a revert."""
    rows = []
    picked = rng.choice(len(responses), int(OVERRIDE_SHARE * len(responses)), False)
    for n, i in enumerate(picked):
        common = {
            "response": responses[i],
            "kind": "rubric",
            "judge_name": "judge-a",
            "judge_score": int(scores[i]),
            "user": user,
            "reason": "bench",
        }
        rows.append(ScoreOverride(score=3, is_latest=False, **common))
        if n % 4 == 0:
            rows.append(ScoreOverride(reverts=True, **common))
        else:
            rows.append(ScoreOverride(score=int(3 - scores[i]), **common))
    return rows


@transaction.atomic
def create_data(user) -> Benchmark:
    rng = np.random.default_rng(0)
    benchmark = do_create_benchmark(name="Leaderboard bench", slug=SLUG)
    items = Item.objects.bulk_create(
        Item(benchmark=benchmark, external_id=f"B{i:05d}") for i in range(ITEMS)
    )
    Rendering.objects.bulk_create(
        Rendering(item=item, language="zh", question="q", answer="a", origin="source")
        for item in items
    )
    finals = []
    for code in ("capability", "industry"):
        labels = list(
            Label.objects.filter(dimension__benchmark=benchmark, dimension__code=code)
        )
        for item, pick in zip(items, rng.integers(0, len(labels), ITEMS), strict=True):
            finals.append(
                FinalLabel(
                    item=item,
                    dimension_id=labels[pick].dimension_id,
                    label=labels[pick],
                    provenance="imported",
                )
            )
    FinalLabel.objects.bulk_create(finals, batch_size=5000)
    difficulty = rng.normal(0, 1, ITEMS)
    for r in range(RUNS):
        run = EvaluationRun.objects.create(
            benchmark=benchmark,
            model_name=f"model-{r:02d}",
            model_category=("closed", "open MoE", "open dense")[r % 3],
            language="zh",
            thinking=False,
            origin="simulated",
            status="complete",
            judge_name="judge-a",
            sv_judge_name="sv-judge",
            total_items=ITEMS,
        )
        quality = 0.1 * r - difficulty + rng.normal(0, 0.8, ITEMS)
        scores = np.digitize(quality, [-1.6, -0.9, -0.3])
        flags = (rng.random(ITEMS) < 0.06) & (scores >= 2)
        responses = Response.objects.bulk_create(
            (
                Response(run=run, item=item, text="answer", status="answered")
                for item in items
            ),
            batch_size=5000,
        )
        judgments = []
        for response, score, flag in zip(responses, scores, flags, strict=True):
            for judge, value in (("judge-a", score), ("judge-b", max(score - 1, 0))):
                judgments.append(
                    Judgment(
                        response=response,
                        kind="rubric",
                        judge_name=judge,
                        score=int(value),
                        status="done",
                    )
                )
            judgments.append(
                Judgment(
                    response=response,
                    kind="safety",
                    judge_name="sv-judge",
                    safety_violation=bool(flag),
                    status="done",
                )
            )
        Judgment.objects.bulk_create(judgments, batch_size=5000)
        ScoreOverride.objects.bulk_create(override_rows(responses, scores, rng, user))
    return benchmark


def ms(values) -> str:
    median, best = 1000 * statistics.median(values), 1000 * min(values)
    return f"median {median:.0f} ms, best {best:.0f} ms"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    manager = do_create_user("bench-manager", "bench-password-123", "manager")
    benchmark = Benchmark.objects.filter(slug=SLUG).first()
    if benchmark is None:
        start = time.perf_counter()
        benchmark = create_data(manager)
        with connection.cursor() as cursor:
            # Fresh tables have no planner statistics until autovacuum runs.
            cursor.execute("ANALYZE")
        print(f"created bench data in {time.perf_counter() - start:.1f} s")
    client = Client()
    client.force_login(manager)
    url = f"/judging/evaluations/{SLUG}/"
    client.get(url)  # warm up: connections, template loading
    cold_times, cold_cpu = [], []
    for _ in range(args.repeat):
        # Drop the cached report, page tables and bootstrap: the first view of new
        # results when no worker has built them yet (judging.leaderboard.presenting.
        # warm_leaderboard normally does, right after the scores change).
        cache.clear()
        start, cpu = time.perf_counter(), time.process_time()
        client.get(url)
        cold_times.append(time.perf_counter() - start)
        cold_cpu.append(time.process_time() - cpu)
    page_times, page_cpu, load_times, report_times = [], [], [], []
    for _ in range(args.repeat):
        start, cpu = time.perf_counter(), time.process_time()
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        page_times.append(time.perf_counter() - start)
        page_cpu.append(time.process_time() - cpu)
        query_count = len(queries)
        assert response.status_code == 200, response.status_code
        runs = benchmark_runs(benchmark)
        start = time.perf_counter()
        load_scores(runs)
        load_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        build_report(benchmark)
        report_times.append(time.perf_counter() - start)
    # One run's scores change (as a pipeline batch, a waiver or a re-judge does):
    # only that run's rows are read again, the bootstrap is recomputed. A different
    # item each time, so the score matrix (and its bootstrap) was never seen before;
    # the change is undone after each view.
    changed_times, changed_cpu = [], []
    run = benchmark_runs(benchmark)[0]
    # Unflagged answers only: a flagged one's final score stays 0 whatever its raw.
    flagged = Judgment.objects.filter(
        response__run=run, kind="safety", safety_violation=True
    ).values("response_id")
    verdicts = (
        Judgment.objects.filter(response__run=run, kind="rubric", judge_name="judge-a")
        .exclude(response_id__in=flagged)
        .order_by("pk")[: args.repeat]
    )
    for verdict in verdicts:
        for score in ((verdict.score + 1) % 4, None):
            with transaction.atomic():
                Judgment.objects.filter(pk=verdict.pk).update(
                    score=verdict.score if score is None else score
                )
                scores_changed(run)
            if score is None:
                break
            start, cpu = time.perf_counter(), time.process_time()
            client.get(url)
            changed_times.append(time.perf_counter() - start)
            changed_cpu.append(time.process_time() - cpu)
    print(
        f"runs={RUNS} items={ITEMS}; 3 judgments per response (2 rubric judges, SV);"
        f" {ScoreOverride.objects.count()} override rows"
    )
    print(
        f"leaderboard page (server time, all tables): {ms(page_times)};"
        f" {query_count} queries"
    )
    print(f"  of which this process's CPU time:         {ms(page_cpu)}")
    print(f"  cold (nothing cached: report, bootstrap): {ms(cold_times)}")
    print(f"  of which this process's CPU time:         {ms(cold_cpu)}")
    print(f"  after one run's scores change:            {ms(changed_times)}")
    print(f"  of which this process's CPU time:         {ms(changed_cpu)}")
    print(f"  load_scores (1 query into numpy):         {ms(load_times)}")
    print(f"  build_report (all tables incl. bootstrap): {ms(report_times)}")
    print(f"  page size: {len(response.content) / 1024:.0f} KiB")
    print(f"load average: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
