from django.urls import path

from . import labelling_views, translation_views
from .evaluation_urls import urlpatterns as evaluation_urlpatterns

app_name = "judging"

urlpatterns: list = [
    path("endpoints/", labelling_views.endpoints, name="endpoints"),
    path("endpoints/<int:pk>/", labelling_views.endpoint, name="endpoint"),
    path(
        "endpoints/<int:pk>/test/",
        labelling_views.endpoint_test,
        name="endpoint_test",
    ),
    path("labelling/", labelling_views.labelling_runs, name="labelling_runs"),
    path("labelling/<int:pk>/", labelling_views.labelling_run, name="labelling_run"),
    path(
        "labelling/<int:pk>/cancel/",
        labelling_views.labelling_run_control,
        {"action": "cancel"},
        name="labelling_run_cancel",
    ),
    path(
        "labelling/<int:pk>/resume/",
        labelling_views.labelling_run_control,
        {"action": "resume"},
        name="labelling_run_resume",
    ),
    path(
        "labelling/<int:pk>/add-annotator/",
        labelling_views.labelling_run_control,
        {"action": "add_annotator"},
        name="labelling_run_add_annotator",
    ),
    path(
        "labelling/<int:pk>/consensus/",
        labelling_views.consensus_report_page,
        name="consensus_report",
    ),
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
urlpatterns += evaluation_urlpatterns
