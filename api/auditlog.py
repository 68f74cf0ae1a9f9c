"""What the audit log records of this app: API tokens made and revoked.

The digest stands for the secret and never goes into the log. A token's use is
written by `api.actions.do_use_token` at most once a minute, so `last_used_at` is
left out here rather than logged twice."""

from auditlog.registry import auditlog

from api.models import ApiToken


def register_audited_models():
    auditlog.register(ApiToken, exclude_fields=["digest", "last_used_at"])
