from django.urls import path

from judging.translation import views

urlpatterns = [
    path("translation/", views.translation_runs, name="translation_runs"),
    path("translation/<int:pk>/", views.translation_run, name="translation_run"),
    path(
        "translation/<int:pk>/cancel/",
        views.translation_run_control,
        {"action": "cancel"},
        name="translation_run_cancel",
    ),
    path(
        "translation/<int:pk>/resume/",
        views.translation_run_control,
        {"action": "resume"},
        name="translation_run_resume",
    ),
    path(
        "translation/report/<slug:slug>/",
        views.translation_report_page,
        name="translation_report",
    ),
]
