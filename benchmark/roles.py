"""The four roles are Django groups; managers can do everything the others can."""

from functools import cache, wraps

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db import connection, models
from django.utils.translation import gettext_lazy as _

from reviewqueue.sql import queue_cursor


class Role(models.TextChoices):
    MANAGER = "manager", _("Manager")
    EXPERT = "expert", _("Domain expert")
    ADJUDICATOR = "adjudicator", _("Adjudicator")
    REVIEWER = "reviewer", _("Translation reviewer")


# Model permissions each group carries, as "app_label.codename"; they make the admin
# and `user.has_perm` agree with the role checks in views.
ROLE_PERMISSIONS: dict[str, list[str]] = {
    # The audit log is read, never edited, even in the admin.
    Role.MANAGER: ["benchmark.manage_benchmark", "auditlog.view_logentry"],
    Role.EXPERT: [],
    Role.ADJUDICATOR: [],
    Role.REVIEWER: [],
}

# Managers hold every model permission of these apps, so the admin shows them every
# changelist (they are staff) and "managers can do everything" holds there too —
# sign-in lockouts (axes) included: deleting an access attempt lifts a lock; and
# API tokens: a manager can revoke anyone's.
MANAGER_APPS = (
    "auth",
    "benchmark",
    "judging",
    "construction",
    "annotation",
    "axes",
    "api",
)


@cache
def group_names_sql() -> str:
    """The names of a person's groups: read on every signed-in request
    (role_required) of a session signed in before `user_with_roles` existed, so a
    plain statement, prepared once per connection on PostgreSQL
    (reviewqueue/sql.py), not an ORM query compiled each time."""
    groups = get_user_model().groups.field
    return (
        f"SELECT g.name FROM {groups.related_model._meta.db_table} g "
        f"JOIN {groups.remote_field.through._meta.db_table} ug "
        f"ON ug.{groups.m2m_reverse_name()} = g.id "
        f"WHERE ug.{groups.m2m_column_name()} = %s"
    )


@cache
def _user_with_group_names_sql():
    """The user's columns and one of their groups' names, a row per group (one
    row with no name for a user without groups): plain SQL on PostgreSQL and
    SQLite alike. Returned with each column's converters, the ones the ORM would
    apply (on SQLite, for one, a datetime comes back as text). Kept for the
    process: the converters depend on the database's settings (its time zone), not
    on which thread's connection first asked for them."""
    user_model = get_user_model()
    meta = user_model._meta
    groups = user_model.groups.field
    group_meta = groups.related_model._meta
    quote = connection.ops.quote_name
    pk = quote(meta.pk.column)
    columns = ", ".join(f"u.{quote(field.column)}" for field in meta.concrete_fields)
    sql = (
        f"SELECT {columns}, g.{quote('name')} FROM {quote(meta.db_table)} u "
        f"LEFT JOIN {quote(groups.remote_field.through._meta.db_table)} ug "
        f"ON ug.{quote(groups.m2m_column_name())} = u.{pk} "
        f"LEFT JOIN {quote(group_meta.db_table)} g "
        f"ON g.{quote(group_meta.pk.column)} = ug.{quote(groups.m2m_reverse_name())} "
        f"WHERE u.{pk} = %s"
    )
    converters = []
    for field in meta.concrete_fields:
        column = field.get_col(meta.db_table)
        converters.append(
            (
                column,
                [
                    *connection.ops.get_db_converters(column),
                    *column.get_db_converters(connection),
                ],
            )
        )
    return sql, converters


def user_with_roles(user_id):
    """The user with this primary key, their roles already read (where
    `user_roles` looks for them), in one statement; None if there is no such
    user. The sign-in backend (benchmark/auth_backends.py) loads the signed-in
    user with it on every request, instead of a read of the user and then one of
    their groups."""
    sql, converters = _user_with_group_names_sql()
    with queue_cursor() as cursor:
        cursor.execute(sql, [user_id])
        rows = cursor.fetchall()
    if not rows:
        return None
    values = []
    # The user's columns; the row's last value, the group's name, has no converter.
    for value, (column, functions) in zip(rows[0], converters, strict=False):
        for function in functions:
            value = function(value, column, connection)
        values.append(value)
    user_model = get_user_model()
    user = user_model.from_db(
        connection.alias,
        [field.attname for field in user_model._meta.concrete_fields],
        values,
    )
    user._assay_roles = _roles_of({row[-1] for row in rows if row[-1] is not None})
    return user


def _roles_of(group_names: set[str]) -> set[str]:
    """The roles these groups give; a manager holds every role."""
    names = group_names & set(Role.values)
    return set(Role.values) if Role.MANAGER in names else names


def user_roles(user) -> set[str]:
    """The roles a user acts in; a superuser or manager holds every role."""
    if not user.is_authenticated:
        return set()
    if user.is_superuser:
        return set(Role.values)
    cached = getattr(user, "_assay_roles", None)
    if cached is None:
        with queue_cursor() as cursor:
            cursor.execute(group_names_sql(), [user.pk])
            cached = _roles_of({name for (name,) in cursor.fetchall()})
        user._assay_roles = cached
    return cached


def has_role(user, *roles: str) -> bool:
    return bool(user_roles(user) & set(roles))


def role_required(*roles: str):
    """View decorator: 403 unless the user holds one of `roles` (managers always do)."""

    def decorator(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if not has_role(request.user, *roles):
                raise PermissionDenied
            return view(request, *args, **kwargs)

        # Read by the REST API, which refuses a caller before reading the body.
        wrapped.roles = roles
        return wrapped

    return decorator
