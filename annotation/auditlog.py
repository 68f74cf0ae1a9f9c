"""What the audit log records of this app: campaigns and who is assigned to them."""

from auditlog.registry import auditlog

from annotation.models import Campaign


def register_audited_models():
    auditlog.register(Campaign, m2m_fields={"assignees"})
