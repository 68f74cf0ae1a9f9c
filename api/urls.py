from django.contrib.auth.decorators import login_not_required
from django.urls import path

from api import views
from api.main import api
from api.webhooks import views as webhook_views

app_name = "api"

# What api.urls holds besides the routes: the schema and docs page (which check a
# token or a session themselves, api.main.docs_access) and the root (a 404).
NOT_ROUTES = {"openapi-view", "openapi-json", "api-root"}


def _api_urls():
    # API calls, which a token may authenticate, answer 401 themselves rather than
    # LoginRequiredMiddleware's sign-in redirect.
    patterns, app, namespace = api.urls
    for pattern in patterns:
        if pattern.name not in NOT_ROUTES:
            login_not_required(pattern.callback)
    return patterns, app, namespace


urlpatterns = [
    path("tokens/", views.tokens, name="tokens"),
    path("tokens/<int:token_id>/revoke/", views.revoke, name="revoke_token"),
    path("webhooks/", webhook_views.webhooks, name="webhooks"),
    path("webhooks/<int:webhook_id>/", webhook_views.webhook_log, name="webhook_log"),
    path(
        "webhooks/<int:webhook_id>/deactivate/",
        webhook_views.deactivate,
        name="deactivate_webhook",
    ),
    path(
        "webhooks/deliveries/<int:delivery_id>/resend/",
        webhook_views.resend,
        name="resend_delivery",
    ),
    path("audit/", views.audit_log, name="audit_log"),
    path("audit/csv/", views.audit_log_csv, name="audit_log_csv"),
    path("v1/", _api_urls()),
]
