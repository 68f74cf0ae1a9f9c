"""What the audit log records of this app: the taxonomy and who holds which role.

Items are not here: they keep their own history (`ItemEvent`)."""

from auditlog.registry import auditlog
from django.contrib.auth import get_user_model

from benchmark.models import Label, LabelDimension


def register_audited_models():
    auditlog.register(LabelDimension)
    auditlog.register(Label)
    # Roles are groups (benchmark.roles), so a role change is a change of `groups`.
    # The password hash is a secret and `last_login` changes at every sign-in,
    # which axes' access log already records.
    auditlog.register(
        get_user_model(),
        exclude_fields=["password", "last_login"],
        m2m_fields={"groups"},
    )
