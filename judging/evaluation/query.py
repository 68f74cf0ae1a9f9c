"""What a page's query string may ask of an evaluation page, checked: an id (the
leaderboard checks its language and subset itself). Anything else is a 404, never
echoed into a page or a file name."""

from django.http import Http404
from django.urls import reverse


def leaderboard_url(benchmark, language) -> str:
    url = reverse("judging:leaderboard", args=[benchmark.slug])
    return f"{url}?lang={language}" if language in benchmark.languages else url


def positive_id(value) -> int:
    """A primary key from a query string; a 404 for anything else."""
    if not (value or "").isdigit() or not 0 < int(value) < 2**63:
        raise Http404("No such record.")
    return int(value)
