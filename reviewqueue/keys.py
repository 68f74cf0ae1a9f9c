"""The review screens' keys, declared once: each screen lists its own keys and
uses the shared ones; `templates/reviewqueue/_keys.html` is the one key dialog
(`?`; it adds `?` and Esc on every screen). The keyboard contract itself is in
static/annotation.js."""

from typing import NamedTuple


class Key(NamedTuple):
    keys: tuple[str, ...]
    meaning: str


BACK = Key(("⌫",), "Back to your previous task (to correct it)")
FORWARD = Key(("→",), "From a past task, forward to the next one you did")
SKIP = Key(("k",), "Skip this task (asks why)")
TO_QUEUE = Key(("n",), "From a past task, return to the queue")
SUBMIT = Key(("Enter",), "Submit and load the next task")
APPROVE = Key(("a",), "Approve")
EDIT = Key(("e",), "Edit; Ctrl+Enter saves and approves")
REJECT = Key(("r",), "Reject; type the reason, Enter submits")

HISTORY = [BACK, FORWARD, SKIP, TO_QUEUE]
