from django.urls import path

from judging.robustness import views

urlpatterns = [
    path("robustness/<slug:slug>/", views.study, name="robustness"),
    path("robustness/<slug:slug>/generate/", views.generate, name="generate_variants"),
    path("robustness/<slug:slug>/runs/new/", views.start_run, name="start_variant_run"),
    path(
        "robustness/<slug:slug>/resources/",
        views.save_resources,
        name="robustness_resources",
    ),
    path("robustness/<slug:slug>/review/", views.review, name="variant_review"),
    path(
        "robustness/<slug:slug>/report/",
        views.robustness_report,
        name="robustness_report",
    ),
    path(
        "robustness/<slug:slug>/report/<slug:table>.csv",
        views.report_download,
        name="robustness_download",
    ),
    path("variant-runs/<int:pk>/", views.variant_run, name="variant_run"),
]
