from django.urls import path

from . import report_views

app_name = "annotation"

urlpatterns: list = [
    path("reports/", report_views.report_index, name="report_index"),
    path(
        "reports/<slug:slug>/disagreements/",
        report_views.disagreements,
        name="report_disagreements",
    ),
    path("reports/<slug:slug>/<str:name>/", report_views.report_page, name="report"),
    path(
        "reports/<slug:slug>/<str:name>.<str:fmt>",
        report_views.report_download,
        name="report_download",
    ),
]
