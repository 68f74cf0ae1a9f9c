from django.urls import path

from judging.translation import views

urlpatterns = [
    path("translation/", views.translation_runs, name="translation_runs"),
    path("translation/<int:pk>/", views.translation_run, name="translation_run"),
    path(
        "translation/report/<slug:slug>/",
        views.translation_report_page,
        name="translation_report",
    ),
]
