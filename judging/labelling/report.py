"""The consensus report of a labelling run (IndustryBench Table 3), as pure functions.

Input per dimension: an ``units × annotators`` object array of label codes (None where
an annotator gave no usable label). The agreement statistics come from
judging.reporting.agreement; the consensus classes from judging.reporting.consensus.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from benchmark.csv_writer import csv_text
from judging.reporting import consensus as consensus_math
from judging.reporting.agreement import (
    cohen_kappa,
    confusion_matrix,
    fleiss_kappa,
    krippendorff_alpha,
)


@dataclass(frozen=True)
class DimensionLabels:
    code: str
    name: str
    label_codes: list[str]
    matrix: np.ndarray  # units × annotators, label code or None


def _codes(matrix: np.ndarray, label_codes: list[str]) -> np.ndarray:
    index = {code: position for position, code in enumerate(label_codes)}
    flat = [index.get(value, consensus_math.MISSING) for value in matrix.ravel()]
    return np.array(flat, dtype=np.int64).reshape(matrix.shape)


def _clean(value: float) -> float | None:
    return None if math.isnan(value) else round(float(value), 4)


def dimension_report(dimension: DimensionLabels, annotators: list[str]) -> dict:
    """Outcome counts and shares, pairwise Cohen's κ, Fleiss' κ, Krippendorff's α.

    Cohen's κ uses the items both annotators labelled; Fleiss' κ the items every
    annotator labelled; Krippendorff's α all labels (it handles missing values).
    """
    matrix = dimension.matrix
    labels = dimension.label_codes
    units = matrix.shape[0]
    present = np.not_equal(matrix, None)
    outcome, _, _ = consensus_math.consensus(_codes(matrix, labels))
    counts = consensus_math.outcome_counts(outcome)
    report = {"code": dimension.code, "name": dimension.name, "units": units}
    report.update(counts)
    for name, count in counts.items():
        report[f"{name}_pct"] = round(100 * count / units, 1) if units else None
    report["pairwise"] = [
        {
            "a": a,
            "b": b,
            "n": int((present[:, i] & present[:, j]).sum()),
            "cohen_kappa": _clean(
                cohen_kappa(matrix[:, i], matrix[:, j], labels=labels)
            )
            if units
            else None,
        }
        for (i, a), (j, b) in combinations(enumerate(annotators), 2)
    ]
    complete = present.all(axis=1)
    report["fleiss_units"] = int(complete.sum())
    report["fleiss_kappa"] = (
        _clean(fleiss_kappa(matrix[complete], labels=labels))
        if complete.any()
        else None
    )
    report["krippendorff_alpha"] = (
        _clean(krippendorff_alpha(matrix.T, level="nominal", labels=labels))
        if units
        else None
    )
    return report


def consensus_report(dimensions: list[DimensionLabels], annotators: list[str]) -> dict:
    """Per dimension (`dimension_report`), and the items with no majority in at
    least one dimension: the paper's adjudication count (Table 3). Every
    dimension's matrix has the same units in the same order."""
    no_majority = np.zeros(dimensions[0].matrix.shape[0] if dimensions else 0, bool)
    for dimension in dimensions:
        outcome, _, _ = consensus_math.consensus(
            _codes(dimension.matrix, dimension.label_codes)
        )
        no_majority |= outcome == consensus_math.NONE
    units = int(no_majority.size)
    return {
        "annotators": annotators,
        "dimensions": [dimension_report(d, annotators) for d in dimensions],
        "units": units,
        "adjudication": int(no_majority.sum()),
        "adjudication_pct": round(100 * no_majority.mean(), 1) if units else None,
    }


def pair_confusion(dimension: DimensionLabels, i: int, j: int) -> dict:
    """Confusion between annotators i (rows) and j (columns) over the label codes."""
    matrix, labels = confusion_matrix(
        dimension.matrix[:, i], dimension.matrix[:, j], labels=dimension.label_codes
    )
    return {"labels": labels, "counts": matrix.tolist()}


CSV_COLUMNS = [
    "dimension",
    "units",
    "full",
    "full_pct",
    "majority",
    "majority_pct",
    "none",
    "none_pct",
    "fleiss_kappa",
    "krippendorff_alpha",
    "statistic",
    "annotator_a",
    "annotator_b",
    "pairs",
    "cohen_kappa",
]


def report_csv(report: dict) -> str:
    """One row per dimension (Table 3) and one per annotator pair (Cohen's κ)."""
    return csv_text(
        CSV_COLUMNS,
        ([row.get(column, "") for column in CSV_COLUMNS] for row in _csv_rows(report)),
    )


def _csv_rows(report: dict):
    if report["dimensions"]:
        yield {
            "dimension": "any",
            "statistic": "no_majority_in_any_dimension",
            "units": report["units"],
            "none": report["adjudication"],
            "none_pct": report["adjudication_pct"],
        }
    for dimension in report["dimensions"]:
        yield {
            "dimension": dimension["code"],
            "statistic": "consensus",
            **{key: dimension[key] for key in CSV_COLUMNS[1:10] if key in dimension},
        }
        for pair in dimension["pairwise"]:
            yield {
                "dimension": dimension["code"],
                "statistic": "cohen_kappa",
                "annotator_a": pair["a"],
                "annotator_b": pair["b"],
                "pairs": pair["n"],
                "cohen_kappa": pair["cohen_kappa"],
            }
