"""The project's catalogues read as the tests need them: every English msgid of a
.po (translated or not) and whether the compiled .mo is current."""

import ast
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from django.conf import settings

LOCALE = Path(settings.LOCALE_PATHS[0])
# Django's language codes -> catalogue folders.
FOLDERS = {"zh-hans": "zh_Hans", "ru": "ru", "vi": "vi"}


@dataclass(frozen=True)
class Entry:
    context: str | None
    msgid: str
    plural: str | None
    translations: tuple[str, ...]
    locations: tuple[str, ...] = ()

    @property
    def translated(self) -> bool:
        return bool(self.translations) and all(self.translations)


def _string(lines: list[str]) -> str:
    return "".join(ast.literal_eval(line) for line in lines)


def entries(language: str, domain: str = "django") -> list[Entry]:
    """The catalogue's entries, the header left out."""
    path = LOCALE / FOLDERS[language] / "LC_MESSAGES" / f"{domain}.po"
    found = []
    for block in re.split(r"\n\s*\n", path.read_text(encoding="utf-8")):
        fields: dict[str, list[str]] = {}
        locations: list[str] = []
        fuzzy = False
        current = None
        for line in block.splitlines():
            if line.startswith("#:"):
                locations += line[2:].split()
            if line.startswith("#,") and "fuzzy" in line:
                fuzzy = True  # msgmerge's guess: msgfmt leaves it out
            if line.startswith("#") or not line.strip():
                continue
            match = re.match(
                r"(msgctxt|msgid_plural|msgid|msgstr(?:\[\d+\])?) (.*)", line
            )
            if match:
                current = match.group(1)
                fields[current] = [match.group(2)]
            elif current:
                fields[current].append(line)
        if "msgid" not in fields or not _string(fields["msgid"]):
            continue
        translations = tuple(
            "" if fuzzy else _string(lines)
            for key, lines in fields.items()
            if key.startswith("msgstr")
        )
        found.append(
            Entry(
                _string(fields["msgctxt"]) if "msgctxt" in fields else None,
                _string(fields["msgid"]),
                _string(fields["msgid_plural"]) if "msgid_plural" in fields else None,
                translations,
                tuple(locations),
            )
        )
    return found


def stale_catalogues() -> list[str]:
    """The .po files whose .mo is missing or older (make messages compiles them)."""
    stale = []
    for po in LOCALE.glob("*/LC_MESSAGES/*.po"):
        mo = po.with_suffix(".mo")
        if not mo.exists() or mo.stat().st_mtime < po.stat().st_mtime:
            stale.append(str(po.relative_to(LOCALE.parent)))
    return sorted(stale)


# The one list of English texts a translated page may show (tests/i18n): product and
# tool names, file formats, code identifiers, units — and the demo's data that
# reads like an interface string.
ALLOWED_ENGLISH = {
    "Assay",
    "API",
    "CSV",
    "JSON",
    "JSONL",
    "LaTeX",
    "Text",  # never shown alone: the report's download link is translated
    "Label Studio",
    "Label Studio…",
    "Argilla",
    "IndustryBench",
    "GB/T",
    # Keys keep their names in every language (the key dialog translates what
    # they do), as do the field's names of statistics and abbreviations.
    "Enter",
    "Fleiss' κ",
    "Krippendorff's α",
    "TP / FP / FN / TN",
    "RPM",
    "URL",
    "Webhooks",
    # Code identifiers shown as such: a prompt's message role, a subset's slug, a
    # webhook URL's placeholder.
    "system",
    "lpfqa-minus",
    "https://ci.example.org/assay-hook",
    # A model category the demo's manager typed (categories are the team's own).
    "closed",
    # The built-in prompt templates' notes ("Answer prompt for … items", "…SV check
    # against the source text"): data in the ledger like the prompts themselves.
    "Answer prompt",
    "SV check",
    # The demo's recorded call error ("the SV judge's reply was not valid JSON"),
    # quoted in a pending item's problem.
    "SV judge",
    # Names given to records (a search service, a campaign's "Translation review ·
    # run 1", named when the run ended), shown by the audit log as given.
    "Search service",
    "Translation review",
    # A search-verification stage's stored reason for its decision (ledger data,
    # written once in English like the prompts), shown as recorded.
    "No search result",
}

VOID_ELEMENTS = {"area", "br", "col", "hr", "img", "input", "link", "meta", "wbr"}

# Attributes a person reads (or hears from a screen reader).
READ_ATTRIBUTES = {"title", "aria-label", "placeholder", "alt"}


class _Texts(HTMLParser):
    """The texts a person reads on a page: text nodes outside scripts and styles,
    and the read attributes."""

    def __init__(self):
        super().__init__()
        self.texts: list[str] = []
        self._skip = 0
        # Open elements inside one marked data-recorded: data as it was recorded
        # (an item's history, the audit log's changes, a stored call error).
        self._recorded = 0

    # A figure (SVG) is a paper artefact, English in every interface like the
    # downloads.
    SKIPPED = ("script", "style", "svg")

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIPPED:
            self._skip += 1
        if tag not in VOID_ELEMENTS and (
            self._recorded or "data-recorded" in dict(attrs)
        ):
            self._recorded += 1
        for name, value in attrs:
            if name in READ_ATTRIBUTES and value and not self._recorded:
                self.texts.append(value)

    def handle_endtag(self, tag):
        if tag in self.SKIPPED and self._skip:
            self._skip -= 1
        if self._recorded and tag not in VOID_ELEMENTS:
            self._recorded -= 1

    def handle_data(self, data):
        if not self._skip and not self._recorded:
            self.texts.append(data)


def page_texts(html: str, latin_only: bool = True) -> list[str]:
    parser = _Texts()
    parser.feed(html)
    texts = (" ".join(text.split()) for text in parser.texts)
    return [text for text in texts if text and (not latin_only or LATIN.search(text))]


LATIN = re.compile("[A-Za-z]{2}")
# A msgid is cut into pieces at placeholders, markup and entities; a piece with a
# word in it is a probe unless a translation keeps it (CSV, GB/T, column names).
CUTS = re.compile(r"<[^>]*>|&\w+;|%\(\w+\)[sdr]|%[sd]|%%")
WORD = re.compile("[A-Za-z]{2,}")
EDGES = " \n\t·—–:;,.()[]“”\"'→←‹›…|/?!×"


def pieces(text: str) -> set[str]:
    found = set()
    for piece in CUTS.split(text):
        piece = " ".join(piece.split()).strip(EDGES)
        if WORD.search(piece):
            found.add(piece)
    return found


def english_patterns(language: str):
    """(words, phrases): the English pieces of every msgid the catalogue
    translates, less those its translations keep and ALLOWED_ENGLISH. A one-word
    piece is found as a whole text, a longer one as a run of whole words inside a
    text."""
    translated = [
        entry
        for entry in entries(language)
        # The demo's users are named after their roles.
        if entry.translated and entry.context != "role"
    ]
    kept = "\n".join(text for entry in translated for text in entry.translations)
    probes = set()
    for entry in translated:
        for english in filter(None, (entry.msgid, entry.plural)):
            probes |= {piece for piece in pieces(english) if piece not in kept}
    probes -= ALLOWED_ENGLISH
    words = {probe for probe in probes if " " not in probe}
    phrases = sorted(probes - words, key=len, reverse=True)
    pattern = re.compile(
        r"(?<![\w])(?:" + "|".join(map(re.escape, phrases)) + r")(?![\w])"
    )
    return words, pattern


def english_left(html: str, patterns) -> list[str]:
    """The English pieces of the catalogue the page shows."""
    words, pattern = patterns
    found = []
    for text in page_texts(html):
        if text.strip(EDGES) in words:
            found.append(text)
        else:
            found += pattern.findall(text)
    return found
