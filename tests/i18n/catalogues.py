"""The project's catalogues read as the tests need them: every English msgid of a
.po (translated or not) and whether the compiled .mo is current."""

import ast
import re
from dataclasses import dataclass
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
        current = None
        for line in block.splitlines():
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
            _string(lines) for key, lines in fields.items() if key.startswith("msgstr")
        )
        found.append(
            Entry(
                _string(fields["msgctxt"]) if "msgctxt" in fields else None,
                _string(fields["msgid"]),
                _string(fields["msgid_plural"]) if "msgid_plural" in fields else None,
                translations,
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
