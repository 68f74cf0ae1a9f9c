"""The core every all-or-nothing import shares (items: benchmark.importing; results
of an evaluation run: judging.evaluation.importing): problems at row level, a
collector that keeps the first MAX_PROBLEMS and counts the rest, the rejection that
carries them (nothing was written), and reading JSON Lines."""

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

MAX_PROBLEMS = 100


@dataclass(frozen=True)
class Problem:
    line: int  # 0: the file as a whole
    field: str  # the column or key at fault, or "" when the row is
    message: str
    item_id: str = ""

    def __str__(self):
        where = f"line {self.line}" if self.line or self.field else "file"
        if self.item_id:
            where += f" (id {self.item_id})"
        if self.field:
            where += f", {self.field}"
        return f"{where}: {self.message}"


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


def json_objects(
    lines: Iterable[str], problems: Problems
) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each JSON Lines line; other lines are problems."""
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            value = json.loads(text.rstrip("\r\n"))
        except json.JSONDecodeError as error:
            problems.add(
                number, "line", f"malformed JSON ({error.msg} at column {error.colno})"
            )
            continue
        if not isinstance(value, dict):
            problems.add(number, "line", "expected a JSON object")
            continue
        yield number, value
