from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from benchmark.roles import Role, role_required
from judging.runs import lifecycle
from judging.runs.controls import control


@require_POST
@role_required(Role.MANAGER)
def run_control(request, kind: str, pk: int, action: str):
    """Cancel or resume a run of any kind, then back to where the button was (a
    `next` on this site) or to the run's page."""
    do = control(kind, action)
    if do is None:
        raise Http404("No such run control.")
    run_kind = lifecycle.kind_named(kind)
    run = get_object_or_404(run_kind.model, pk=pk)
    try:
        do(run)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        done = {
            "cancel": _("Run %(pk)s cancelled; what it recorded is kept."),
            "resume": _("Run %(pk)s resumed: its open work is asked again."),
        }[action]
        messages.success(request, done % {"pk": pk})
    back = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(
        back, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return redirect(back)
    return redirect(run_kind.page, pk)
