"""The robustness report (study 002's Tables 3, 4 and 6, Figure 3) from stored
responses, one language at a time: every evaluation run on the benchmark that ended
with results in that language is a row (the source language by default: variants
are written in it, and a translation run renders them, options in their letter
order, into the benchmark's other languages like any item); its answers to the seeds and
the variants are compared by measures.py, with the study's definitions (pooled
robustness; per sector and per relation the mean of the relation × sector cells).
A run with k > 1 trials answers with the majority of its trials (study 002 §4).

An answer is what its AnswerGrade says was read (a binary run grades each MC/TF
reply as it arrives), so the report reads no reply text at the study's scale;
replies without a usable grade are read by extraction.py here (`answers`).

One query each for the variants, the items' answer keys, the current renderings
and the answers; the rest is numpy. A response a run does not have counts as an
unreadable reply (the note says how many).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from django.db import connection
from django.db.models import (
    Case,
    Count,
    F,
    Func,
    IntegerField,
    Max,
    Q,
    Value,
    When,
)
from django.utils.translation import gettext_noop

from benchmark import formats
from benchmark.models import Benchmark, Item, ItemVariant, Rendering
from benchmark.notes import Note
from judging.evaluation.extraction import Grade, extract_all
from judging.evaluation.models import EvaluationRun, Response
from judging.reporting.cache import cached, version_key
from judging.reporting.definitions import footnote
from judging.reporting.tables import Column, Table
from judging.robustness.measures import (
    PROVIDER_REFUSED,
    REFUSED,
    UNREADABLE,
    Robustness,
    Variants,
    answer_codes,
    majority,
    robustness,
)
from judging.robustness.relations import RELATIONS

RELATION_NAMES = tuple(RELATIONS)
NO_SECTOR = "(no sector)"


@dataclass
class Report:
    language: str
    runs: list[EvaluationRun]
    seeds: int
    variants: int
    missing: int
    result: Robustness | None
    tables: dict[str, Table] = field(default_factory=dict)
    cache_key: str = ""

    @property
    def labels(self) -> list[str]:
        return [run_label(run) for run in self.runs]


# The pooled incorrect-robustness tables, one per grouping (titles and notes whole,
# so that each can be translated as a sentence).
INCORRECT_TITLES = {
    "relation": gettext_noop("Incorrect robustness per relation (pooled)"),
    "sector": gettext_noop("Incorrect robustness per sector (pooled)"),
}
INCORRECT_NOTES = {
    "relation": Note(
        gettext_noop(
            "Not a published table: the study reports per relation and per sector "
            "for correct robustness only. This pools the variants of the seeds "
            "answered wrong in each relation."
        )
    ),
    "sector": Note(
        gettext_noop(
            "Not a published table: the study reports per relation and per sector "
            "for correct robustness only. This pools the variants of the seeds "
            "answered wrong in each sector."
        )
    ),
}


def run_label(run: EvaluationRun) -> str:
    mode = ", thinking" if run.thinking else ""
    return f"{run.model_name} ({run.language}{mode})"


def reported_runs(benchmark: Benchmark, language: str) -> list[EvaluationRun]:
    """Runs that ended with results in `language`."""
    return list(
        EvaluationRun.objects.filter(
            benchmark=benchmark,
            status__in=EvaluationRun.ENDED_WITH_RESULTS,
            language=language,
        ).order_by("model_name", "thinking", "id")
    )


def report_languages(benchmark: Benchmark) -> list[str]:
    """The languages a report can be read in: the source language, then each
    other language some run ended with results in."""
    asked = set(
        EvaluationRun.objects.filter(
            benchmark=benchmark, status__in=EvaluationRun.ENDED_WITH_RESULTS
        )
        .order_by()
        .values_list("language", flat=True)
        .distinct()
    )
    others = sorted(asked - {benchmark.source_language})
    return [benchmark.source_language, *others]


def cached_build(benchmark: Benchmark, language: str | None = None) -> Report:
    """`build`, from the cache while nothing it reads has changed: the page and
    each CSV download then read 177,203 answers once, not once each."""
    language = language or benchmark.source_language
    key = report_key(benchmark, language)
    return cached(key, lambda: replace(build(benchmark, language), cache_key=key))


# Moves when what a report holds changes shape, so reports cached by an older
# release are built again (2: study 002's pooled definitions, cells, Table 3).
REPORT_VERSION = 2


def report_key(benchmark: Benchmark, language: str) -> str:
    """What the report reads, cheaply: the runs (a worker recording results moves
    the heartbeat; a finished or re-scored run its status, end and scores
    version), the variants, and the items' answer keys and texts."""
    runs = EvaluationRun.objects.filter(benchmark=benchmark).values_list(
        "pk", "status", "finished_at", "heartbeat_at", "scores_version"
    )
    variants = ItemVariant.objects.filter(seed__benchmark=benchmark).aggregate(
        n=Count("pk"), last=Max("pk")
    )
    # Answer keys can change in bulk (an import's update), which no timestamp
    # records: they are read whole (13,631 items: a few tens of milliseconds).
    items = list(
        Item.objects.filter(benchmark=benchmark)
        .order_by("pk")
        .values_list("pk", "format", "correct_options", "correct_answer")
    )
    texts = Rendering.objects.filter(item__benchmark=benchmark).aggregate(
        last=Max("pk")
    )
    return version_key(
        f"robustness:{benchmark.pk}:{language}",
        REPORT_VERSION,
        sorted(runs),
        variants,
        items,
        texts,
    )


def build(benchmark: Benchmark, language: str | None = None) -> Report:
    """The report of the runs in `language` (default: the source language); the
    option counts replies are read with are that language's renderings'."""
    language = language or benchmark.source_language
    links = list(
        ItemVariant.objects.filter(seed__benchmark=benchmark)
        .order_by("seed_id", "relation", "item_id")
        .values_list("item_id", "seed_id", "relation", "sector", "option_map")
    )
    runs = reported_runs(benchmark, language)
    if not links or not runs:
        return Report(language, runs, 0, len(links), 0, None)
    seed_ids = sorted({seed for _, seed, *_ in links})
    variant_ids = [item for item, *_ in links]
    item_ids = seed_ids + variant_ids
    column = {pk: i for i, pk in enumerate(item_ids)}
    seeds = ItemVariant.objects.filter(seed__benchmark=benchmark).values("seed_id")
    keys = {
        pk: (item_format, correct_options, correct_answer)
        for pk, item_format, correct_options, correct_answer in Item.objects.filter(
            pk__in=seeds
        ).values_list("id", "format", "correct_options", "correct_answer")
    }
    n_options = np.zeros(len(item_ids), dtype=np.int64)
    for item_id, count in (
        Rendering.objects.filter(
            item__benchmark=benchmark,
            is_current=True,
            language=language,
        )
        .annotate(count=JsonArrayLength("options"))
        .values_list("item_id", "count")
    ):
        if item_id in column:
            n_options[column[item_id]] = count
    codes, present = answers(language, runs, np.array(item_ids), n_options)

    n_seeds = len(seed_ids)
    seed_codes, variant_codes = codes[:, :n_seeds], codes[:, n_seeds:]
    accepted = np.zeros((n_seeds, max(2, int(n_options.max()) + 1)), dtype=bool)
    for s, pk in enumerate(seed_ids):
        item_format, correct_options, correct_answer = keys[pk]
        if item_format == formats.TRUE_FALSE:
            accepted[s, int(bool(correct_answer))] = True
        else:
            for letter in correct_options:
                accepted[s, formats.LETTERS.index(letter)] = True
    seed_correct = accepted[np.arange(n_seeds), np.maximum(seed_codes, 0)] & (
        seed_codes >= 0
    )

    sectors = sorted({sector or NO_SECTOR for *_, sector, _ in links})
    seed_index = {pk: s for s, pk in enumerate(seed_ids)}
    width = max((len(m) for *_, m in links), default=0)
    option_map = np.full((len(links), max(width, 1)), -1, dtype=np.int64)
    for v, (*_, option_list) in enumerate(links):
        option_map[v, : len(option_list)] = option_list
    design = Variants(
        seed=np.array([seed_index[seed] for _, seed, *_ in links]),
        relation=np.array([RELATION_NAMES.index(rel) for _, _, rel, *_ in links]),
        sector=np.array([sectors.index(sec or NO_SECTOR) for *_, sec, _ in links]),
        change=np.array([int(RELATIONS[rel].change) for _, _, rel, *_ in links]),
        option_map=option_map,
    )
    result = robustness(
        seed_codes,
        seed_correct,
        variant_codes,
        design,
        relations=RELATION_NAMES,
        sectors=sectors,
    )
    report = Report(language, runs, n_seeds, len(links), int((~present).sum()), result)
    report.tables = _tables(report)
    return report


# What a stored grade's reading (AnswerGrade.extracted) is as an answer code; a
# reading of several answers ("A, C") is none.
_READ_CODES = {
    **{letter: index for index, letter in enumerate(formats.LETTERS)},
    "true": 1,
    "false": 0,
}
# The code of a reply without a usable grade: read by the rules here.
_TO_READ = -9


def answers(
    language: str,
    runs: list[EvaluationRun],
    item_ids: np.ndarray,
    n_options: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The answer code of each run's reply to each item (runs × items), and
    whether it has one; over a run's k trials, their majority (`majority`: a tie
    is no single answer). A reply the provider refused is PROVIDER_REFUSED.

    A reply graded when it arrived (a binary run) is read from its AnswerGrade;
    the others — imported or simulated runs, runs on a 0–3 benchmark, runs from
    before grading — by the rules here. So is a graded reply whose grade cannot
    be the report's reading: one not answered (its grade says "no answer" without
    reading the text) or asked in another rendering than the current
    one in `language` (whose option count the report reads with)."""
    usable = Case(
        When(
            Q(
                grade__isnull=False,
                status=Response.Status.ANSWERED,
                rendering__item=F("item"),
                rendering__is_current=True,
                rendering__language=language,
            ),
            then=Value(True),
        ),
        default=Value(False),
    )
    read = Case(
        *(
            When(grade__extracted=text, then=Value(code))
            for text, code in _READ_CODES.items()
        ),
        default=Value(UNREADABLE),
    )
    code = Case(
        When(status=Response.Status.REFUSED, then=Value(PROVIDER_REFUSED)),
        When(usable=False, then=Value(_TO_READ)),
        When(grade__grade__lte=Grade.CORRECT, then=read),
        When(grade__grade=Grade.REFUSAL, then=Value(REFUSED)),
        default=Value(UNREADABLE),
    )
    replies = Response.objects.filter(run__in=runs).annotate(usable=usable)
    numbers = (
        replies.annotate(code=code)
        .order_by("run_id", "item_id", "trial")
        .values_list("pk", "run_id", "item_id", "code")
    )
    ids, run_id, item_id, codes_read = _copy_numbers(numbers, 4)

    shape = (len(runs), len(item_ids))
    codes = np.full(shape, UNREADABLE, dtype=np.int64)
    present = np.zeros(shape, dtype=bool)
    if not len(ids):
        return codes, present
    order = np.argsort(item_ids)
    found = np.minimum(
        np.searchsorted(item_ids, item_id, sorter=order), len(item_ids) - 1
    )
    column = order[found]
    run_pks = np.array([run.pk for run in runs])
    run_order = np.argsort(run_pks)
    row = run_order[np.searchsorted(run_pks, run_id, sorter=run_order)]
    # Replies to items that are neither seeds nor variants are left out.
    keep = np.flatnonzero(item_ids[column] == item_id)
    cell = (row * len(item_ids) + column)[keep]
    codes_read = codes_read[keep]
    again = np.flatnonzero(codes_read == _TO_READ)
    if len(again):
        texts = dict(replies.filter(usable=False).values_list("pk", "text"))
        extracted = extract_all(
            [texts[pk] for pk in ids[keep][again].tolist()],
            n_options[column[keep][again]],
        )
        codes_read[again] = answer_codes(extracted)
    cells, voted = majority(cell, codes_read)
    present.ravel()[cells] = True
    codes.ravel()[cells] = voted
    return codes, present


class JsonArrayLength(Func):
    """The length of a JSON array column, on PostgreSQL and on SQLite."""

    function = "jsonb_array_length"
    output_field = IntegerField()

    def as_sqlite(self, compiler, connection, **extra):
        return super().as_sql(
            compiler, connection, function="json_array_length", **extra
        )


def _copy_numbers(query, width: int) -> list[np.ndarray]:
    """The columns of a query of whole numbers (no NULL), by COPY: at the study's
    scale a cursor's rows as Python tuples cost more than the query. Databases
    without COPY (the SQLite demo) read the rows."""
    if connection.vendor != "postgresql":
        rows = np.array(list(query), dtype=np.int64).reshape(-1, width)
        return list(rows.T)
    sql, params = query.query.sql_with_params()
    data = bytearray()
    with connection.cursor() as cursor:
        with cursor.copy(f"COPY ({sql}) TO STDOUT", params) as copy:
            for block in copy:
                data += block
    flat = np.fromstring(data.decode(), dtype=np.int64, sep=" ")
    return list(flat.reshape(-1, width).T)


def _tables(report: Report) -> dict[str, Table]:
    result, labels = report.result, report.labels
    pooled = result.pooled
    notes = [
        Note(
            gettext_noop("%(seeds)s seeds, %(variants)s variants."),
            seeds=report.seeds,
            variants=report.variants,
        ),
        footnote("robustness"),
        footnote("correct-robustness"),
        Note(
            gettext_noop(
                "A seed's variant agrees when its answer equals the seed's after the "
                "relation's expected change. Refused replies, replies with no single "
                "answer and provider refusals are excluded and counted."
            )
        ),
        footnote("provider-refusal"),
        footnote("majority-trials"),
        Note(
            gettext_noop(
                "Mean per seed: Assay's earlier figure (each seed's share of agreeing "
                "variants, averaged over seeds); not the study's definition, shown "
                "for comparison only."
            )
        ),
    ]
    if report.missing:
        notes.append(
            Note(
                gettext_noop(
                    "%(missing)s replies are missing (run × item without a response) "
                    "and count as having no single answer."
                ),
                missing=report.missing,
            )
        )
    summary = Table(
        slug="robustness",
        title=gettext_noop("Robustness per model (Table 4)"),
        columns=[
            Column("model", gettext_noop("Model")),
            Column("correct", gettext_noop("Correct robustness"), "num"),
            Column("correct_variants", gettext_noop("Variants (right seeds)"), "int"),
            Column("correct_seeds", gettext_noop("Seeds right"), "int"),
            Column("incorrect", gettext_noop("Incorrect robustness"), "num"),
            Column("incorrect_variants", gettext_noop("Variants (wrong seeds)"), "int"),
            Column("incorrect_seeds", gettext_noop("Seeds wrong"), "int"),
            Column("refused_seeds", gettext_noop("Refused seeds"), "int"),
            Column("refused_variants", gettext_noop("Refused variants"), "int"),
            Column(
                "unreadable_seeds", gettext_noop("Seeds without a single answer"), "int"
            ),
            Column(
                "unreadable_variants",
                gettext_noop("Variants without a single answer"),
                "int",
            ),
            Column(
                "provider_refused_seeds", gettext_noop("Provider-refused seeds"), "int"
            ),
            Column(
                "provider_refused_variants",
                gettext_noop("Provider-refused variants"),
                "int",
            ),
            Column(
                "correct_seed_mean",
                gettext_noop("Correct, mean per seed (earlier)"),
                "num",
            ),
            Column(
                "incorrect_seed_mean",
                gettext_noop("Incorrect, mean per seed (earlier)"),
                "num",
            ),
        ],
        rows=[
            [
                label,
                float(pooled.correct[m, 0]),
                int(pooled.correct_variants[m, 0]),
                int(pooled.correct_seeds[m, 0]),
                float(pooled.incorrect[m, 0]),
                int(pooled.incorrect_variants[m, 0]),
                int(pooled.incorrect_seeds[m, 0]),
                int(pooled.refused_seeds[m, 0]),
                int(pooled.refused_variants[m, 0]),
                int(pooled.unreadable_seeds[m, 0]),
                int(pooled.unreadable_variants[m, 0]),
                int(pooled.provider_refused_seeds[m, 0]),
                int(pooled.provider_refused_variants[m, 0]),
                float(pooled.correct_seed_mean[m, 0]),
                float(pooled.incorrect_seed_mean[m, 0]),
            ]
            for m, label in enumerate(labels)
        ],
        notes=notes,
    )
    tables = {"robustness": summary}
    relations, sectors = result.by_relation.groups, result.by_sector.groups
    published = (
        (
            "correct-by-relation",
            gettext_noop("Correct robustness per relation (Table 6)"),
            relations,
            result.relation_score,
            result.by_relation.correct_variants,
            footnote("relation-robustness"),
        ),
        (
            "correct-by-sector",
            gettext_noop("Correct robustness per sector (Figure 3)"),
            sectors,
            result.sector_score,
            result.by_sector.correct_variants,
            footnote("sector-robustness"),
        ),
    )
    for slug, title, groups, values, support, note in published:
        tables[slug] = _group_table(
            slug, title, labels, groups, values, support, [note]
        )
    for grouping, table in (
        ("relation", result.by_relation),
        ("sector", result.by_sector),
    ):
        slug = f"incorrect-by-{grouping}"
        tables[slug] = _group_table(
            slug,
            INCORRECT_TITLES[grouping],
            labels,
            table.groups,
            table.incorrect,
            table.incorrect_variants,
            [
                INCORRECT_NOTES[grouping],
                footnote("robustness"),
            ],
        )
    tables["variant-counts"] = _variant_counts_table(result, relations, sectors)
    return tables


def _group_table(slug, title, labels, groups, values, support, notes) -> Table:
    return Table(
        slug=slug,
        title=title,
        columns=[
            Column("model", gettext_noop("Model")),
            *(Column(group, group, "num") for group in groups),
        ],
        rows=[
            [label, *(float(v) for v in values[m])] for m, label in enumerate(labels)
        ],
        notes=[
            *notes,
            Note(gettext_noop("Cells without a compared variant are empty (–).")),
        ],
        support=support.tolist(),
        row_keys=labels,
        column_keys=list(groups),
    )


def _variant_counts_table(result: Robustness, relations, sectors) -> Table:
    counts = result.variant_counts  # sectors × relations
    used = [r for r in range(len(relations)) if counts[:, r].any()]
    return Table(
        slug="variant-counts",
        title=gettext_noop("Variants per sector and relation (Table 3)"),
        columns=[
            Column("sector", gettext_noop("Sector")),
            *(Column(relations[r], relations[r], "int") for r in used),
            Column("total", gettext_noop("Variants"), "int"),
        ],
        rows=[
            [sector, *(int(counts[s, r]) for r in used), int(counts[s].sum())]
            for s, sector in enumerate(sectors)
        ]
        + [["All", *(int(counts[:, r].sum()) for r in used), int(counts.sum())]],
        notes=[footnote("variant-counts")],
    )
