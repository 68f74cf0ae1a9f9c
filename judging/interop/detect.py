"""Which tool wrote an uploaded run file, from its first bytes: an Inspect log
(a `.eval` zip, or JSON with an `eval` spec), lm-evaluation-harness samples (JSON
Lines whose lines hold `doc_id` and `doc`), or Assay's own evaluate.py columns
(CSV or JSON Lines). Pure."""

from __future__ import annotations

import json

from django.utils.translation import gettext_noop

from benchmark.notes import Note

INSPECT = "inspect"
LM_EVAL = "lm-eval"
EVALUATE = "evaluate"
# Notes (benchmark.notes): English on the command line, translated on the page.
FORMAT_NAMES = {
    INSPECT: Note(gettext_noop("Inspect AI log")),
    LM_EVAL: Note(gettext_noop("lm-evaluation-harness samples")),
    EVALUATE: Note(gettext_noop("evaluate.py columns (CSV or JSON Lines)")),
}


def detect_format(data: bytes) -> str:
    if data.startswith(b"PK\x03\x04"):
        return INSPECT
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"{"):
        return EVALUATE
    first_line = head.split(b"\n", 1)[0]
    try:
        first = json.loads(first_line)
    except ValueError:
        # A pretty-printed JSON document: only an Inspect log is one.
        return INSPECT if b'"eval":' in data[:65536] else EVALUATE
    if isinstance(first, dict) and "doc_id" in first and "doc" in first:
        return LM_EVAL
    if isinstance(first, dict) and "eval" in first and "samples" in first:
        return INSPECT
    return EVALUATE
