"""The core every all-or-nothing import shares (items: benchmark.importing; results
of an evaluation run: judging.evaluation.importing): problems at row level, a
collector that keeps the first MAX_PROBLEMS and counts the rest, the rejection that
carries them (nothing was written), and reading JSON Lines."""

import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.utils.translation import gettext, gettext_noop, ngettext

from benchmark.notes import Note, translated

MAX_PROBLEMS = 100


@dataclass(frozen=True)
class Problem:
    line: int  # 0: the file as a whole
    field: str  # the column or key at fault, or "" when the row is
    message: str  # a Note (benchmark.notes) where the importer's words are marked
    item_id: str = ""

    def __str__(self):
        """In English: the command line, the REST API, the log."""
        where = f"line {self.line}" if self.line or self.field else "file"
        if self.item_id:
            where += f" (id {self.item_id})"
        if self.field:
            where += f", {self.field}"
        return f"{where}: {self.message}"

    def translated(self) -> str:
        """The problem in the active language, for a page."""
        values = {
            "line": self.line,
            "id": self.item_id,
            "field": self.field,
            "message": translated(self.message),
        }
        if not (self.line or self.field):
            return gettext("file: %(message)s") % values
        if self.item_id and self.field:
            text = gettext("line %(line)s (id %(id)s), %(field)s: %(message)s")
        elif self.item_id:
            text = gettext("line %(line)s (id %(id)s): %(message)s")
        elif self.field:
            text = gettext("line %(line)s, %(field)s: %(message)s")
        else:
            text = gettext("line %(line)s: %(message)s")
        return text % values

    def as_json(self) -> dict:
        """As an import job stores it: the English message, and the Note to show
        it in the reader's language when it is read."""
        stored = {"line": self.line, "field": self.field, "message": str(self.message)}
        if isinstance(self.message, Note):
            stored["note"] = self.message.as_json()
        return stored


class Problems:
    """Collects problems, keeping the first MAX_PROBLEMS and counting the rest."""

    def __init__(self):
        self.kept: list[Problem] = []
        self.total = 0

    def add(self, line: int, field_name: str, message: str, *, item_id: str = ""):
        self.total += 1
        if len(self.kept) < MAX_PROBLEMS:
            self.kept.append(Problem(line, field_name, message, item_id))

    def __bool__(self):
        return self.total > 0

    def rejection(self) -> "ImportRejected":
        return ImportRejected(self.kept, self.total)


class ImportRejected(Exception):
    """The file had problems; nothing was written."""

    def __init__(self, problems: list[Problem], total: int):
        self.problems = problems
        self.total = total
        super().__init__(f"{total} problem(s); nothing was imported")

    def lines(self) -> list[str]:
        """What a command prints of the problems, in the active language: those
        kept, then how many more there were."""
        lines = [problem.translated() for problem in self.problems]
        hidden = self.total - len(self.problems)
        if hidden:
            lines.append(
                ngettext(
                    "… and %(count)s more problem.",
                    "… and %(count)s more problems.",
                    hidden,
                )
                % {"count": hidden}
            )
        return lines

    def refusal(self, file_name: str) -> str:
        """A command's closing error for the file, in the active language."""
        return ngettext(
            "Rejected %(file)s: %(count)s problem; nothing was imported.",
            "Rejected %(file)s: %(count)s problems; nothing was imported.",
            self.total,
        ) % {"file": file_name, "count": self.total}


class JsonNumber(float):
    """A JSON number with a fraction or exponent, as a float that keeps the text it
    was written as: `2.9999999999999999` reads as 3.0, and an integer field must be
    able to tell."""

    text: str

    def __new__(cls, text: str):
        number = super().__new__(cls, text)
        if not math.isfinite(number):
            raise ValueError(f"the number {text[:40]} is out of range")
        number.text = text
        return number


MAX_INT_DIGITS = 30


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(text):,} digits is out of range")
    return int(text)


def _json_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """The `object_pairs_hook` of every JSON import: an object naming a key twice is
    refused. Python's json would keep the last silently, and which value a file
    meant is a guess (other readers keep the first)."""
    value = dict(pairs)
    if len(value) < len(pairs):
        seen = set()
        for key, _value in pairs:
            if key in seen:
                shown = key if len(key) <= 40 else key[:40] + "…"
                raise ValueError(f'the key "{shown}" appears twice in one object')
            seen.add(key)
    return value


def not_utf8(error: UnicodeDecodeError) -> Note:
    """A run file that is not UTF-8 (evaluate.py columns, lm-eval samples)."""
    return Note(
        gettext_noop("the file is not UTF-8 (%(reason)s)."), reason=error.reason
    )


def text_problem(value, path: str = "") -> tuple[str, str] | None:
    """(field, message) for the first string in `value` that no database column can
    hold — a NUL character or a lone surrogate — else None."""
    if isinstance(value, str):
        if "\x00" in value:
            return path, Note(gettext_noop("contains a NUL character (\\u0000)"))
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path, Note(
                gettext_noop("contains a lone surrogate (not a Unicode character)")
            )
        return None
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = ((f"[{index}]", element) for index, element in enumerate(value))
    else:
        return None
    for key, element in items:
        found = text_problem(key) or text_problem(
            element, f"{path}.{key}" if path else str(key)
        )
        if found:
            return found
    return None


def json_objects(
    lines: Iterable[str], problems: Problems
) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each JSON Lines line; other lines are problems.

    Numbers are read strictly (no NaN/Infinity, no overflow to infinity, integers of
    at most MAX_INT_DIGITS digits, fractions as JsonNumber), nesting deeper than
    Python's recursion limit is refused, and so are a key given twice in one object
    and strings holding a NUL or a lone surrogate.
    """
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            value = json.loads(
                text.rstrip("\r\n"),
                parse_float=JsonNumber,
                parse_int=_json_int,
                parse_constant=_json_constant,
                object_pairs_hook=unique_keys,
            )
        except json.JSONDecodeError as error:
            problems.add(
                number,
                "line",
                Note(
                    gettext_noop("malformed JSON (%(error)s at column %(column)s)"),
                    error=error.msg,
                    column=error.colno,
                ),
            )
            continue
        except ValueError as error:
            problems.add(
                number,
                "line",
                Note(gettext_noop("malformed JSON (%(error)s)"), error=str(error)),
            )
            continue
        except RecursionError:
            problems.add(
                number, "line", Note(gettext_noop("malformed JSON (nested too deeply)"))
            )
            continue
        if not isinstance(value, dict):
            problems.add(number, "line", Note(gettext_noop("expected a JSON object")))
            continue
        found = text_problem(value)
        if found:
            problems.add(number, *found)
            continue
        yield number, value
