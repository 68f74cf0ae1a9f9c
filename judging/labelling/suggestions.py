"""What a labelling run suggests but did not apply: items whose kept final label
(imported, or a person's decision) differs from the run's consensus."""

from dataclasses import dataclass

from benchmark.models import FinalLabel
from judging.labelling.models import LabelConsensus, LabellingRun


@dataclass(frozen=True)
class Suggestion:
    consensus: LabelConsensus
    final: FinalLabel

    @property
    def applicable(self) -> bool:
        """A person's decision stays; only an imported label may be replaced."""
        return not self.final.is_human_decision


def run_suggestions(run: LabellingRun) -> list[Suggestion]:
    rows = list(
        LabelConsensus.objects.filter(run=run, kept_final_label=True)
        .exclude(label=None)
        .select_related("item", "dimension", "label")
        .order_by("dimension__position", "item__external_id")
    )
    finals = {
        (final.item_id, final.dimension_id): final
        for final in FinalLabel.objects.filter(
            item_id__in={row.item_id for row in rows}
        ).select_related("label", "decided_by")
    }
    return [
        Suggestion(row, finals[(row.item_id, row.dimension_id)])
        for row in rows
        if (row.item_id, row.dimension_id) in finals
        and finals[(row.item_id, row.dimension_id)].label_id != row.label_id
    ]
