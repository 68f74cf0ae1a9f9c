"""The interface-language pages: the header switch (anyone, signed in or not) and
the account's preferences page."""

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.forms import AuthenticationForm
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from benchmark.language import do_set_interface_language, remember, saved_language


def language_choices():
    """Each interface language under its own name (settings.LANGUAGES names them
    so), after "my browser's"."""
    return [("", gettext_lazy("My browser's language")), *settings.LANGUAGES]


class InterfaceLanguageForm(forms.Form):
    language = forms.ChoiceField(
        label=gettext_lazy("Interface language"), required=False, choices=()
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["language"].choices = language_choices()


class SignInForm(AuthenticationForm):
    """Django's sign-in form, with the interface language offered once."""

    language = InterfaceLanguageForm.base_fields["language"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["language"].choices = language_choices()
        # A language picked with the header switch before signing in (the cookie)
        # is offered, so it is saved with the sign-in.
        if self.request is not None:
            cookie = self.request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME, "")
            if cookie in dict(settings.LANGUAGES):
                self.fields["language"].initial = cookie


def apply_sign_in_choice(request, form: SignInForm, response):
    """After a password sign-in: a chosen language is saved on the account."""
    code = form.cleaned_data.get("language", "")
    if code:
        _choose(request, code)
        _set_cookie(response, code)
    return response


def _next_page(request) -> str:
    target = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return "/"


def _choose(request, code: str):
    """Save the choice on the account (when signed in), in the session and in
    Django's language cookie (which LocaleMiddleware reads before sign-in)."""
    if request.user.is_authenticated:
        do_set_interface_language(request.user, code)
    remember(request, code)


def _set_cookie(response, code: str):
    if code:
        response.set_cookie(
            settings.LANGUAGE_COOKIE_NAME,
            code,
            max_age=365 * 24 * 3600,
            samesite="Lax",
            secure=settings.SESSION_COOKIE_SECURE,
        )
    else:
        response.delete_cookie(settings.LANGUAGE_COOKIE_NAME)
    return response


@login_not_required
@require_POST
def set_language(request):
    """The header switch: choose the interface language, stay on the page."""
    form = InterfaceLanguageForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Choose one of the offered interface languages."))
        return redirect(_next_page(request))
    code = form.cleaned_data["language"]
    _choose(request, code)
    return _set_cookie(redirect(_next_page(request)), code)


def preferences(request):
    """The account's preferences: the interface language."""
    if request.method == "POST":
        form = InterfaceLanguageForm(request.POST)
        if form.is_valid():
            code = form.cleaned_data["language"]
            _choose(request, code)
            messages.success(request, _("Your interface language is saved."))
            return _set_cookie(redirect("benchmark:preferences"), code)
        status = 400
    else:
        form = InterfaceLanguageForm(initial={"language": saved_language(request.user)})
        status = 200
    return render(request, "benchmark/preferences.html", {"form": form}, status=status)
