from django.utils.translation import pgettext_lazy

from assay.per_language import per_language
from benchmark.roles import Role, user_roles

# The header's short names of the roles (the role codes, in English).
ROLE_SHORT_NAMES = {
    Role.ADJUDICATOR: pgettext_lazy("role", "adjudicator"),
    Role.EXPERT: pgettext_lazy("role", "expert"),
    Role.MANAGER: pgettext_lazy("role", "manager"),
    Role.REVIEWER: pgettext_lazy("role", "reviewer"),
}


@per_language
def role_names(held: tuple) -> str:
    """The header's "expert, reviewer", translated once per language and roles."""
    return ", ".join(str(ROLE_SHORT_NAMES[role]) for role in held)


def roles(request):
    held = user_roles(request.user) if hasattr(request, "user") else set()
    return {
        "user_roles": held,
        "role_names": role_names(tuple(sorted(held))),
        "is_manager": Role.MANAGER in held,
    }
