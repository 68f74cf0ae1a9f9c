"""The four roles are Django groups; managers can do everything the others can."""

from functools import wraps

from django.core.exceptions import PermissionDenied
from django.db import models
from django.utils.translation import gettext_lazy as _


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


def user_roles(user) -> set[str]:
    """The roles a user acts in; a superuser or manager holds every role."""
    if not user.is_authenticated:
        return set()
    if user.is_superuser:
        return set(Role.values)
    cached = getattr(user, "_assay_roles", None)
    if cached is None:
        names = set(user.groups.values_list("name", flat=True)) & set(Role.values)
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
