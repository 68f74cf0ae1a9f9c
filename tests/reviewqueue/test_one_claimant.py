"""Only the review-queue engine hands out review work (#26): no screen picks "the
next item" itself. Its overlap-1 half (reviewqueue/engine.py) serves the audits,
variant drafts and dangling-reference flags, its overlap-N half
(reviewqueue/overlap.py) the annotation campaigns."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APPS = ["assay", "benchmark", "judging", "construction", "annotation", "api"]
ENGINES = {"reviewqueue/engine.py", "reviewqueue/overlap.py"}

# What handing out review work looks like: a lease or assignment written, a row
# locked while others skip it, or a screen choosing the next item itself (the
# helpers and the `?after=` cursor the screens used before the engine).
CLAIMS = [
    re.compile(r"Lease\.objects\.(create|bulk_create|get_or_create)"),
    re.compile(r"\bLease\(queue"),
    re.compile(r"skip_locked\s*=\s*True|SKIP LOCKED", re.IGNORECASE),
    re.compile(r"INSERT INTO annotation_assignment", re.IGNORECASE),
    # An assignment born active is a lease (submitted ones record a label).
    re.compile(r"Assignment(\.objects\.create)?\([^)]*Status\.ACTIVE", re.S),
    re.compile(r"def (next_item|next_draft|flag_to_review)\b"),
    re.compile(r"\?after=|GET\.get\(\"after\""),
]


def sources():
    for app in APPS + ["reviewqueue"]:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" not in path.parts:
                yield path.relative_to(ROOT).as_posix(), path.read_text()
    for path in (ROOT / "templates").rglob("*.html"):
        yield path.relative_to(ROOT).as_posix(), path.read_text()


@pytest.mark.smoke
def test_the_engines_are_the_only_claimants():
    found = [
        (name, pattern.pattern)
        for name, text in sources()
        if name not in ENGINES
        for pattern in CLAIMS
        if pattern.search(text)
    ]
    assert found == []
