"""Texts written once and shown later (benchmark.notes), in the reader's language."""

from django import template

from benchmark.notes import translated as translated_text

register = template.Library()


@register.filter
def in_reader_language(text):
    """A Note, or one an import job stored (a dict with its msgid), in the active
    language; any other text as it is."""
    return translated_text(text)


@register.filter
def problem_message(problem):
    """An import problem's message in the active language: a Problem's Note, or the
    Note an import job stored beside the English message (older jobs: the
    English)."""
    if isinstance(problem, dict):
        return translated_text(problem.get("note") or problem.get("message", ""))
    return translated_text(problem.message)
