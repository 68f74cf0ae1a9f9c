"""The four roles are Django groups; managers can do everything the others can."""

from functools import cache, wraps

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db import models
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
    (role_required), so a plain statement, prepared once per connection on
    PostgreSQL (reviewqueue/sql.py), not an ORM query compiled each time."""
    groups = get_user_model().groups.field
    return (
        f"SELECT g.name FROM {groups.related_model._meta.db_table} g "
        f"JOIN {groups.remote_field.through._meta.db_table} ug "
        f"ON ug.{groups.m2m_reverse_name()} = g.id "
        f"WHERE ug.{groups.m2m_column_name()} = %s"
    )


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
            names = {name for (name,) in cursor.fetchall()} & set(Role.values)
        cached = set(Role.values) if Role.MANAGER in names else names
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
