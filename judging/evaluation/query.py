"""What a page's query string may ask of an evaluation page, checked: an id, one
of the benchmark's languages, one of its saved subsets. Anything else is a 404,
never echoed into a page or a file name."""

from django.http import Http404
from django.shortcuts import get_object_or_404
from django.urls import reverse


def leaderboard_url(benchmark, language) -> str:
    url = reverse("judging:leaderboard", args=[benchmark.slug])
    return f"{url}?lang={language}" if language in benchmark.languages else url


def language_asked(query, benchmark) -> str | None:
    """The `lang` asked for — one of the benchmark's languages — or None (the
    report's default); anything else is a 404, never echoed into a page or a file
    name."""
    language = query.get("lang") or None
    if language is not None and language not in benchmark.languages:
        raise Http404(f"{benchmark.name} has no such language.")
    return language


def subset_asked(query, benchmark):
    """The saved subset `subset` names (an id of one of the benchmark's), or None;
    anything else is a 404."""
    if not query.get("subset"):
        return None
    return get_object_or_404(benchmark.subsets, pk=positive_id(query.get("subset")))


def positive_id(value) -> int:
    """A primary key from a query string; a 404 for anything else."""
    if not (value or "").isdigit() or not 0 < int(value) < 2**63:
        raise Http404("No such record.")
    return int(value)
