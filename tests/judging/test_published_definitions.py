"""Each published definition the report pages follow, against a fixture counted by
hand from the paper's own wording (judging.reporting.definitions names them), and
the pages' footnotes that name them."""

from types import SimpleNamespace

import numpy as np
import pytest
from django.urls import reverse
from django.utils.html import escape

from judging.demo import lpfqa as lpfqa_demo
from judging.evaluation.actions import do_derive_subset
from judging.evaluation.extraction import Grade
from judging.evaluation.grades import FORMATS, BinaryMatrix
from judging.evaluation.models import EvaluationRun
from judging.leaderboard.binary_tables import field_accuracy, run_metrics
from judging.reporting.definitions import DEFINITIONS, footnote
from judging.reporting.subsets import field_distribution
from judging.robustness.measures import (
    PROVIDER_REFUSED,
    REFUSED,
    UNREADABLE,
    Change,
    Variants,
    majority,
    robustness,
)

MC = FORMATS.index("multiple_choice")


def binary_matrix(score, grade, refused=None, waived=None, present=None, trials=1):
    """One run's items × trials as a BinaryMatrix."""
    score = np.asarray(score, dtype=float).reshape(1, -1, trials)
    shape = score.shape
    return BinaryMatrix(
        runs=[SimpleNamespace(trials=trials)],
        item_ids=np.arange(shape[1]),
        item_format=np.full(shape[1], MC),
        present=np.ones(shape, bool) if present is None else present.reshape(shape),
        waived=np.zeros(shape, bool) if waived is None else waived.reshape(shape),
        score=score,
        grade=np.asarray(grade, dtype=np.int8).reshape(shape),
        refused=np.zeros(shape, bool) if refused is None else refused.reshape(shape),
    )


def test_accuracy_divides_by_all_tested_questions():
    """Study 002 §2.3: "dividing the answers that are correct by the total number
    of all tested questions". Fourteen MC questions: 6 correct, 2 wrong, one
    naming two options, one the model refused, one empty reply (no answer found),
    one the provider's filter refused — 12 tested — plus one still pending and
    one waived, which are not tested. Accuracy 6 / 12; the earlier figure, over
    the answers with a verdict, 6 / 8."""
    n = np.nan
    c, w = Grade.CORRECT, Grade.WRONG
    score = [1, 1, 1, 1, 1, 1, 0, 0, n, n, n, n, n, n]
    grade = [c] * 6 + [w] * 2 + [Grade.MULTIPLE, Grade.REFUSAL, Grade.NONE, -1, -1, c]
    refused = np.zeros(14, bool)
    refused[11] = True
    waived = np.zeros(14, bool)
    waived[13] = True
    metrics = run_metrics(binary_matrix(score, grade, refused, waived), 0)
    assert metrics.tested == 12
    assert metrics.accuracy == pytest.approx(50.0)
    assert metrics.scored_accuracy == pytest.approx(75.0)
    assert (metrics.flagged, metrics.provider_refused) == (3, 1)
    assert (metrics.pending, metrics.waived) == (1, 1)


def test_accuracy_over_trials_is_the_mean_of_the_trials():
    """LPFQA §4: "All results provided are averaged over three trials". Four
    items, three trials: 2/4, 3/4 (one of them a flagged answer, not correct),
    4/4 right → (50 + 75 + 100) / 3."""
    n = np.nan
    c, w, m = Grade.CORRECT, Grade.WRONG, Grade.MULTIPLE
    score = [[1, 1, 1], [1, 1, 1], [0, 1, 1], [0, n, 1]]
    grade = [[c, c, c], [c, c, c], [w, c, c], [w, m, c]]
    metrics = run_metrics(binary_matrix(score, grade, trials=3), 0)
    assert metrics.accuracy == pytest.approx(75.0)
    assert (metrics.lowest_trial, metrics.highest_trial) == (50.0, 100.0)


def study_design():
    """Two sectors, two relations, five seeds (study 002 §3, §5.2–5.4):

    Power: S0 (right) has 3 synonym variants, all agree, and 1 order variant that
    does not; S1 (right) has 1 synonym variant that does not agree.
    Textile: S2 (right) has 1 synonym variant that agrees, 2 order variants of
    which one agrees, and 1 synonym variant the provider refused; S3 (wrong) has
    2 synonym variants that agree; S4 was refused by the provider, with one
    variant.
    """
    B, A = 1, 0
    seed = [0, 0, 0, 0, 1, 2, 2, 2, 2, 3, 3, 4]
    relation = [0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0]
    sector = [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1]
    change = [Change.REMAP if r else Change.IDENTITY for r in relation]
    # Order variants swap A and B: the seed's B is shown at A.
    option_map = np.array([[1, 0, 2, 3] if r else [-1] * 4 for r in relation])
    variants = Variants(
        seed=np.array(seed),
        relation=np.array(relation),
        sector=np.array(sector),
        change=np.array(change),
        option_map=option_map,
    )
    seed_answer = np.array([[B, B, B, B, PROVIDER_REFUSED]])
    seed_correct = np.array([[True, True, True, False, False]])
    answers = [B, B, B, B, A, B, A, B, PROVIDER_REFUSED, B, B, B]
    # S0's order variant answered B, which shows the seed's A: disagrees.
    return seed_answer, seed_correct, np.array([answers]), variants


def test_robustness_tables_3_4_6_and_figure_3_by_hand():
    result = robustness(
        *study_design(), relations=("synonyms", "order"), sectors=("Power", "Textile")
    )
    pooled = result.pooled
    # Table 4: correct robustness pools S0–S2's compared variants: 3 + 0 + 0 + 1
    # + 1 agree of 4 + 1 + 3 = 8; incorrect: S3's 2 of 2.
    assert pooled.correct[0, 0] == pytest.approx(5 / 8)
    assert pooled.incorrect[0, 0] == 1.0
    assert (pooled.correct_variants[0, 0], pooled.correct_seeds[0, 0]) == (8, 3)
    # Assay's earlier mean per seed: (3/4 + 0 + 2/3) / 3.
    assert pooled.correct_seed_mean[0, 0] == pytest.approx((3 / 4 + 0 + 2 / 3) / 3)
    # §5.2: the provider's refusals are left out and counted.
    assert pooled.provider_refused_seeds[0, 0] == 1
    assert pooled.provider_refused_variants[0, 0] == 1
    # Cells of correct robustness: Power × synonyms 3/4, Power × order 0/1,
    # Textile × synonyms 1/1, Textile × order 1/2.
    np.testing.assert_allclose(result.by_cell[0], [[0.75, 1.0], [0.0, 0.5]])
    # Figure 3: a sector's score is the mean over relations.
    np.testing.assert_allclose(result.sector_score[0], [0.375, 0.75])
    # Table 6: a relation's score is the mean over sectors.
    np.testing.assert_allclose(result.relation_score[0], [0.875, 0.25])
    # Table 3: variants per sector (rows) and relation (columns).
    assert result.variant_counts.tolist() == [[4, 1], [5, 2]]


def test_the_majority_over_trials():
    """Study 002 §4: repeated runs, "select representative results using a
    majority vote". Cells 0–4: A A B → A; A B → a tie, no single answer; two
    model refusals and an A → refused; one trial → itself; three different → no
    single answer."""
    cells = [0, 0, 0, 1, 1, 2, 2, 2, 3, 4, 4, 4]
    codes = [0, 0, 1, 0, 1, REFUSED, 0, REFUSED, 2, 0, 1, 2]
    order = np.random.default_rng(0).permutation(len(cells))
    found, voted = majority(np.array(cells)[order], np.array(codes)[order])
    assert found.tolist() == [0, 1, 2, 3, 4]
    assert voted.tolist() == [0, UNREADABLE, REFUSED, 2, UNREADABLE]


def test_accuracy_per_field_and_the_field_distribution():
    """LPFQA Figures 3–5. Two models, fields Math (items 0–2) and Law (3–4), one
    trial: model 0 right on 0, 1, 3; model 1 on 2, 3, 4 (item 4 flagged for
    model 0: not correct)."""
    n = np.nan
    tested = np.array([[1, 1, 0, 1, 0], [0, 0, 1, 1, 1]], dtype=float)[..., None]
    tested[0, 4, 0] = 0  # a flagged answer is tested, not correct
    share, support = field_accuracy(tested, np.array([0, 0, 0, 1, 1]), 2)
    np.testing.assert_allclose(share, [[2 / 3, 1 / 2], [1 / 3, 1.0]])
    assert support.tolist() == [[3, 2], [3, 2]]
    pending = tested.copy()
    pending[1, 4, 0] = n  # not yet tested: out of the denominator
    share, support = field_accuracy(pending, np.array([0, 0, 0, 1, 1]), 2)
    assert share[1, 1] == 1.0 and support[1, 1] == 1

    fields = {1: "Math", 2: "Math", 3: "Math", 4: "Law", 5: ""}
    table = field_distribution(fields, [("lpfqa-equal", [1, 4, 5])])
    assert [row[0] for row in table.rows] == ["(no field)", "Law", "Math", "All"]
    by_field = {row[0]: row[1:] for row in table.rows}
    assert by_field["Math"] == [3, 3 / 5, 1, 1 / 3]
    assert by_field["All"] == [5, 1.0, 3, 1.0]
    assert footnote("field-distribution") in table.notes


def test_every_definition_names_its_paper():
    for definition in DEFINITIONS.values():
        assert definition.source.startswith(("study 002", "LPFQA"))
        assert "§" in definition.source


@pytest.fixture
def lpfqa(db):
    return lpfqa_demo.seed()


def test_the_lpfqa_pages_carry_the_footnotes(lpfqa, client_for, personas):
    manager = client_for("manager")
    board = manager.get(reverse("judging:leaderboard", args=[lpfqa.slug]))
    html = board.content.decode()
    for key in ("accuracy", "provider-refusal", "field-accuracy"):
        assert escape(footnote(key)) in html, key
    report = board.context["report"]
    fields = report.tables["fields"]
    # The demo's four fields, the models and the mean over them.
    assert len(fields.columns) == 1 + 4
    assert len(fields.rows) == len(lpfqa_demo.MODELS) + 1
    extremes = report.tables["field_extremes"]
    for row in extremes.rows:
        column = [
            r[1 + [c.key for c in fields.columns[1:]].index(row[0])]
            for r in fields.rows[:-1]
        ]
        assert row[3] == max(column) and row[5] == min(column)

    runs = list(EvaluationRun.objects.filter(benchmark=lpfqa))
    subset = do_derive_subset(
        lpfqa,
        name="lpfqa-equal",
        rule="lpfqa-equal",
        runs=runs,
        solved_at=1,
        user=personas["manager"],
    )
    page = manager.get(reverse("judging:item_subsets", args=[lpfqa.slug]))
    html = page.content.decode()
    assert escape(footnote("solved")) in html
    assert escape(footnote("field-distribution")) in html
    distribution = page.context["fields"]
    assert distribution.rows[-1][1] == lpfqa.items.count()
    assert distribution.rows[-1][3] == len(subset.item_ids)
