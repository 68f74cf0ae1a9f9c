"""Stored texts and downloads stay in English whatever the reader's interface
language: a choice's label (translated lazily for pages) read in English."""

from django.utils import translation


def english(text) -> str:
    """`text` (a lazily translated string, e.g. a choice's label) in English."""
    with translation.override("en"):
        return str(text)
