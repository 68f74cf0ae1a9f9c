"""bulk_create's columns reach PostgreSQL as text arrays written by
assay.postgres.FastListDumper: every character an element may hold comes back
as it was, in text and JSON columns."""

import pytest
from django.db import connection
from psycopg.adapt import PyFormat

from assay.postgres import FastListDumper
from benchmark.models import Benchmark

pytestmark = pytest.mark.django_db

AWKWARD = [
    'a "quoted" word',
    'back\\slash and \\\\ two, and \\" a quote after one',
    "{braces}, commas, and spaces ",
    "NULL",
    "",
    "额定电压 ≥ 250 V（GB/T 2099.1）",
    "a line\nanother\ttab",
    '\\"',
    '"',
    "\\",
]


def test_django_connections_dump_lists_with_the_fast_dumper():
    connection.ensure_connection()
    dumper = connection.connection.adapters.get_dumper(list, PyFormat.TEXT)
    assert issubclass(dumper, FastListDumper)


def test_bulk_created_text_and_json_come_back_unchanged():
    rows = Benchmark.objects.bulk_create(
        [
            Benchmark(
                name=f"awkward {n}",
                slug=f"awkward-{n}",
                description=text,
                target_languages=[text, {'key "q" \\': text}, None, 1.5],
            )
            for n, text in enumerate(AWKWARD)
        ]
    )
    stored = Benchmark.objects.in_bulk([row.pk for row in rows])
    for row, text in zip(rows, AWKWARD, strict=True):
        assert stored[row.pk].description == text
        assert stored[row.pk].target_languages == [
            text,
            {'key "q" \\': text},
            None,
            1.5,
        ]


def test_a_text_array_round_trips_through_unnest():
    with connection.cursor() as cursor:
        cursor.execute("SELECT unnest(%s::text[])", [AWKWARD])
        assert [row[0] for row in cursor.fetchall()] == AWKWARD
