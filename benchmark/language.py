"""A person's interface language (#30): saved on their account, applied on each of
their requests, with the browser's Accept-Language (or Django's language cookie)
as the fallback for a blank choice and for anyone not signed in.

The choice is copied into the session at sign-in, so applying it costs no query
per request; choosing again (sign-in page, header switch, preferences page)
writes the account and the session together."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext as _

from benchmark.models import AccountPreference

# The session holds the account's choice: a language code, or "" for the browser's.
SESSION_KEY = "assay_interface_language"


def check_interface_language(code: str) -> str:
    """The code if it is one of the interface languages (or "" for the browser's)."""
    if code and code not in dict(settings.LANGUAGES):
        raise ValidationError(
            _("%(code)s is not an interface language. Choose one of: %(codes)s.")
            % {"code": code, "codes": ", ".join(dict(settings.LANGUAGES))}
        )
    return code


def do_set_interface_language(user, code: str) -> AccountPreference:
    """Save `code` ("" for the browser's language) as the user's choice."""
    check_interface_language(code)
    with transaction.atomic():
        preference, _created = AccountPreference.objects.update_or_create(
            user=user, defaults={"interface_language": code}
        )
    return preference


def saved_language(user) -> str:
    """The user's saved choice, "" when none (the browser's language)."""
    return (
        AccountPreference.objects.filter(user=user)
        .values_list("interface_language", flat=True)
        .first()
        or ""
    )


def remember(request, code: str) -> None:
    """Apply `code` to this request and keep it in the session for the next."""
    if hasattr(request, "session"):
        request.session[SESSION_KEY] = code
    if code:
        translation.activate(code)
        request.LANGUAGE_CODE = code


def remember_on_sign_in(sender, request, user, **kwargs):
    """user_logged_in's receiver: the new session starts with the saved choice."""
    if request is not None and hasattr(request, "session"):
        request.session[SESSION_KEY] = saved_language(user)


class UserLanguageMiddleware:
    """Activate a signed-in person's saved interface language.

    It runs after `LocaleMiddleware` (which has activated the cookie's or the
    browser's language, and sets Content-Language and Vary on the way out) and
    after authentication; a blank choice leaves LocaleMiddleware's pick."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            code = request.session.get(SESSION_KEY)
            if code is None:
                # A session from before the choice was kept in it.
                code = saved_language(user)
                request.session[SESSION_KEY] = code
            if code and code in dict(settings.LANGUAGES):
                translation.activate(code)
                request.LANGUAGE_CODE = code
        return self.get_response(request)
