"""HTMX helpers every app's views share."""

from django.http import HttpResponse
from django_htmx.http import HttpResponseClientRefresh, HttpResponseStopPolling


def stop_polling_unless(active: bool, response: HttpResponse) -> HttpResponse:
    """`response`, with the status that ends an `hx-trigger="every …"` poll (286)
    once what it shows is no longer active."""
    if not active:
        response.status_code = HttpResponseStopPolling.status_code
    return response


def poll_until_settled(settled: bool, response: HttpResponse) -> HttpResponse:
    """A live page's poll answer: its fragment while what the page shows can still
    change; once it has settled, one client refresh (HX-Refresh), so that every part
    of the page (status, buttons, links, final numbers) shows the end without the
    person reloading, and the refreshed page no longer polls."""
    return HttpResponseClientRefresh() if settled else response
