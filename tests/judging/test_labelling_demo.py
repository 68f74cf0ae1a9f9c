"""The simulated demo labelling run: Table 3-like outcomes, none-outcomes for the
adjudication queue, imported labels untouched, idempotent."""

import numpy as np

from benchmark.actions import do_set_final_label
from benchmark.models import FinalLabel, Label
from judging.labelling import demo
from judging.labelling.models import AnnotatorLabel, LabelConsensus, LabellingRun
from judging.labelling.report import consensus_report
from judging.labelling.runs import label_matrices
from tests.judging.labelling_fixtures import add_items


def test_demo_run_has_realistic_consensus_and_keeps_imported_labels(benchmark):
    items = add_items(benchmark, [f"D-{n:03d}" for n in range(60)])
    rng = np.random.default_rng(1)
    for dimension in benchmark.dimensions.all():
        labels = list(Label.objects.filter(dimension=dimension))
        for item in items:
            label = labels[rng.integers(len(labels))]
            do_set_final_label(item, label, provenance=FinalLabel.Provenance.IMPORTED)
    before = set(FinalLabel.objects.values_list("item_id", "label_id", "provenance"))

    run = demo.seed(benchmark)
    assert demo.seed(benchmark) is None  # idempotent

    assert run.origin == LabellingRun.Origin.SIMULATED
    assert run.status == LabellingRun.Status.COMPLETE
    assert AnnotatorLabel.objects.filter(run=run).count() == 60 * 3 * 2
    assert set(FinalLabel.objects.values_list("item_id", "label_id", "provenance")) == (
        before
    )
    report = consensus_report(*reversed(label_matrices(run)))
    by_code = {d["code"]: d for d in report["dimensions"]}
    assert (by_code["industry"]["full"], by_code["industry"]["majority"]) == (42, 16)
    assert (by_code["capability"]["full"], by_code["capability"]["majority"]) == (
        39,
        19,
    )
    for dimension in ("industry", "capability"):
        nones = LabelConsensus.objects.filter(
            run=run, dimension__code=dimension, outcome="none"
        )
        assert nones.count() >= 2
        assert all(len(row.candidates()) == 3 for row in nones)
    # Where the annotators agree, they agree on the imported label.
    agreed = LabelConsensus.objects.filter(run=run).exclude(outcome="none")
    finals = {(f.item_id, f.dimension_id): f.label_id for f in FinalLabel.objects.all()}
    assert all(
        row.label_id == finals[(row.item_id, row.dimension_id)] for row in agreed
    )
