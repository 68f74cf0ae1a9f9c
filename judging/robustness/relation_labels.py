"""The eight metamorphic relations as a person reads them. Pages show these; the
identifiers (`relations.RELATIONS`) stay what downloads, the API and the study's
tables use."""

from django.utils.translation import pgettext_lazy

RELATION_LABELS = {
    "magnitude": pgettext_lazy("metamorphic relation", "unit magnitude"),
    "precision": pgettext_lazy("metamorphic relation", "numeric precision"),
    "synonym": pgettext_lazy("metamorphic relation", "synonym"),
    "order": pgettext_lazy("metamorphic relation", "option order"),
    "logic": pgettext_lazy("metamorphic relation", "logical negation"),
    "general_context": pgettext_lazy("metamorphic relation", "general context"),
    "security_context": pgettext_lazy("metamorphic relation", "security context"),
    "irrelevant_content": pgettext_lazy("metamorphic relation", "irrelevant content"),
}


def relation_label(name: str) -> str:
    """A relation's label in the active language; an unknown name as it is."""
    return str(RELATION_LABELS.get(name, name))
