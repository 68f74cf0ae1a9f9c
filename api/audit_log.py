"""The audit log's read side: changes django-auditlog recorded (see each app's
`audit.py`) and django-axes' sign-in records, merged into one stream, newest first.

Entries from the three tables are merged in the database as (source, id, time)
triples, so paging and counting stay queries; only a page's entries are then loaded,
one query per table."""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from itertools import islice

from auditlog.models import LogEntry
from auditlog.registry import auditlog
from axes.models import AccessFailureLog, AccessLog
from django.db.models import CharField, F, Value
from django.utils import timezone, translation
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy

from benchmark.csv_writer import csv_lines

CHANGE, LOGIN, FAILED_LOGIN = "change", "login", "failed_login"
SIGN_IN_KINDS = {
    LOGIN: gettext_lazy("Sign-ins"),
    FAILED_LOGIN: gettext_lazy("Failed sign-ins"),
}

ACTIONS = {
    LogEntry.Action.CREATE: "created",
    LogEntry.Action.UPDATE: "changed",
    LogEntry.Action.DELETE: "deleted",
    LogEntry.Action.ACCESS: "used",
}

CSV_HEADER = ["when", "who", "kind", "object", "action", "changes", "address"]


@dataclass(frozen=True)
class AuditFilter:
    kind: str = ""  # "" (everything), a model label "app.model", LOGIN, FAILED_LOGIN
    actor: str = ""  # a username, any case
    since: date | None = None
    until: date | None = None  # inclusive


@dataclass
class Entry:
    at: datetime
    who: str
    kind: str
    what: str
    action: str
    changes: list[str] = field(default_factory=list)
    address: str = ""


def kind_choices() -> list[tuple[str, str]]:
    models = sorted(auditlog.get_models(), key=lambda model: model._meta.label_lower)
    return [
        ("", gettext_lazy("Everything")),
        *[
            (model._meta.label_lower, capfirst(model._meta.verbose_name_plural))
            for model in models
        ],
        *SIGN_IN_KINDS.items(),
    ]


def entry_keys(audit_filter: AuditFilter):
    """(source, id, time) of every matching entry, newest first, as one query."""
    keyed = [
        queryset.annotate(source=Value(source, CharField()), at=F(time_field))
        .values_list("source", "pk", "at")
        .order_by()
        for source, queryset, time_field in _sources(audit_filter)
    ]
    first, *others = keyed
    return first.union(*others, all=True).order_by("-at", "-pk")


def load_entries(keys: Iterable[tuple[str, int, datetime]]) -> list[Entry]:
    """The entries of these keys, in their order: one query per source."""
    keys = list(keys)
    ids = {source: [] for source in (CHANGE, LOGIN, FAILED_LOGIN)}
    for source, pk, _at in keys:
        ids[source].append(pk)
    loaded = {}
    if ids[CHANGE]:
        changes = LogEntry.objects.filter(pk__in=ids[CHANGE]).select_related(
            "actor", "content_type"
        )
        loaded.update(((CHANGE, e.pk), _change_entry(e)) for e in changes)
    if ids[LOGIN]:
        logins = AccessLog.objects.filter(pk__in=ids[LOGIN])
        loaded.update(((LOGIN, e.pk), _login_entry(e)) for e in logins)
    if ids[FAILED_LOGIN]:
        failures = AccessFailureLog.objects.filter(pk__in=ids[FAILED_LOGIN])
        loaded.update(((FAILED_LOGIN, e.pk), _failure_entry(e)) for e in failures)
    return [loaded[source, pk] for source, pk, _at in keys]


def csv_rows(audit_filter: AuditFilter, batch: int = 500) -> Iterator[str]:
    """The whole filtered log as CSV lines, loaded a batch at a time."""
    keys = entry_keys(audit_filter).iterator(chunk_size=batch)
    return csv_lines(CSV_HEADER, _csv_cells(keys, batch))


def change_lines(changes: dict) -> list[str]:
    """Each field's change as "field: before → after" (members added or removed
    for a many-to-many field such as a user's groups)."""
    lines = []
    for name, change in changes.items():
        if isinstance(change, dict) and change.get("type") == "m2m":
            sign = "+" if change.get("operation") == "add" else "−"
            lines.append(f"{name}: {sign} {', '.join(change.get('objects', []))}")
        else:
            before, after = change
            lines.append(f"{name}: {_shown(before)} → {_shown(after)}")
    return lines


def _sources(audit_filter: AuditFilter):
    kind, actor = audit_filter.kind, audit_filter.actor
    if kind not in SIGN_IN_KINDS:
        changes = LogEntry.objects.all()
        if kind:
            app_label, _, model = kind.partition(".")
            changes = changes.filter(
                content_type__app_label=app_label, content_type__model=model
            )
        if actor:
            changes = changes.filter(actor__username__iexact=actor)
        yield CHANGE, _between(changes, "timestamp", audit_filter), "timestamp"
    for source, model in ((LOGIN, AccessLog), (FAILED_LOGIN, AccessFailureLog)):
        if kind in ("", source):
            records = model.objects.all()
            if actor:
                records = records.filter(username__iexact=actor)
            yield (
                source,
                _between(records, "attempt_time", audit_filter),
                ("attempt_time"),
            )


def _between(queryset, time_field: str, audit_filter: AuditFilter):
    if audit_filter.since:
        queryset = queryset.filter(**{f"{time_field}__gte": _day(audit_filter.since)})
    if audit_filter.until:
        end = _day(audit_filter.until + timedelta(days=1))
        queryset = queryset.filter(**{f"{time_field}__lt": end})
    return queryset


def _day(day: date) -> datetime:
    # Days are the reader's (TIME_ZONE), as the page shows times.
    return timezone.make_aware(datetime.combine(day, time.min))


def _change_entry(entry: LogEntry) -> Entry:
    return Entry(
        at=entry.timestamp,
        who=entry.actor.get_username() if entry.actor else "",
        kind=capfirst(entry.content_type.name),
        what=entry.object_repr,
        action=ACTIONS.get(entry.action, str(entry.action)),
        changes=change_lines(entry.changes_dict),
        address=entry.remote_addr or "",
    )


def _login_entry(record: AccessLog) -> Entry:
    action = "signed in"
    if record.logout_time:
        signed_out = timezone.localtime(record.logout_time)
        action += f", out at {signed_out:%Y-%m-%d %H:%M}"
    return Entry(
        at=record.attempt_time,
        who=record.username or "",
        kind="Sign-in",
        what=record.user_agent,
        action=action,
        address=record.ip_address or "",
    )


def _failure_entry(record: AccessFailureLog) -> Entry:
    return Entry(
        at=record.attempt_time,
        who=record.username or "",
        kind="Failed sign-in",
        what=record.user_agent,
        action="failed, locked out" if record.locked_out else "failed",
        address=record.ip_address or "",
    )


def _shown(value) -> str:
    return "—" if value in (None, "None", "") else str(value)


def _csv_cells(keys: Iterator, batch: int) -> Iterator[list]:
    while chunk := list(islice(keys, batch)):
        # A download is English in every interface: the kinds are the models'
        # (translated) names.
        with translation.override("en"):
            rows = [
                [
                    timezone.localtime(entry.at).isoformat(),
                    entry.who,
                    entry.kind,
                    entry.what,
                    entry.action,
                    "; ".join(entry.changes),
                    entry.address,
                ]
                for entry in load_entries(chunk)
            ]
        yield from rows
