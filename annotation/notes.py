"""How long a label's note or a rejection's reason may be: a longer one is refused
with a message saying so, never cut."""

from django.core.exceptions import ValidationError
from django.utils.formats import number_format
from django.utils.translation import gettext as _

# The longest note or reason a label keeps; a longer one is refused, never cut.
NOTE_MAX = 2000


def check_note_length(text: str, what: str = "note") -> None:
    if len(text) > NOTE_MAX:
        message = (
            _(
                "The reason is %(length)s characters long; at most %(limit)s are "
                "kept. Shorten it — nothing was saved."
            )
            if what == "reason"
            else _(
                "The note is %(length)s characters long; at most %(limit)s are "
                "kept. Shorten it — nothing was saved."
            )
        )
        raise ValidationError(
            message
            % {
                "length": number_format(len(text), force_grouping=True),
                "limit": number_format(NOTE_MAX, force_grouping=True),
            }
        )
