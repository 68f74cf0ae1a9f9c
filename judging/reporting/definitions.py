"""The published definitions Assay's report pages follow, named with their paper.

Every table that reports one of these numbers carries its footnote (`footnote`), so
a reader can check each figure against the paper it comes from. Where Assay once
computed a number differently, the page shows the paper's; the old figure appears
only in a column named for what it is. The wording is Assay's own.
"""

from __future__ import annotations

from dataclasses import dataclass

STUDY_002 = (
    "study 002 (Accuracy and Robustness of LLMs under Chinese Industrial Scenarios)"
)
LPFQA = "LPFQA (paper 001)"


@dataclass(frozen=True)
class Definition:
    name: str
    source: str  # paper and section
    meaning: str

    def footnote(self) -> str:
        return f"{self.name} — {self.source}: {self.meaning}"


DEFINITIONS = {
    "accuracy": Definition(
        "Accuracy",
        f"{STUDY_002} §2.3",
        "correct answers divided by all tested questions. A flagged answer "
        "(several options, the model's refusal, nothing recognisable, an empty "
        "reply) and a provider's refusal count as not correct and are shown "
        "beside it; pending and waived answers are not yet tested. Over k "
        "trials, the mean of the trials' accuracies (LPFQA reports the mean of "
        "three).",
    ),
    "combined-accuracy": Definition(
        "Overall accuracy",
        f"{STUDY_002} §2.3",
        "the average of the multiple-choice, true/false and open-question "
        "accuracies weighted by how many questions of each were tested; open "
        "answers count as correct when the experts' majority vote says so.",
    ),
    "robustness": Definition(
        "Robustness",
        f"{STUDY_002} §3",
        "the share of variants whose answer agrees with the seed's answer (after "
        "the relation's expected change), pooled over every compared variant.",
    ),
    "correct-robustness": Definition(
        "Correct / incorrect robustness",
        f"{STUDY_002} §5.2, Table 4",
        "robustness over the variants of the seeds the model answered right "
        "(correct) or wrong (incorrect).",
    ),
    "sector-robustness": Definition(
        "Robustness per sector",
        f"{STUDY_002} §5.3, Figure 3",
        "correct robustness, the mean over the relations of each relation's "
        "pooled share in the sector.",
    ),
    "relation-robustness": Definition(
        "Robustness per relation",
        f"{STUDY_002} §5.4, Table 6",
        "correct robustness, the mean over the sectors of each sector's pooled "
        "share for the relation.",
    ),
    "variant-counts": Definition(
        "Variants per sector",
        f"{STUDY_002} §4, Table 3",
        "how many variants each sector's seeds have, per relation and in all.",
    ),
    "majority-trials": Definition(
        "Majority over trials",
        f"{STUDY_002} §4 (Experiments Setup)",
        "when a run asks each question k > 1 times, the answer that most of its "
        "trials give stands for the run; a tie leaves no answer.",
    ),
    "provider-refusal": Definition(
        "Provider refusal",
        f"{STUDY_002} §5.2",
        "a request the provider's content filter declined (finish reason "
        "content_filter, or an HTTP refusal) is counted apart and left out of "
        "robustness: it changes no robustness score.",
    ),
    "field-accuracy": Definition(
        "Accuracy per field",
        f"{LPFQA} §4.1, Figures 3–4",
        "each model's accuracy on the items of one field (the item's domain), "
        "the mean over models per field, and the best and worst model per field.",
    ),
    "field-distribution": Definition(
        "Field distribution",
        f"{LPFQA} §4.2.1, Figure 5",
        "how many items of each field the full set and each saved subset hold.",
    ),
    "solved": Definition(
        "Solved",
        f"{LPFQA} §4.2.1 (LPFQA⁻ / LPFQA⁼)",
        "on a binary run with k trials, an item is solved when it is right in at "
        "least one trial; LPFQA⁻ drops the items no model solved, LPFQA⁼ also "
        "those every model solved.",
    ),
}


def footnote(key: str) -> str:
    return DEFINITIONS[key].footnote()
