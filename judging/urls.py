from django.urls import path

from . import translation_views

app_name = "judging"

urlpatterns: list = [
    path(
        "translation/",
        translation_views.translation_runs,
        name="translation_runs",
    ),
    path(
        "translation/<int:pk>/",
        translation_views.translation_run,
        name="translation_run",
    ),
    path(
        "translation/<int:pk>/cancel/",
        translation_views.translation_run_control,
        {"action": "cancel"},
        name="translation_run_cancel",
    ),
    path(
        "translation/<int:pk>/resume/",
        translation_views.translation_run_control,
        {"action": "resume"},
        name="translation_run_resume",
    ),
    path(
        "translation/report/<slug:slug>/",
        translation_views.translation_report_page,
        name="translation_report",
    ),
]
