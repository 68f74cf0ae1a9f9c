"""State changes for benchmark construction.

`check_…` functions validate and raise ValidationError with a message for the user;
`do_…` functions write under `transaction.atomic` and queue Celery work on commit.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from benchmark.models import Benchmark
from construction.models import Source
from construction.sources import read_sources


@dataclass(frozen=True)
class SourceImport:
    added: int
    already_present: int  # in the benchmark before, or earlier in the same file

    def __str__(self):
        if not self.added:
            return (
                f"Nothing added: all {self.already_present} source(s) were already "
                "there."
            )
        kept = (
            f"; {self.already_present} already there, skipped"
            if self.already_present
            else ""
        )
        return f"{self.added} source(s) added{kept}."


@transaction.atomic
def do_import_sources(benchmark: Benchmark, data: bytes, filename: str):
    """Add the file's sources to the benchmark, all or nothing (ImportRejected
    with every problem by line and field); a source whose content hash the
    benchmark already holds is skipped, so importing a file again adds nothing."""
    records, problems = read_sources(data, filename)
    if problems:
        raise problems.rejection()
    known = set(
        Source.objects.filter(
            benchmark=benchmark,
            content_hash__in=[record.content_hash for record in records],
        ).values_list("content_hash", flat=True)
    )
    new = []
    for record in records:
        if record.content_hash in known:
            continue
        known.add(record.content_hash)
        new.append(
            Source(
                benchmark=benchmark,
                kind=record.kind,
                reference=record.reference,
                text=record.text,
                fields=record.fields,
                content_hash=record.content_hash,
            )
        )
    # ignore_conflicts: an import of the same file racing this one adds each
    # source once.
    Source.objects.bulk_create(new, ignore_conflicts=True)
    return SourceImport(added=len(new), already_present=len(records) - len(new))
