"""The label-consensus report (Table 3) as a pure table builder: the labelling
run's consensus statistics in, a `Report` out (the judge-reliability reports are in
`tables`, whose `Report` and table helpers it shares)."""

from __future__ import annotations

from django.utils.translation import gettext_noop

from annotation.agreement.tables import Report, table
from benchmark.notes import Note
from judging.reporting.tables import Column


def consensus_report(data: dict) -> Report:
    """Table 3 from `judging.labelling.report.consensus_report`'s result (the
    gateway's consensus statistics, themselves computed with
    `judging.reporting.agreement`): full / majority / none per dimension, Fleiss κ,
    nominal α, pairwise Cohen κ."""
    rows, pair_rows = [], []
    for dim in data["dimensions"]:
        units = dim["units"]
        rows.append(
            {
                "dimension": dim["name"],
                "n": units,
                **{
                    outcome: dim[outcome] / units if units else None
                    for outcome in ("full", "majority", "none")
                },
                "none_n": dim["none"],
                "n_complete": dim["fleiss_units"],
                "fleiss": dim["fleiss_kappa"],
                "alpha": dim["krippendorff_alpha"],
            }
        )
        for pair in dim["pairwise"]:
            pair_rows.append(
                {
                    "dimension": dim["name"],
                    "annotator_a": pair["a"],
                    "annotator_b": pair["b"],
                    "n": pair["n"],
                    "kappa": pair["cohen_kappa"],
                }
            )
    if data["dimensions"]:
        units = data["units"]
        rows.append(
            {
                "dimension": Note(
                    gettext_noop("No majority in at least one dimension")
                ),
                "n": units,
                "none": data["adjudication"] / units if units else None,
                "none_n": data["adjudication"],
            }
        )
    outcome_table = table(
        "outcomes",
        gettext_noop("Three-model label consensus (Table 3)"),
        [
            Column("dimension", gettext_noop("Dimension")),
            Column("n", gettext_noop("Items"), "int"),
            Column("full", gettext_noop("Full (%)"), "rate"),
            Column("majority", gettext_noop("Majority (%)"), "rate"),
            Column("none", gettext_noop("None (%)"), "rate"),
            Column("none_n", gettext_noop("None (items)"), "int"),
            Column("n_complete", gettext_noop("n (all annotators)"), "int"),
            Column("fleiss", gettext_noop("Fleiss κ"), "num"),
            Column("alpha", gettext_noop("Krippendorff α (nominal)"), "num"),
        ],
        rows,
    )
    pair_table = table(
        "pairs",
        gettext_noop("Pairwise agreement between annotators"),
        [
            Column("dimension", gettext_noop("Dimension")),
            Column("annotator_a", gettext_noop("Annotator A")),
            Column("annotator_b", gettext_noop("Annotator B")),
            Column("n", gettext_noop("n"), "int"),
            Column("kappa", gettext_noop("Cohen κ (unweighted)"), "num"),
        ],
        pair_rows,
    )
    footnotes = [
        Note(
            gettext_noop(
                "Items: those the latest labelling run asked its annotators about. The "
                "last row counts the items with no majority in at least one dimension: "
                "the items sent to human adjudication, as a count and a rate (the "
                "paper states it as a count: 150 questions). Full: every annotator "
                "gave the same label; majority: one label from strictly more than half "
                "of the annotators (a failed or unparseable call is no vote); none: "
                "otherwise. Same rule and numbers as `manage.py consensus_report`."
            )
        ),
        Note(
            gettext_noop(
                "Fleiss' κ on items labelled by every annotator (n (all annotators)); "
                "items where an annotator's call failed or was unparseable are left "
                "out of it."
            )
        ),
        Note(
            gettext_noop(
                "Krippendorff's α, nominal level, on all items: missing labels are "
                "allowed; items with a single label hold no pairable values."
            )
        ),
        Note(
            gettext_noop(
                "Cohen's κ unweighted (labels are nominal) per annotator pair, on "
                "items both labelled."
            )
        ),
    ]
    return Report(
        name="consensus",
        title=gettext_noop("Label consensus"),
        tables=[outcome_table, pair_table],
        footnotes=footnotes,
    )
