"""The review screens' keys, declared once: each screen lists its own keys and
uses the shared ones; `templates/reviewqueue/_keys.html` is the one key dialog
(`?`; it adds `?` and Esc on every screen). The keyboard contract itself is in
static/annotation.js."""

from typing import NamedTuple

from django.utils.translation import gettext_lazy as _


class Key(NamedTuple):
    keys: tuple[str, ...]
    meaning: str


BACK = Key(("⌫",), _("Back to your previous task (to correct it)"))
FORWARD = Key(("→",), _("From a past task, forward to the next one you did"))
SKIP = Key(("k",), _("Skip this task (asks why)"))
TO_QUEUE = Key(("n",), _("From a past task, return to the queue"))
SUBMIT = Key(("Enter",), _("Submit and load the next task"))
APPROVE = Key(("a",), _("Approve"))
EDIT = Key(("e",), _("Edit; Ctrl+Enter saves and approves"))
REJECT = Key(("r",), _("Reject; type the reason, Enter submits"))

HISTORY = [BACK, FORWARD, SKIP, TO_QUEUE]
