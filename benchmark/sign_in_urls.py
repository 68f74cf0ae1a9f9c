"""Sign-in URLs at the site's root, included by `assay.urls` by name so that the
project package imports no app (apps import `assay`, never the reverse)."""

from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.urls import path
from django.views.decorators.cache import cache_page
from django.views.i18n import JavaScriptCatalog

from benchmark.sso import SignInView, SsoCallbackView, SsoStartView

urlpatterns = [
    path("login/", SignInView.as_view(), name="login"),
    # Single sign-on; both answer 404 unless OIDC_RP_CLIENT_ID is set. The names are
    # the ones mozilla-django-oidc reverses.
    path(
        "oidc/authenticate/",
        login_not_required(SsoStartView.as_view()),
        name="oidc_authentication_init",
    ),
    path(
        "oidc/callback/",
        login_not_required(SsoCallbackView.as_view()),
        name="oidc_authentication_callback",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # The JavaScript strings' catalogue of the active language (the sign-in page
    # needs it too). Cached per language: Django's page cache keys on it, and
    # base.html names the language in the script's URL for the browser's cache.
    path(
        "jsi18n/",
        login_not_required(cache_page(3600)(JavaScriptCatalog.as_view())),
        name="javascript_catalog",
    ),
]
