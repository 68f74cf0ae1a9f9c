"""psycopg's text dumper of lists, escaping with bytes.replace.

On PostgreSQL, Django 5.2 writes a bulk_create's rows as one array per column
(INSERT … SELECT * FROM UNNEST(%s::jsonb[], …)), and with its client-side
binding psycopg writes each array with its text list dumper. That dumper puts a
backslash before each quote and backslash of an element through a regular
expression's replacement template: one Python call per character on Python
3.11. JSON as Django's JSONField writes it (ensure_ascii) has a backslash per
non-ASCII character, so a search-verification decision's evidence (fifteen
Chinese results) took about 1 ms to escape, 70 times what two replaces take —
a large share of the construction workers' CPU per call
(bench/construction_bench.py).
"""

from psycopg import adapters
from psycopg.types.array import ListDumper


class _Escape:
    """What ListDumper does with its `_re_esc` pattern — `sub(rb"\\\\\\1", item)`
    for the pattern `(["\\\\])` — done in C: backslashes doubled first, so the
    ones put before the quotes stay single."""

    @staticmethod
    def sub(_template, item) -> bytes:
        return bytes(item).replace(b"\\", b"\\\\").replace(b'"', b'\\"')


class FastListDumper(ListDumper):
    _re_esc = _Escape()


def register() -> None:
    """Dump lists with FastListDumper in every connection opened from now on
    (Django copies psycopg's adapters when it opens its first connection)."""
    adapters.register_dumper(list, FastListDumper)
