"""The published definitions Assay's report pages follow, named with their paper.

Every table that reports one of these numbers carries its footnote (`footnote`), so
a reader can check each figure against the paper it comes from. Where Assay once
computed a number differently, the page shows the paper's; the old figure appears
only in a column named for what it is. The wording is Assay's own.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext, gettext_noop

from benchmark.notes import Note

STUDY_002 = gettext_noop(
    "study 002 (Accuracy and Robustness of LLMs under Chinese Industrial Scenarios)"
)
LPFQA = gettext_noop("LPFQA (paper 001)")


@dataclass(frozen=True)
class Definition:
    name: str
    source: str  # paper and section
    meaning: str

    def footnote(self) -> str:
        return f"{self.name} — {self.source}: {self.meaning}"


DEFINITIONS = {
    "accuracy": Definition(
        gettext_noop("Accuracy"),
        f"{STUDY_002} §2.3",
        gettext_noop(
            "correct answers divided by all tested questions. A flagged answer "
            "(several options, the model's refusal, nothing recognisable, an empty "
            "reply) and a provider's refusal count as not correct and are shown "
            "beside it; pending and waived answers are not yet tested. Over k "
            "trials, the mean of the trials' accuracies (LPFQA reports the mean of "
            "three)."
        ),
    ),
    "combined-accuracy": Definition(
        gettext_noop("Overall accuracy"),
        f"{STUDY_002} §2.3",
        gettext_noop(
            "the average of the multiple-choice, true/false and open-question "
            "accuracies weighted by how many questions of each were tested; open "
            "answers count as correct when the experts' majority vote says so."
        ),
    ),
    "robustness": Definition(
        gettext_noop("Robustness"),
        f"{STUDY_002} §3",
        gettext_noop(
            "the share of variants whose answer agrees with the seed's answer (after "
            "the relation's expected change), pooled over every compared variant."
        ),
    ),
    "correct-robustness": Definition(
        gettext_noop("Correct / incorrect robustness"),
        f"{STUDY_002} §5.2, Table 4",
        gettext_noop(
            "robustness over the variants of the seeds the model answered right "
            "(correct) or wrong (incorrect)."
        ),
    ),
    "sector-robustness": Definition(
        gettext_noop("Robustness per sector"),
        f"{STUDY_002} §5.3, Figure 3",
        gettext_noop(
            "correct robustness, the mean over the relations of each relation's "
            "pooled share in the sector."
        ),
    ),
    "relation-robustness": Definition(
        gettext_noop("Robustness per relation"),
        f"{STUDY_002} §5.4, Table 6",
        gettext_noop(
            "correct robustness, the mean over the sectors of each sector's pooled "
            "share for the relation."
        ),
    ),
    "variant-counts": Definition(
        gettext_noop("Variants per sector"),
        f"{STUDY_002} §4, Table 3",
        gettext_noop(
            "how many variants each sector's seeds have, per relation and in all."
        ),
    ),
    "majority-trials": Definition(
        gettext_noop("Majority over trials"),
        f"{STUDY_002} §4 (Experiments Setup)",
        gettext_noop(
            "when a run asks each question k > 1 times, the answer that most of its "
            "trials give stands for the run; a tie leaves no answer."
        ),
    ),
    "provider-refusal": Definition(
        gettext_noop("Provider refusal"),
        f"{STUDY_002} §5.2",
        gettext_noop(
            "a request the provider's content filter declined (finish reason "
            "content_filter, or an HTTP refusal) is counted apart and left out of "
            "robustness: it changes no robustness score."
        ),
    ),
    "field-accuracy": Definition(
        gettext_noop("Accuracy per field"),
        f"{LPFQA} §4.1, Figures 3–4",
        gettext_noop(
            "each model's accuracy on the items of one field (the item's domain), "
            "the mean over models per field, and the best and worst model per field."
        ),
    ),
    "field-distribution": Definition(
        gettext_noop("Field distribution"),
        f"{LPFQA} §4.2.1, Figure 5",
        gettext_noop(
            "how many items of each field the full set and each saved subset hold."
        ),
    ),
    "solved": Definition(
        gettext_noop("Solved"),
        f"{LPFQA} §4.2.1 (LPFQA⁻ / LPFQA⁼)",
        gettext_noop(
            "on a binary run with k trials, an item is solved when it is right in at "
            "least one trial; LPFQA⁻ drops the items no model solved, LPFQA⁼ also "
            "those every model solved."
        ),
    ),
}


def footnote(key: str) -> str:
    return DEFINITIONS[key].footnote()


def translated_footnote(note: str) -> str:
    """`note` in the active language, for pages only: downloads (CSV, LaTeX) and
    `manage.py leaderboard` keep the English footnote the table carries."""
    if isinstance(note, Note):
        return note.translated()
    for definition in DEFINITIONS.values():
        if note == definition.footnote():
            source = definition.source
            for paper in (STUDY_002, LPFQA):
                if source.startswith(paper):
                    source = gettext(paper) + source[len(paper) :]
            return (
                f"{gettext(definition.name)} — {source}: {gettext(definition.meaning)}"
            )
    return gettext(note)
