"""What an item's history says of each change (`ItemEvent.summary`), as Notes
(benchmark.notes): stored in English and as msgid and values, shown on the item's
page in the reader's language. Built here, written by benchmark.actions."""

from django.utils.translation import gettext_noop

from benchmark.models import FinalLabel, Item, Rendering
from benchmark.notes import Note, label_note

CREATED = Note(gettext_noop("Item created"))


def label_decided(dimension, label, provenance: str) -> Note:
    """The dimension, the label and who decided it."""
    return Note(
        gettext_noop("%(dimension)s: %(label)s (%(provenance)s)"),
        dimension=dimension.name,
        label=label.name,
        provenance=label_note(FinalLabel.Provenance(provenance).label),
    )


def rendering_added(rendering: Rendering) -> Note:
    return Note(
        gettext_noop("%(language)s v%(version)s (%(origin)s)"),
        language=rendering.language,
        version=rendering.version,
        origin=label_note(Rendering.Origin(rendering.origin).label),
    )


def rendering_reviewed(rendering: Rendering) -> Note:
    return Note(
        gettext_noop("%(language)s v%(version)s: %(status)s"),
        language=rendering.language,
        version=rendering.version,
        status=label_note(Rendering.ReviewStatus(rendering.review_status).label),
    )


def difficulty_set(difficulty: str, provenance: str) -> Note:
    return Note(
        gettext_noop("Difficulty set to %(difficulty)s (%(provenance)s)"),
        difficulty=label_note(Item.Difficulty(difficulty).label),
        provenance=provenance,
    )


def variant_created(seed: Item, relation: str) -> Note:
    return Note(
        gettext_noop("Variant of %(seed)s (%(relation)s)"),
        seed=seed.external_id,
        relation=relation,
    )
