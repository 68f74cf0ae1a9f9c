"""The view side every review screen with one submit URL per item shares (the
expert verification queue, the dangling-reference queue): the page that shows the
held item or leases the next, and a submit's skip, stale-tab refusal, refusal
with the typed text kept, and the next item after it.

A screen supplies its queue, its candidates, the page's URL and how to render
one item; its view decides what the submit means (`ReviewScreen.submit`'s
`decide`). Without htmx every answer is the page again (a redirect), so a
reload never submits twice.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import redirect

from reviewqueue import engine
from reviewqueue.engine import StaleRefusal


@dataclass(frozen=True)
class ReviewScreen:
    queue: str
    candidates: QuerySet  # the items still needing a person, in hand-out order
    page_url: str
    # (request, item id or None, *, error="", asked=True) -> the screen, as the
    # whole page or (htmx) its task partial; status 400 with an error.
    render: Callable[..., HttpResponse]

    def page(self, request, requested: str) -> HttpResponse:
        """A GET shows the item the person holds (or `requested`, one they
        finished); a POST `action=next` leases the next (the page asks on load)."""
        if request.method == "POST":
            return self.render(request, self._claim(request))
        item_id = engine.shown(self.queue, request.user, requested)
        return self.render(request, item_id, asked=item_id is not None)

    def submit(self, request, item_id: int, decide: Callable[[], str]) -> HttpResponse:
        """`action=skip` passes the item over (another person takes it);
        otherwise `decide()` stores the decision and returns what to tell the
        person, or raises: a `StaleRefusal` (decided meanwhile) says so over
        the next item, never showing the refused choice; any other refusal shows
        the same item again with what was typed (htmx) or the page with the
        message. Then the next item."""
        if request.POST.get("action") == "skip":
            engine.skip(self.queue, item_id, request.user)
            return self._next(request)
        try:
            done = decide()
        except StaleRefusal as stale:
            messages.error(request, " ".join(stale.messages))
            return self._next(request)
        except ValidationError as error:
            if not request.htmx:
                messages.error(request, " ".join(error.messages))
                return redirect(self.page_url)
            return self.render(request, item_id, error=" ".join(error.messages))
        messages.success(request, done)
        return self._next(request)

    def _claim(self, request) -> int | None:
        return engine.claim(self.queue, request.user, self.candidates)

    def _next(self, request) -> HttpResponse:
        item_id = self._claim(request)
        if not request.htmx:
            return redirect(self.page_url)
        return self.render(request, item_id)
