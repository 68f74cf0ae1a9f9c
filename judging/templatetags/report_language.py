"""Report tables on pages in the reader's language; their downloads stay English."""

from django import template
from django.utils.translation import gettext

from benchmark.notes import Note
from judging.reporting.definitions import translated_footnote
from judging.robustness.relation_labels import relation_label as _relation_label

register = template.Library()


@register.filter
def translated_note(note: str) -> str:
    return translated_footnote(note)


@register.filter
def translated(text) -> str:
    """A table's title or column label (marked with gettext_noop where it is
    defined); a name built from data (a model, a language) comes back unchanged."""
    if isinstance(text, Note):
        return text.translated()
    return gettext(str(text)) if text else text


@register.filter
def relation_label(name: str) -> str:
    """A metamorphic relation's identifier as a person reads it."""
    return _relation_label(name)
