"""The cursor the review queue's plain SQL statements run on.

On PostgreSQL each statement is prepared once per connection and then only
executed: the claim's and submit's statements took about 2 ms of PostgreSQL CPU per
submit+next to *plan* against well under 1 ms to run (bench/queue_bench.py, docs/
BENCHMARKS.md), and a prepared statement is planned once. Django leaves psycopg's
prepared statements off (`prepare_threshold` None, for transaction-mode connection
poolers) and binds parameters on the client; this cursor binds them on the server
and prepares, for these statements only. `DB_PREPARED_STATEMENTS=0` (settings
`QUEUE_PREPARED_STATEMENTS`) turns it off behind a pooler that cannot keep them.
The statements still go through Django's cursor wrapper, so they are logged and
counted like any other.

`insert` stores a new row (a submitted label) through the same cursor: the ORM's
`create` compiles its INSERT anew each time, about half of a submit's Python CPU
beside the two queue statements.
"""

from contextlib import contextmanager

from django.conf import settings
from django.db import connection

# psycopg prepares a statement once it has run this many times on a connection (or
# at once when asked); Django's own client-binding cursors never prepare, so
# setting it on the connection changes nothing for them.
PREPARE_AFTER = 0


@contextmanager
def queue_cursor():
    """A cursor on the default connection for the queue's plain statements."""
    if connection.vendor != "postgresql" or not settings.QUEUE_PREPARED_STATEMENTS:
        with connection.cursor() as cursor:
            yield cursor
        return
    from django.db.backends.postgresql.base import ServerBindingCursor

    connection.ensure_connection()
    raw = connection.connection
    if raw.prepare_threshold is None:
        raw.prepare_threshold = PREPARE_AFTER
    cursor = ServerBindingCursor(raw)
    wrapped = (
        _logged_cursor(cursor)
        if connection.queries_logged
        else connection.make_cursor(cursor)
    )
    with wrapped:
        yield wrapped


def insert(instance):
    """Store a new model instance as `instance.save()` would (field defaults and
    `auto_now_add` filled in the same way; the models it is used for have no save
    signals), with one prepared INSERT … RETURNING its primary key on PostgreSQL;
    through the ORM elsewhere."""
    if connection.vendor != "postgresql":
        instance.save(force_insert=True)
        return instance
    meta = instance._meta
    fields = [field for field in meta.concrete_fields if not field.primary_key]
    columns = ", ".join(connection.ops.quote_name(field.column) for field in fields)
    values = [
        field.get_db_prep_save(field.pre_save(instance, True), connection)
        for field in fields
    ]
    with queue_cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {connection.ops.quote_name(meta.db_table)} ({columns}) "
            f"VALUES ({', '.join(['%s'] * len(fields))}) "
            f"RETURNING {connection.ops.quote_name(meta.pk.column)}",
            values,
        )
        instance.pk = cursor.fetchone()[0]
    instance._state.adding = False
    instance._state.db = connection.alias
    return instance


def _logged_cursor(cursor):
    """Django's debug wrapper reads the statement's text back from psycopg, which
    keeps none for a prepared one; this one logs it with its values filled in."""
    from django.db.backends.postgresql.base import CursorDebugWrapper
    from django.db.backends.utils import CursorWrapper

    class PreparedDebugCursor(CursorDebugWrapper):
        def execute(self, sql, params=None):
            with self.debug_sql(self.db.ops.compose_sql(sql, params)):
                return CursorWrapper.execute(self, sql, params)

    return PreparedDebugCursor(cursor, connection)
