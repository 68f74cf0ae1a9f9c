"""What the item import reads into: the layouts and their columns, the records a
row becomes, the labels a value names, and the summary of an import."""

import re
from dataclasses import dataclass, field

from django.utils.translation import gettext_noop

from benchmark import formats
from benchmark.models import Benchmark, Item, Label, Rendering
from benchmark.notes import Note, noop
from benchmark.taxonomy import fold_label

BATCH_SIZE = 2000

INDUSTRYBENCH = "industrybench"
GENERIC_JSONL = "jsonl"
LAYOUTS = ("auto", INDUSTRYBENCH, GENERIC_JSONL)

# The public dataset's label columns and the taxonomy dimensions they fill.
LABEL_COLUMNS = {"capability": "capability", "industry_primary": "industry"}
EXTRA_LABEL_PREFIX = "label_"
# A wider header is no benchmark file; reading one would only pin a worker.
MAX_COLUMNS = 10_000
BASE_COLUMNS = (
    "id",
    "question",
    "answer",
    "difficulty",
    "_format",
    "industry_primary",
    "capability",
    "knowledge_text",
    "domain",
)
OPTIONAL_COLUMNS = ("source_kind", "source_reference", "status")
# An item's format and answer key. `format` and `_format` already name the source
# file's format (Item.source_format), hence `item_format`.
FORMAT_FIELDS = ("item_format", "correct_options", "multiple_answers", "correct_answer")
# One column per option and per key point (option_a … option_g, key_point_1 …
# key_point_5), suffixed _<language> for a translation like question_<language>.
OPTION_PREFIX = "option_"
KEY_POINT_PREFIX = "key_point_"
OPTION_KEYS = formats.LETTERS.lower()
KEY_POINT_KEYS = "".join(str(n) for n in range(1, formats.MAX_KEY_POINTS + 1))
GENERIC_KEYS = {
    *FORMAT_FIELDS,
    "id",
    "source_kind",
    "source_reference",
    "knowledge_text",
    "domain",
    "difficulty",
    "status",
    "format",
    "labels",
    "renderings",
}
RENDERING_KEYS = {
    "question",
    "answer",
    "origin",
    "review_status",
    "options",
    "key_points",
}

DIFFICULTIES = set(Item.Difficulty.values)
SOURCE_KINDS = set(Item.SourceKind.values)
STATUSES = set(Item.Status.values)
ORIGINS = set(Rendering.Origin.values)
REVIEW_STATUSES = set(Rendering.ReviewStatus.values)
ITEM_FORMATS = set(Item.Format.values)
# Plain strings, not enum members: they are written for every rendering.
SOURCE_ORIGIN = Rendering.Origin.SOURCE.value
IMPORTED_ORIGIN = Rendering.Origin.IMPORTED.value
APPROVED = Rendering.ReviewStatus.APPROVED.value

GBT_REFERENCE = re.compile(r"\bGB(?:/T)?\s?\d+(?:\.\d+)*-\d{4}\b")


@dataclass
class RenderingRecord:
    question: str
    answer: str
    origin: str
    review_status: str
    # None: the file has no options / key points at all (an update keeps the
    # current ones); a list, possibly empty, when it has.
    options: list[str] | None = None
    key_points: list[str] | None = None


@dataclass
class ItemRecord:
    line: int
    external_id: str
    source_kind: str = Item.SourceKind.OTHER
    source_reference: str = ""
    knowledge_text: str = ""
    domain: str = ""
    difficulty: str = ""
    status: str = Item.Status.ACTIVE
    source_format: str = ""
    # None: the file says nothing about formats; a new item is open QA and an
    # update leaves the format and answer key alone.
    item_format: str | None = None
    correct_options: list[str] = field(default_factory=list)
    multiple_answers: bool = False
    correct_answer: bool | None = None
    labels: list[Label] = field(default_factory=list)
    renderings: dict[str, RenderingRecord] = field(default_factory=dict)


@dataclass
class ImportSummary:
    benchmark: Benchmark
    layout: str
    benchmark_created: bool = False
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    renderings_added: int = 0
    labels_set: int = 0
    human_labels_kept: list[str] = field(default_factory=list)
    ignored_fields: list[str] = field(default_factory=list)

    def lines(self) -> list[Note]:
        """The summary as Notes: English as strings (the command line, the REST
        API, a webhook), in the reader's language on a page (benchmark.notes)."""
        counts = {
            "benchmark": self.benchmark.slug,
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "layout": self.layout,
        }
        if self.benchmark_created:
            first = gettext_noop(
                "Benchmark %(benchmark)s (new): %(created)s created, %(updated)s "
                "updated, %(unchanged)s unchanged (%(layout)s layout)."
            )
        else:
            first = gettext_noop(
                "Benchmark %(benchmark)s: %(created)s created, %(updated)s updated, "
                "%(unchanged)s unchanged (%(layout)s layout)."
            )
        text = [Note(first, **counts)]
        if self.updated:
            text.append(
                Note(
                    noop.ngettext(
                        "%(count)s new rendering version.",
                        "%(count)s new rendering versions.",
                    ),
                    count=self.renderings_added,
                )
            )
            text.append(
                Note(
                    noop.ngettext(
                        "%(count)s label changed.", "%(count)s labels changed."
                    ),
                    count=self.labels_set,
                )
            )
        if self.human_labels_kept:
            kept = ", ".join(self.human_labels_kept[:20])
            if len(self.human_labels_kept) > 20:
                kept += " …"
            text.append(
                Note(
                    gettext_noop(
                        "Kept human label decisions over the file for: %(items)s"
                    ),
                    items=kept,
                )
            )
        if self.ignored_fields:
            text.append(
                Note(
                    gettext_noop("Ignored columns: %(columns)s"),
                    columns=", ".join(self.ignored_fields),
                )
            )
        return text


class Taxonomy:
    """Label lookup for one benchmark: by code, name or declared alias, each read
    through `fold_label` (case, spacing, `&`/`and` do not matter)."""

    def __init__(self, benchmark: Benchmark):
        self.dimensions = {d.code: d for d in benchmark.dimensions.all()}
        self._labels: dict[tuple[str, str], set[Label]] = {}
        for dimension in self.dimensions.values():
            for label in dimension.labels.all():
                for text in {label.code, label.name, *label.aliases}:
                    key = (dimension.code, fold_label(text))
                    self._labels.setdefault(key, set()).add(label)

    def resolve(
        self, dimension_code: str, value: str
    ) -> tuple[Label | None, Note | None]:
        """(the label `value` names, None) or (None, why not): unknown, or the name of
        two labels at once — never a guess between them."""
        found = self._labels.get((dimension_code, fold_label(value)), set())
        if len(found) == 1:
            return next(iter(found)), None
        if not found:
            return None, Note(
                gettext_noop("unknown %(dimension)s label %(value)s"),
                dimension=dimension_code,
                value=repr(value),
            )
        names = ", ".join(sorted(f"{label.name} ({label.code})" for label in found))
        return None, Note(
            gettext_noop(
                "%(dimension)s label %(value)s is ambiguous: it names %(names)s"
            ),
            dimension=dimension_code,
            value=repr(value),
            names=names,
        )
