"""HTMX helpers every app's views share."""

from django.http import HttpResponse
from django_htmx.http import HttpResponseStopPolling


def stop_polling_unless(active: bool, response: HttpResponse) -> HttpResponse:
    """`response`, with the status that ends an `hx-trigger="every …"` poll (286)
    once what it shows is no longer active."""
    if not active:
        response.status_code = HttpResponseStopPolling.status_code
    return response
