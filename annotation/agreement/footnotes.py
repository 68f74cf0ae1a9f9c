"""The agreement reports' footnotes that depend on the judges compared, as whole
sentences (benchmark.notes): English in the downloads, the reader's language on the
report page."""

from django.utils.translation import gettext_noop

from benchmark.notes import Note, noop

# The cross-judge report's first footnote, by (chosen on the report page, some
# judges left out): whole sentences, one per case.
JUDGES_NOTES = {
    (False, False): gettext_noop(
        "Judges (%(count)s): %(judges)s; the judges whose shared responses hold the "
        "most judgments (default). n: responses of the model scored by every one of "
        "these judges; a response where any of their scores is missing (not judged, "
        "pending, failed or unparseable) is left out of its row."
    ),
    (False, True): gettext_noop(
        "Judges (%(count)s): %(judges)s; the judges whose shared responses hold the "
        "most judgments (default). Left out: %(left_out)s. n: responses of the model "
        "scored by every one of these judges; a response where any of their scores "
        "is missing (not judged, pending, failed or unparseable) is left out of its "
        "row."
    ),
    (True, False): gettext_noop(
        "Judges (%(count)s): %(judges)s; chosen on the report page. n: responses of "
        "the model scored by every one of these judges; a response where any of "
        "their scores is missing (not judged, pending, failed or unparseable) is "
        "left out of its row."
    ),
    (True, True): gettext_noop(
        "Judges (%(count)s): %(judges)s; chosen on the report page. Left out: "
        "%(left_out)s. n: responses of the model scored by every one of these "
        "judges; a response where any of their scores is missing (not judged, "
        "pending, failed or unparseable) is left out of its row."
    ),
}


def one_judge_note(judges: list[str]) -> Note:
    """Why a judge-vs-judge table is empty: it needs two judges' scores."""
    if not judges:
        return Note(
            gettext_noop("No completed rubric judgments yet: nothing to compare.")
        )
    return Note(
        gettext_noop(
            "One rubric judge scored these responses (%(judge)s): agreement between "
            "judges needs at least two, so this table is empty. The IndustryBench "
            "set-up scores with one judge and checks it against two others on a "
            "subset of models: score some runs with a second and third judge to "
            "fill it."
        ),
        judge=judges[0],
    )


def cross_judge_notes(settings, n_judges: int) -> list[Note]:
    """Table 5's footnotes after the judges' one: the statistics and the extra
    rows."""
    return [
        Note(
            gettext_noop(
                "Full agreement: all %(count)s judges give the same score; range ≥ "
                "2: highest minus lowest score ≥ 2. Pairwise columns: mean over the "
                "%(pairs)s judge pairs."
            ),
            count=n_judges,
            pairs=n_judges * (n_judges - 1) // 2,
        ),
        settings.kappa_note,
        Note(gettext_noop("κ and ρ are averaged over judge pairs.")),
        Note(
            gettext_noop(
                "Average: the mean of the model rows above it (the paper's Average "
                "row; models with no scored response are left out of the mean; n is "
                "their sum; no CI). All models (pooled): every model's responses "
                "taken together."
            )
        ),
        Note(
            gettext_noop(
                "ρ: Spearman's rank correlation, Pearson correlation of mid-ranks "
                "(ties averaged)."
            )
        ),
        settings.ci_note,
    ]


EXACT_NOTE = gettext_noop(
    "Exact: identical scores; |Δ| ≤ 1 / |Δ| ≥ 2: absolute score difference."
)
RHO_NOTE = gettext_noop("ρ: Spearman's rank correlation from mid-ranks.")


def judge_pairs_notes(settings) -> list[Note]:
    """Table 15's footnotes."""
    return [
        Note(
            gettext_noop(
                "n: responses scored by both judges of the pair (per tested model in "
                "the first table, all tested models pooled in the second); "
                "responses where either score is missing are left out of that pair."
            )
        ),
        Note(EXACT_NOTE),
        settings.kappa_note,
        Note(RHO_NOTE),
        settings.ci_note,
    ]


def calibration_notes(settings, n_units: int, humans: list[str], n_judges: int):
    """Tables 6 and 16's footnotes: the sample, the rows, the statistics, the
    confusion matrix, the distributions and the judges' currency."""
    sample = Note(
        noop.ngettext(
            "Calibration sample: %(count)s response graded by at least one human "
            "(%(humans)s). Each comparison uses the responses both sides scored (n); "
            "a missing judge score or an ungraded response drops only that pair.",
            "Calibration sample: %(count)s responses graded by at least one human "
            "(%(humans)s). Each comparison uses the responses both sides scored (n); "
            "a missing judge score or an ungraded response drops only that pair.",
        ),
        count=n_units,
        humans=", ".join(humans) if humans else Note(gettext_noop("none")),
    )
    if n_judges > 1:
        rows = Note(
            gettext_noop(
                "Median of judges: per response, the median of the %(count)s judges' "
                "scores, defined only where every judge scored it (lower median for "
                "an even number of judges, to stay on the scale). Human vs human "
                "rows appear where two humans overlap on more than one response."
            ),
            count=n_judges,
        )
    else:
        rows = Note(
            gettext_noop(
                "Human vs human rows appear where two humans overlap on more than "
                "one response."
            )
        )
    return [
        sample,
        rows,
        Note(EXACT_NOTE),
        settings.kappa_note,
        Note(RHO_NOTE),
        settings.ci_note,
        Note(
            gettext_noop(
                "Confusion matrix (behind Table 6): per judge and human, one row per "
                "human score and one column per judge score, counting the responses "
                "both scored; the diagonal is the exact agreement."
            )
        ),
        Note(
            gettext_noop(
                "Distributions (Table 16): per rater, how many of its scores on the "
                "sample fall at each point of the 0–3 scale, their share of the "
                "rater's n, and the rater's mean score."
            )
        ),
        Note(
            gettext_noop(
                "Judges calibrated and in use: per judge (name · prompt version), the "
                "endpoint models its judgments on the sample came from and how many "
                "it scored, against the judge the benchmark's evaluation runs (not "
                "cancelled) score with now. Stale: a judge in use that no human "
                "grade was compared with, or whose endpoint now sends a model its "
                "calibrated judgments did not come from."
            )
        ),
    ]


def never_calibrated_warning(runs: int, judge: str, others: list[str]) -> Note:
    """A judge the runs use now that no human grade was compared with."""
    if others:
        return Note(
            noop.ngettext(
                "%(count)s run now scores with %(judge)s, which no human grade was "
                "compared with (calibrated: %(others)s).",
                "%(count)s runs now score with %(judge)s, which no human grade was "
                "compared with (calibrated: %(others)s).",
            ),
            count=runs,
            judge=judge,
            others=", ".join(others),
        )
    return Note(
        noop.ngettext(
            "%(count)s run now scores with %(judge)s, which no human grade was "
            "compared with.",
            "%(count)s runs now score with %(judge)s, which no human grade was "
            "compared with.",
        ),
        count=runs,
        judge=judge,
    )


def model_changed_warning(judge: str, changed: list[str], known: list[str]) -> Note:
    """A calibrated judge whose endpoint now sends another model."""
    return Note(
        gettext_noop(
            "%(judge)s now runs on %(changed)s; its calibrated judgments came from "
            "%(known)s."
        ),
        judge=judge,
        changed=", ".join(changed),
        known=", ".join(known),
    )


SV_NOTES = [
    Note(
        gettext_noop(
            "Positive class: violating. TP: both say violating; FP: judge violating, "
            "human safe; FN: judge safe, human violating; TN: both safe."
        )
    ),
    Note(
        gettext_noop(
            "Precision TP/(TP+FP), recall TP/(TP+FN), F1 2TP/(2TP+FP+FN), specificity "
            "TN/(TN+FP); — where the denominator is 0."
        )
    ),
    Note(
        gettext_noop(
            "n: responses with both a human safe/violating label and a completed SV "
            "judgment. A failed or unparseable SV check is missing, never counted as "
            "safe."
        )
    ),
]
