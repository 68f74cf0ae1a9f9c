from django.contrib import admin
from django.urls import include, path

# Apps are included by name: the project package imports no app, so the dependency
# between `assay` and the apps runs one way (tests/test_architecture.py).
urlpatterns = [
    path("", include("benchmark.sign_in_urls")),
    path("admin/", admin.site.urls),
    path("judging/", include("judging.urls")),
    path("construction/", include("construction.urls")),
    path("annotation/", include("annotation.urls")),
    path("api/", include("api.urls")),
    path("", include("benchmark.urls")),
]
