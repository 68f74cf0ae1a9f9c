"""Endpoint pages, with a connection test."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from assay.htmx import stop_polling_unless
from benchmark.roles import Role, role_required
from judging.llm.actions import do_request_endpoint_test, do_save_endpoint
from judging.llm.forms import EndpointForm
from judging.llm.models import Endpoint


@role_required(Role.MANAGER)
def endpoints(request):
    form = EndpointForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            endpoint = do_save_endpoint(form.cleaned_data["name"], **form.settings())
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(
                request, _("Endpoint %(name)s added.") % {"name": endpoint.name}
            )
            return redirect("judging:endpoint", pk=endpoint.pk)
    return render(
        request,
        "judging/llm/endpoints.html",
        {"form": form, "endpoints": Endpoint.objects.all()},
    )


@role_required(Role.MANAGER)
def endpoint(request, pk: int):
    endpoint = get_object_or_404(Endpoint, pk=pk)
    if request.htmx and request.method == "GET":
        response = render(
            request, "judging/llm/endpoint.html#test-result", {"endpoint": endpoint}
        )
        return stop_polling_unless(
            endpoint.test_status == Endpoint.TestStatus.PENDING, response
        )
    form = EndpointForm(request.POST or None, instance=endpoint)
    if request.method == "POST" and form.is_valid():
        try:
            do_save_endpoint(endpoint.name, **form.settings())
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(
                request, _("Endpoint %(name)s saved.") % {"name": endpoint.name}
            )
            return redirect("judging:endpoint", pk=endpoint.pk)
    endpoint.refresh_from_db()
    return render(
        request, "judging/llm/endpoint.html", {"endpoint": endpoint, "form": form}
    )


@require_POST
@role_required(Role.MANAGER)
def endpoint_test(request, pk: int):
    endpoint = do_request_endpoint_test(get_object_or_404(Endpoint, pk=pk))
    if request.htmx:
        return render(
            request, "judging/llm/endpoint.html#test-result", {"endpoint": endpoint}
        )
    return redirect("judging:endpoint", pk=pk)
