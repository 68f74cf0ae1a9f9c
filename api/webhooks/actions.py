"""State changes of webhooks: create, deactivate, re-send a failed delivery.

Webhook events carry benchmark data (slugs, run counts, import outcomes) that only
managers see on the pages, so only managers own webhooks, and an event goes only to
the webhooks of users who are still active managers (api.events).
"""

from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http.request import validate_host
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from api.models import Webhook, WebhookDelivery, WebhookEvent
from api.webhooks.signing import new_secret
from assay.celery import enqueue
from assay.targets import check_target

DELIVER_TASK = "api.tasks.deliver_webhook"


def check_webhook_url(url: str) -> str:
    """An http(s) URL without credentials or control characters, on a WEBHOOK_HOSTS
    host when that is set, and never at an internal address unless WEBHOOK_HOSTS
    names its host (assay.targets).

    Checked again before each POST, so narrowing WEBHOOK_HOSTS stops webhooks made
    before, and a name that has come to resolve to an internal address since the
    save is refused then. Redirects are never followed (api.webhooks.sending), so an
    allowed host cannot bounce a POST elsewhere."""
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ValidationError(_("The webhook URL must be an http:// or https:// URL."))
    if parts.username or parts.password:
        raise ValidationError(
            _(
                "Put no user name or password in the URL: Assay signs each POST "
                "instead (X-Assay-Signature)."
            )
        )
    if len(url) > Webhook._meta.get_field("url").max_length:
        raise ValidationError(_("A webhook URL has at most 2000 characters."))
    if settings.WEBHOOK_HOSTS and not validate_host(
        parts.hostname, settings.WEBHOOK_HOSTS
    ):
        raise ValidationError(
            _("%(hostname)s is not an allowed webhook host (WEBHOOK_HOSTS: %(value)s).")
            % {"hostname": parts.hostname, "value": ", ".join(settings.WEBHOOK_HOSTS)}
        )
    check_target(url, settings.WEBHOOK_HOSTS, "WEBHOOK_HOSTS", "webhook URL")
    return url


def check_events(events: list[str]) -> list[str]:
    chosen = [event for event in WebhookEvent.values if event in set(events)]
    if not chosen or len(chosen) != len(set(events)):
        raise ValidationError(_("Choose at least one event from the list."))
    return chosen


@transaction.atomic
def do_create_webhook(user, url: str, events: list[str]) -> tuple[Webhook, str]:
    """A new webhook and its secret: show the secret once; the page never again."""
    webhook = Webhook.objects.create(
        user=user,
        url=check_webhook_url(url),
        events=check_events(events),
        secret=new_secret(),
    )
    return webhook, webhook.secret


@transaction.atomic
def do_deactivate_webhook(webhook: Webhook) -> Webhook:
    """No new deliveries, and pending ones are not sent (the worker checks)."""
    Webhook.objects.filter(pk=webhook.pk).update(is_active=False)
    webhook.is_active = False
    return webhook


@transaction.atomic
def do_resend_delivery(delivery: WebhookDelivery) -> WebhookDelivery:
    """Try a failed delivery again, with a fresh set of attempts, on a worker.
    A delivered one is never sent again."""
    delivery = (
        WebhookDelivery.objects.select_for_update()
        .select_related("webhook")
        .get(pk=delivery.pk)
    )
    if delivery.status != WebhookDelivery.Status.FAILED:
        raise ValidationError(
            _("Only a failed delivery can be re-sent; this one is %(status)s.")
            % {"status": delivery.status}
        )
    if not delivery.webhook.is_active:
        raise ValidationError(_("The webhook is deactivated."))
    delivery.status = WebhookDelivery.Status.PENDING
    delivery.attempts = 0
    delivery.next_attempt_at = timezone.now()
    delivery.save(update_fields=["status", "attempts", "next_attempt_at"])
    enqueue(DELIVER_TASK, delivery.pk)
    return delivery
