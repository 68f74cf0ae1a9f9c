"""The API tokens page: create one (its secret shown once), list and revoke yours;
and the managers' audit log."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from api.actions import do_create_token, do_revoke_token
from api.audit_log import csv_rows, entry_keys, load_entries
from api.forms import AuditFilterForm
from api.models import ApiToken
from assay.downloads import csv_download
from benchmark.roles import Role, role_required

NEW_TOKEN = "api_new_token"


@never_cache  # the page right after a create holds the secret
@role_required(*Role.values)
def tokens(request):
    """A create answers with a redirect, and the page that follows shows the
    secret once (held in the session until then): reloading it shows no secret
    and never creates a second token."""
    context = {"secret": None, "error": None}
    status = 200
    if request.method == "POST":
        try:
            created, secret = do_create_token(
                request.user, request.POST.get("name", "")
            )
        except ValidationError as error:
            context["error"], status = error.messages[0], 400
        else:
            request.session[NEW_TOKEN] = [created.pk, secret]
            return redirect("api:tokens")
    elif NEW_TOKEN in request.session:
        token_id, context["secret"] = request.session.pop(NEW_TOKEN)
        context["created"] = ApiToken.objects.filter(
            pk=token_id, user=request.user
        ).first()
        if context["created"] is None:
            context["secret"] = None
    context["tokens"] = ApiToken.objects.filter(user=request.user)
    return render(request, "api/tokens.html", context, status=status)


@require_POST
@role_required(*Role.values)
def revoke(request, token_id):
    token = get_object_or_404(ApiToken, pk=token_id, user=request.user)
    do_revoke_token(token)
    messages.success(
        request, _("Token “%(name)s” revoked: it works no more.") % {"name": token.name}
    )
    return redirect("api:tokens")


AUDIT_PAGE_SIZE = 50


@role_required(Role.MANAGER)
def audit_log(request):
    form = AuditFilterForm(request.GET)
    page = Paginator(entry_keys(form.audit_filter()), AUDIT_PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    filters = request.GET.copy()
    filters.pop("page", None)
    context = {
        "form": form,
        "page": page,
        "entries": load_entries(page.object_list),
        "filters": filters.urlencode(),
    }
    return render(request, "api/audit_log.html", context)


@role_required(Role.MANAGER)
def audit_log_csv(request):
    audit_filter = AuditFilterForm(request.GET).audit_filter()
    return csv_download(csv_rows(audit_filter), "audit-log.csv")
