"""State changes of personal API tokens: create, revoke, and note a use (in the
token's row and in the audit log)."""

from datetime import timedelta

from auditlog.models import LogEntry
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from api.keys import new_token, token_digest, visible_part
from api.models import ApiToken

# A program paging through 100,000 items makes a thousand calls in a minute; writing
# the token's row on each would cost more than the page. "Last used" is kept to the
# minute.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def check_token_name(name: str) -> str:
    name = name.strip()
    if not name:
        raise ValidationError(_("Give the token a name (what it is for)."))
    if len(name) > ApiToken._meta.get_field("name").max_length:
        raise ValidationError(_("A token name has at most 100 characters."))
    return name


@transaction.atomic
def do_create_token(user, name: str) -> tuple[ApiToken, str]:
    """A new token for `user` and its text, which is stored nowhere: show it once."""
    name = check_token_name(name)
    text = new_token()
    token = ApiToken.objects.create(
        user=user, name=name, visible=visible_part(text), digest=token_digest(text)
    )
    return token, text


@transaction.atomic
def do_revoke_token(token: ApiToken) -> ApiToken:
    """Refuse the token from now on; revoking twice keeps the first time."""
    token = ApiToken.objects.select_for_update().get(pk=token.pk)
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def do_use_token(text: str) -> ApiToken | None:
    """The live token `text` is, with its user, noting that it was used; None for
    an unknown or revoked token or an inactive user."""
    token = (
        ApiToken.objects.select_related("user")
        .filter(
            digest=token_digest(text), revoked_at__isnull=True, user__is_active=True
        )
        .first()
    )
    if token is None:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        # Conditional, so of two calls racing in the same minute only one notes
        # the use: the audit log gets one "used" entry per token per minute.
        noted = (
            ApiToken.objects.filter(pk=token.pk)
            .filter(
                Q(last_used_at__isnull=True)
                | Q(last_used_at__lte=now - LAST_USED_RESOLUTION)
            )
            .update(last_used_at=now)
        )
        token.last_used_at = now
        if noted:
            # The request's user is still anonymous here (the token is what
            # says who it is), so the actor is named.
            LogEntry.objects.log_create(
                token, force_log=True, action=LogEntry.Action.ACCESS, actor=token.user
            )
    return token
