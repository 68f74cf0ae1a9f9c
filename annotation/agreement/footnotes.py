"""The agreement reports' footnotes that depend on the judges compared, as whole
sentences (benchmark.notes): English in the downloads, the reader's language on the
report page."""

from django.utils.translation import gettext_noop

from benchmark.notes import Note

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
