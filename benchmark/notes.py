"""Texts written once and read later, each reader in their own language (#30).

A `Note` is its English text as a string — what a download (CSV, LaTeX), the REST
API, a webhook and the log carry — and also its msgid and the values that fill its
`%(name)s` holes (a value may be a Note or a lazy translation itself), so a page
shows it in the reader's language when it is read, not in the language of whoever
caused it to be written. An import's problems and summary stored on its job
(`as_json` / `from_json`), an item's history summaries and a report table's notes
are Notes.

The msgid is marked where the note is written: `gettext_noop("…")`, or
`noop.ngettext("…", "…")` for a sentence with a count (its `count` value picks the
plural form). xgettext's own `ngettext` keyword extracts a sentence and its plural
from that call, so Django's makemessages needs no option of ours."""

from django.utils import translation
from django.utils.functional import Promise
from django.utils.translation import gettext, ngettext


class _NotTranslated:
    """`noop.ngettext(singular, plural)`: a sentence and its plural marked for the
    catalogue and returned as they are, translated later (like gettext_noop)."""

    @staticmethod
    def ngettext(singular: str, plural: str) -> tuple[str, str]:
        return singular, plural


noop = _NotTranslated()


class Note(str):
    """English as a string; `translated()` in the active language."""

    def __new__(cls, msgid: str | tuple[str, str], **values):
        if isinstance(msgid, tuple):
            singular, plural = msgid
            english = singular if values["count"] == 1 else plural
        else:
            english = msgid
        note = super().__new__(cls, english % _filled(values, translate=False))
        note.msgid, note.values = msgid, values
        return note

    def translated(self) -> str:
        values = _filled(self.values, translate=True)
        if isinstance(self.msgid, tuple):
            return ngettext(*self.msgid, self.values["count"]) % values
        return gettext(self.msgid) % values

    def __reduce__(self):
        # Pickled (a cached report) and copied with its msgid, not re-read from
        # its English text.
        return (_rebuilt_note, (self.msgid, self.values))

    def as_json(self) -> dict:
        """The msgid and values; a value that is a Note is stored as its own JSON,
        so it is translated too when read."""
        values = {
            name: value.as_json() if isinstance(value, Note) else value
            for name, value in self.values.items()
        }
        return {"msgid": self.msgid, "values": values}

    @classmethod
    def from_json(cls, stored: dict) -> "Note":
        msgid = stored["msgid"]
        values = {
            name: cls.from_json(value) if _is_stored_note(value) else value
            for name, value in stored["values"].items()
        }
        return cls(tuple(msgid) if isinstance(msgid, list) else msgid, **values)


def _is_stored_note(value) -> bool:
    return isinstance(value, dict) and "msgid" in value and "values" in value


def label_note(label: Promise) -> Note:
    """A lazily translated label (a model choice's) as a Note that can be stored:
    its msgid is its English text."""
    with translation.override("en"):
        return Note(str(label))


def _filled(values: dict, *, translate: bool) -> dict:
    """The values as the note shows them: a value that is itself a Note or a lazy
    translation (a model choice's label), or a list of them, in the active
    language, or in English."""
    if not any(isinstance(value, Note | Promise | list) for value in values.values()):
        return values
    return {name: _shown(value, translate) for name, value in values.items()}


def _shown(value, translate: bool):
    if isinstance(value, list):  # a list of notes, shown one after the other
        return ", ".join(str(_shown(element, translate)) for element in value)
    if isinstance(value, Note):
        return value.translated() if translate else str.__str__(value)
    if isinstance(value, Promise):
        if translate:
            return str(value)
        with translation.override("en"):
            return str(value)
    return value


def _rebuilt_note(msgid, values: dict) -> Note:
    return Note(msgid, **values)


def translated(text) -> str:
    """A Note (or one stored as JSON) in the active language; any other text — a
    name from data, a message older than Notes — as it is."""
    if isinstance(text, dict) and "msgid" in text:
        text = Note.from_json(text)
    if isinstance(text, Note):
        return text.translated()
    return text
