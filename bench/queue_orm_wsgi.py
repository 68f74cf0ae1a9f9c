"""gunicorn's application for `queue_bench.py --orm`: the annotation queue's
claim and first-label write go through the ORM path of reviewqueue/overlap.py on
PostgreSQL, so the bench measures what its plain SQL saves. Never used outside
the bench."""

from importlib import import_module

from assay.wsgi import application

# Imported once Django is set up (assay.wsgi does that).
import_module("reviewqueue.overlap").plain_sql = lambda: False

__all__ = ["application"]
