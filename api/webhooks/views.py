"""The webhooks page (managers: events carry benchmark data) and a webhook's
delivery log. Nothing here talks to the network: a re-send queues a task."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from api.models import Webhook, WebhookDelivery, WebhookEvent
from api.webhooks.actions import (
    do_create_webhook,
    do_deactivate_webhook,
    do_resend_delivery,
)
from benchmark.roles import Role, role_required

DELIVERIES_PER_PAGE = 50


@never_cache  # the answer to a create holds the secret
@role_required(Role.MANAGER)
def webhooks(request):
    context = {"secret": None, "error": None, "events": WebhookEvent.choices}
    status = 200
    if request.method == "POST":
        try:
            context["created"], context["secret"] = do_create_webhook(
                request.user,
                request.POST.get("url", ""),
                request.POST.getlist("events"),
            )
        except ValidationError as error:
            context["error"], status = error.messages[0], 400
    context["webhooks"] = Webhook.objects.filter(user=request.user)
    return render(request, "api/webhooks.html", context, status=status)


@role_required(Role.MANAGER)
def webhook_log(request, webhook_id):
    webhook = get_object_or_404(Webhook, pk=webhook_id, user=request.user)
    deliveries = Paginator(
        webhook.deliveries.defer("payload"), DELIVERIES_PER_PAGE
    ).get_page(request.GET.get("page"))
    return render(
        request, "api/webhook_log.html", {"webhook": webhook, "deliveries": deliveries}
    )


@require_POST
@role_required(Role.MANAGER)
def deactivate(request, webhook_id):
    webhook = get_object_or_404(Webhook, pk=webhook_id, user=request.user)
    do_deactivate_webhook(webhook)
    messages.success(
        request,
        _("Webhook %(url)s deactivated: nothing more is sent.") % {"url": webhook.url},
    )
    return redirect("api:webhooks")


@require_POST
@role_required(Role.MANAGER)
def resend(request, delivery_id):
    delivery = get_object_or_404(
        WebhookDelivery, pk=delivery_id, webhook__user=request.user
    )
    try:
        do_resend_delivery(delivery)
    except ValidationError as error:
        messages.error(request, error.messages[0])
    else:
        messages.success(
            request, _("Delivery %(pk)s queued to be sent again.") % {"pk": delivery.pk}
        )
    return redirect("api:webhook_log", delivery.webhook_id)
