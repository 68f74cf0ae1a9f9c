"""Every table and figure of the IndustryBench paper that Assay computes, from the
database, with a manifest saying what each was computed on.

Tables come from the builders the report pages use (`annotation.agreement.loading` for
the agreement tables, `judging.leaderboard.building` for the leaderboard family), so
the files are the numbers on screen. The paper's numbering is mapped here once
(`TABLES`). On a benchmark on the binary scale the tables and figures defined on
the 0–3 rubric and the SV rule are listed in the manifest as not generated, with
the reason, never written empty; a table the data leave empty (one judge where
judges are compared) is written with a note saying why.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field, replace

import numpy as np
from django.conf import settings as django_settings
from django.db.models import Count
from django.utils import timezone
from django.utils.translation import gettext_noop
from threadpoolctl import threadpool_limits

from annotation.agreement import tables as reports
from annotation.agreement.loading import build_report as build_agreement_report
from annotation.paper import figures
from benchmark.english import english
from benchmark.models import Benchmark, FinalLabel, Item, Label
from benchmark.notes import Note, noop
from construction.report import funnel_report
from judging.evaluation.models import EvaluationRun
from judging.evaluation.pipeline import prompt_version
from judging.evaluation.scores import run_label
from judging.leaderboard import building, diagnostics
from judging.llm.prompts import JUDGE_SETS, newest_templates
from judging.llm.prompts import PRESETS as PROMPT_PRESETS
from judging.reporting import scoring
from judging.reporting.figures import render
from judging.reporting.tables import Column, Table, latex_file
from judging.translation.models import TranslationRun

# --preset: the choices a paper fixes. IndustryBench headlines linear κw (Table 6's
# 0.798) and compares its top nine models pairwise (Table 19).
PRESETS = {
    "industrybench": {"kappa_weights": "linear", "pairs_top": 9},
}


@dataclass(frozen=True)
class PaperTable:
    """One table of the paper and where its numbers come from. Sources:
    "agreement" (an annotation report's table), "evaluation" (a leaderboard
    report table), "composition" (what the benchmark is made of)."""

    number: int
    source: str
    report: str  # the agreement report, or the evaluation / composition table
    slug: str | None = None  # the agreement report's table
    part: str = ""  # a second table under the same number

    @property
    def name(self) -> str:
        return f"Table {self.number}" + (f" ({self.part})" if self.part else "")


TABLES = (
    PaperTable(3, "agreement", "consensus", "outcomes"),
    PaperTable(4, "agreement", "sv-validation", "confusion"),
    PaperTable(5, "agreement", "cross-judge", "models"),
    PaperTable(6, "agreement", "calibration", "agreement"),
    PaperTable(6, "agreement", "calibration", "confusion", "confusion matrix"),
    PaperTable(7, "evaluation", "leaderboard"),
    PaperTable(8, "evaluation", "mode"),
    PaperTable(9, "evaluation", "difficulty"),
    PaperTable(10, "evaluation", "multilingual"),
    PaperTable(11, "evaluation", "sv_impact"),
    PaperTable(12, "composition", "difficulty"),
    PaperTable(13, "composition", "capability"),
    PaperTable(14, "composition", "industry"),
    PaperTable(15, "agreement", "judge-pairs", "per_model"),
    PaperTable(16, "agreement", "calibration", "distributions"),
    PaperTable(17, "evaluation", "capability"),
    PaperTable(18, "evaluation", "ci"),
    PaperTable(19, "evaluation", "pairs"),
    PaperTable(20, "evaluation", "industry"),
)
# On the binary scale there is no 0–3 rubric score and no SV rule: the tables and
# figures built on them do not apply (the label and composition ones do).
RUBRIC_REPORTS = {"cross-judge", "judge-pairs", "calibration", "sv-validation"}
NOT_ON_BINARY = (
    "the benchmark is on the binary scale (each answer right or wrong): this is "
    "defined on the 0–3 rubric and the safety-violation rule; its accuracy tables "
    "are on the leaderboard page"
)
FIGURES = {
    1: "top-10 models by Final (SV) with 95% CI",
    2: "composition: capability, industry, difficulty, source",
    3: "the construction funnel: candidates in and out of each stage, by source",
    4: "raw 2–3 answers zeroed by SV, thinking vs non-thinking",
    5: "Final (SV) by capability (Table 17)",
    6: "Final (SV) by industry (Table 20)",
}
RUBRIC_FIGURES = (1, 4, 5, 6)
NO_FUNNEL = (
    "the benchmark has no construction ledger (it was not built from sources here)"
)


def applies(entry: PaperTable, binary: bool) -> bool:
    """Whether the paper's table has a meaning on the benchmark's scale."""
    if not binary:
        return True
    return entry.source == "composition" or (
        entry.source == "agreement" and entry.report not in RUBRIC_REPORTS
    )


@dataclass
class Composition:
    """What the benchmark is made of: Tables 13/14 and Figure 2's counts."""

    tables: dict[str, Table]  # capability, industry, difficulty
    difficulty: dict[str, int]
    sources: dict[str, int]


@dataclass
class PaperSet:
    """File name -> bytes, and the manifest describing them."""

    files: dict[str, bytes] = field(default_factory=dict)
    manifest: dict = field(default_factory=dict)

    def archive(self) -> bytes:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, content in sorted(self.files.items()):
                archive.writestr(name, content)
        return buffer.getvalue()


# Tables 17 and 20 (and Figures 5/6) may show a chosen subset of the models.
SLICE_TABLES = ("capability", "industry")


def paper_set(
    benchmark: Benchmark,
    *,
    preset: str | None = None,
    language: str | None = None,
    slice_models: list[str] | None = None,
) -> PaperSet:
    """Every table (CSV, LaTeX) and figure (SVG, PNG) with a manifest.
    `slice_models`: the models Tables 17/20 and Figures 5/6 show (default: all)."""
    options = PRESETS[preset] if preset else {}
    weights = options.get("kappa_weights", benchmark.kappa_weights)
    agreement_settings = reports.Settings(
        headline=weights, n_resamples=django_settings.AGREEMENT_BOOTSTRAP_RESAMPLES
    )
    pairs_top = options.get("pairs_top", diagnostics.PAIRS_TOP_K)
    evaluation = building.build_report(
        benchmark, language=language, pairs_top=pairs_top
    )
    binary = evaluation.binary
    if not binary:
        evaluation.tables["sv_impact"] = diagnostics.sv_impact_table(evaluation)
    if slice_models and not binary:
        for slug in SLICE_TABLES:
            evaluation.tables[slug] = models_subset(
                evaluation.tables[slug], evaluation.runs, set(slice_models)
            )
    wanted = [entry for entry in TABLES if applies(entry, binary)]
    agreement = {}
    with threadpool_limits(limits=1, user_api="blas"):
        for name in {e.report for e in wanted if e.source == "agreement"}:
            agreement[name] = build_agreement_report(
                benchmark, name, agreement_settings
            )
    composition = composition_of(benchmark, evaluation)

    out = PaperSet()
    entries = {}
    for entry in wanted:
        if entry.source == "agreement":
            report = agreement[entry.report]
            table = report.table(entry.slug)
            table = replace(table, notes=[*table.notes, *report.footnotes])
        elif entry.source == "evaluation":
            table = evaluation.tables[entry.report]
        else:
            table = composition.tables[entry.report]
        stem = f"tables/table{entry.number:02d}_{table.slug}"
        out.files[f"{stem}.csv"] = table.to_csv().encode("utf-8-sig")
        out.files[f"{stem}.tex"] = latex_file(table.latex_body()).encode("utf-8")
        entries[entry.name] = {
            "title": table.title,
            "files": [f"{stem}.csv", f"{stem}.tex"],
            "rows": len(table.rows),
            "source": f"{entry.source}: {entry.report}"
            + (f" / {entry.slug}" if entry.slug else ""),
            "notes": table.notes,
        }
    figure_files = _figures(evaluation, composition)
    funnel = funnel_report(benchmark.pk)
    if any(row.ran for row in funnel.overall):
        figure_files[3] = render(funnel.figure())
    for number, rendered in figure_files.items():
        for fmt, content in rendered.items():
            out.files[f"figures/figure{number}.{fmt}"] = content
    figures_skipped = {n: NO_FUNNEL for n in (3,) if n not in figure_files}
    if binary:
        figures_skipped.update({n: NOT_ON_BINARY for n in RUBRIC_FIGURES})
    out.manifest = {
        "benchmark": {"slug": benchmark.slug, "name": str(benchmark)},
        "generated_at": timezone.now().isoformat(timespec="seconds"),
        "preset": preset or "",
        "language": evaluation.language,
        "kappa_weights": weights,
        "pairs_top": pairs_top,
        "slice_models": sorted(slice_models or []),
        "bootstrap": {
            "leaderboard_resamples": diagnostics.BOOTSTRAP_RESAMPLES,
            "leaderboard_seed": diagnostics.BOOTSTRAP_SEED,
            "common_items": evaluation.bootstrap_items,
            "agreement_resamples": agreement_settings.n_resamples,
        },
        "runs": runs_manifest(evaluation),
        "prompts": prompts_manifest(benchmark, preset),
        "missing_data": (
            "Pending items (a judge or SV verdict missing) are left out of each run's "
            "metrics and counted; empty or invalid answers score 0; a failed SV check "
            "never counts as no violation. Agreement tables: see each table's notes."
        ),
        "scale": "binary" if binary else "rubric_0_3",
        "tables": entries,
        "tables_not_generated": {
            entry.name: NOT_ON_BINARY for entry in TABLES if entry not in wanted
        },
        "figures": {
            f"Figure {n}": {
                "what": FIGURES[n],
                "files": [f"figures/figure{n}.svg", f"figures/figure{n}.png"],
            }
            for n in sorted(figure_files)
        },
        "figures_not_generated": {
            f"Figure {n}": why for n, why in sorted(figures_skipped.items())
        },
    }
    out.files["manifest.json"] = json.dumps(
        out.manifest, ensure_ascii=False, indent=2
    ).encode("utf-8")
    return out


def runs_manifest(evaluation) -> list[dict]:
    """Each run the tables read: what it asked and judged with, and how many of
    its items were scored (on the binary scale: its trials; the accuracy table
    counts its answers)."""
    runs = []
    for i, run in enumerate(evaluation.runs):
        entry = {
            "id": run.pk,
            "label": run_label(run),
            "model": run.model_name,
            "language": run.language,
            "thinking": run.thinking,
            "answer_prompt_version": prompt_version(run.answer_template),
            "judge": run.judge_name,
            "judge_prompt_version": run.judge_prompt_version,
            "judge_set": run.judge_set,
            "sv_judge": run.sv_judge_name,
            "sv_prompt_version": run.sv_prompt_version,
        }
        if evaluation.binary:
            entry["trials"] = run.trials
        else:
            metrics = evaluation.metrics[i]
            entry["items_scored"] = metrics.n_scored
            entry["pending"] = metrics.n_pending
            entry["waived"] = metrics.n_waived
        runs.append(entry)
    return runs


def models_subset(table: Table, runs, models: set[str]) -> Table:
    """A slice table with only the runs of `models` and its "Mean over models" row
    recomputed over them."""
    model_of = {run.pk: run.model_name for run in runs}
    keep = [
        r
        for r, key in enumerate(table.row_keys)
        if key is not None and model_of.get(key) in models
    ]
    rows = [table.rows[r] for r in keep]
    support = [table.support[r] for r in keep]
    row_keys = [table.row_keys[r] for r in keep]
    notes = [n for n in table.notes if not n.startswith("Mean over models")]
    if len(rows) > 1:
        mean = scoring.column_means([row[1:] for row in rows])
        rows.append(["Mean over models", *mean.tolist()])
        support.append(table.support[-1])
        row_keys.append(None)
        notes.append(
            Note(
                gettext_noop(
                    "Mean over models: the mean of the model rows in each column."
                )
            )
        )
    shown = ", ".join(sorted(models))
    notes.append(Note(gettext_noop("Models shown: %(models)s."), models=shown))
    return replace(table, rows=rows, support=support, row_keys=row_keys, notes=notes)


def composition_of(benchmark: Benchmark, evaluation=None) -> Composition:
    """Tables 13/14: items per capability and per industry label, with the share
    and the GB/T-standard vs product-record split of each; Table 12: items per
    difficulty tercile (`evaluation`'s panel-derived terciles when no item has a
    stored difficulty)."""
    items = Item.objects.filter(benchmark=benchmark)
    total = items.count()
    kinds = dict(items.order_by().values_list("source_kind").annotate(n=Count("id")))
    tables = {}
    for code in ("capability", "industry"):
        counts: dict[int, dict[str, int]] = {}
        for label_id, kind, n in (
            FinalLabel.objects.filter(item__benchmark=benchmark, dimension__code=code)
            .order_by()
            .values_list("label_id", "item__source_kind")
            .annotate(n=Count("id"))
        ):
            counts.setdefault(label_id, {})[kind] = n
        labels = Label.objects.filter(
            dimension__benchmark=benchmark, dimension__code=code
        ).order_by("position", "code")
        rows = []
        for label in labels:
            by_kind = counts.get(label.pk, {})
            n = sum(by_kind.values())
            rows.append(
                [
                    label.name,
                    n,
                    n / total if total else None,
                    by_kind.get(Item.SourceKind.STANDARD, 0),
                    by_kind.get(Item.SourceKind.PRODUCT, 0),
                ]
            )
        labelled = sum(row[1] for row in rows)
        tables[code] = Table(
            slug=f"{code}_composition",
            title=f"Items per {code} label",
            columns=[
                Column("label", code.capitalize()),
                Column("n", "Items", "int"),
                Column("share", "Share", "rate"),
                Column("standard", "GB/T standard", "int"),
                Column("product", "Product record", "int"),
            ],
            rows=rows,
            notes=[
                Note(
                    noop.ngettext(
                        "%(count)s item; %(labelled)s with a final %(code)s label. "
                        "Source kinds over all items: %(kinds)s.",
                        "%(count)s items; %(labelled)s with a final %(code)s label. "
                        "Source kinds over all items: %(kinds)s.",
                    ),
                    count=total,
                    labelled=labelled,
                    code=code,
                    kinds=", ".join(
                        f"{english(Item.SourceKind(kind).label)} {n}"
                        for kind, n in sorted(kinds.items())
                    ),
                )
            ],
        )
    difficulty = dict(
        items.order_by().values_list("difficulty").annotate(n=Count("id"))
    )
    tables["difficulty"] = difficulty_table(difficulty, total, evaluation)
    return Composition(
        tables=tables,
        difficulty={name: difficulty.get(name, 0) for name in scoring.TERCILE_NAMES},
        sources={
            english(Item.SourceKind(kind).label): n for kind, n in sorted(kinds.items())
        },
    )


def difficulty_table(stored: dict[str, int], total: int, evaluation=None) -> Table:
    """Table 12: items per difficulty tercile, their share and the total.

    `stored`: items per stored difficulty ("" for none). Stored difficulty is the
    benchmark's own (IndustryBench sorts items by a panel's mean score and cuts
    terciles once); when no item has one, the leaderboard's terciles derived from
    the runs shown are counted instead, over the items they scored, and said so.
    Items without a difficulty get their own row, so the shares add up to 100%."""
    counts = [stored.get(name, 0) for name in scoring.TERCILE_NAMES]
    unassigned = total - sum(counts)
    if sum(counts):
        source = "the items' stored difficulty"
    elif evaluation is not None and sum(evaluation.difficulty_sizes):
        counts = list(evaluation.difficulty_sizes)
        unassigned, total = 0, sum(counts)
        source = (
            "panel-derived from the runs shown, over the items they scored (no "
            "item has a stored difficulty)"
        )
    else:
        source = "no item has a difficulty and no run scored items to derive one"
    rows = [
        [name.capitalize(), n, n / total if total else None]
        for name, n in zip(scoring.TERCILE_NAMES, counts, strict=True)
    ]
    if unassigned:
        rows.append(["No difficulty", unassigned, unassigned / total])
    rows.append(["Total", total, 1.0 if total else None])
    return Table(
        slug="difficulty_composition",
        title="Items per difficulty tercile",
        columns=[
            Column("difficulty", "Difficulty"),
            Column("n", "Count", "int"),
            Column("share", "Share", "rate"),
        ],
        rows=rows,
        notes=[
            Note(
                noop.ngettext(
                    "Difficulty: %(source)s. Share: of the %(count)s item counted.",
                    "Difficulty: %(source)s. Share: of the %(count)s items counted.",
                ),
                source=source,
                count=total,
            )
        ],
    )


def _figures(evaluation, composition: Composition) -> dict[int, dict[str, bytes]]:
    """The figures that apply: on the binary scale only the composition."""
    out = {}
    leaderboard = evaluation.tables["leaderboard"]
    keys = [c.key for c in leaderboard.columns]
    rows = [] if evaluation.binary else leaderboard.rows
    if rows:
        out[1] = render(
            figures.top_models(
                [row[keys.index("model")] for row in rows],
                [row[keys.index("final")] for row in rows],
                [row[keys.index("ci")] for row in rows],
            )
        )
    panels = []
    for code in ("capability", "industry"):
        table = composition.tables[code]
        panels.append(
            (code.capitalize(), [r[0] for r in table.rows], [r[1] for r in table.rows])
        )
    difficulty = composition.difficulty
    panels.append(
        ("Difficulty", [k.capitalize() for k in difficulty], list(difficulty.values()))
    )
    sources = composition.sources
    panels.append(("Source", list(sources), list(sources.values())))
    out[2] = render(figures.composition(panels))
    if evaluation.binary:
        return out
    zeroed = evaluation.tables["sv_zeroed"]
    if zeroed.rows:
        out[4] = render(
            figures.sv_zeroed(
                [row[0] for row in zeroed.rows],
                [row[1] for row in zeroed.rows],
                [row[2] for row in zeroed.rows],
            )
        )
    for number, slug in ((5, "capability"), (6, "industry")):
        table = evaluation.tables[slug]
        if table.rows and len(table.columns) > 1:
            out[number] = render(
                figures.heatmap(
                    table.title,
                    [row[0] for row in table.rows],
                    [c.label.removesuffix(" †") for c in table.columns[1:]],
                    np.array([row[1:] for row in table.rows], dtype=float),
                    [c.label.endswith(" †") for c in table.columns[1:]],
                )
            )
    return out


def prompts_manifest(benchmark: Benchmark, preset: str | None) -> dict:
    """The prompt versions behind the benchmark's results, per language: its runs'
    answer, judge and SV prompts (every language, cancelled runs left out) and its
    translation runs' translation and faithfulness prompts per target language.
    With a preset, also what the preset prescribes (newest installed versions)."""
    by_language = {
        code: {
            role: set()
            for role in ("answer", "judge", "sv", "translation", "faithfulness")
        }
        for code in benchmark.languages
    }
    runs = (
        EvaluationRun.objects.filter(benchmark=benchmark)
        .exclude(status=EvaluationRun.Status.CANCELLED)
        .select_related("answer_template")
    )
    for run in runs:
        roles = by_language.setdefault(run.language, {})
        for role, version in (
            ("answer", prompt_version(run.answer_template)),
            ("judge", run.judge_prompt_version),
            ("sv", run.sv_prompt_version),
        ):
            if version:
                roles.setdefault(role, set()).add(version)
    translations = (
        TranslationRun.objects.filter(benchmark=benchmark)
        .exclude(status=TranslationRun.Status.CANCELLED)
        .select_related("translation_template", "review_template")
    )
    for run in translations:
        for code in run.languages:
            roles = by_language.setdefault(code, {})
            roles.setdefault("translation", set()).add(
                prompt_version(run.translation_template)
            )
            roles.setdefault("faithfulness", set()).add(
                prompt_version(run.review_template)
            )
    manifest = {
        "used_by_language": {
            code: {role: sorted(versions) for role, versions in roles.items()}
            for code, roles in by_language.items()
        }
    }
    if preset in PROMPT_PRESETS:
        manifest["preset"] = _preset_prompts(PROMPT_PRESETS[preset], benchmark)
    return manifest


def _preset_prompts(preset, benchmark: Benchmark) -> dict:
    """{language: {role: "name vN"}}: the prompts the preset prescribes for each
    of the benchmark's languages (translation and faithfulness for its target
    languages), read without installing anything."""
    judge_set = JUDGE_SETS[preset.judge_set]
    names = judge_set.template_names()
    newest = newest_templates(
        [preset.answer, preset.sv, preset.translation, preset.faithfulness]
        + list(names.values()),
        install=False,
    )

    def version(name: str) -> str:
        return prompt_version(newest.get(name)) or f"{name} (not installed)"

    prescribed = {}
    for code in benchmark.languages:
        prompts = {
            "answer": version(preset.answer),
            "judge": version(names.get(code, judge_set.otherwise)),
            "sv": version(preset.sv),
        }
        if code != benchmark.source_language:
            prompts["translation"] = version(preset.translation)
            prompts["faithfulness"] = version(preset.faithfulness)
        prescribed[code] = prompts
    return {"name": preset.name, "judge_set": judge_set.name, "by_language": prescribed}
