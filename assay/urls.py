from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path

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
    path("admin/", admin.site.urls),
    path("judging/", include("judging.urls")),
    path("construction/", include("construction.urls")),
    path("annotation/", include("annotation.urls")),
    path("api/", include("api.urls")),
    path("", include("benchmark.urls")),
]
