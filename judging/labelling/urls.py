from django.urls import path

from judging.labelling import views

urlpatterns = [
    path("labelling/", views.labelling_runs, name="labelling_runs"),
    path("labelling/<int:pk>/", views.labelling_run, name="labelling_run"),
    path(
        "labelling/<int:pk>/add-annotator/",
        views.add_annotator,
        name="labelling_run_add_annotator",
    ),
    path(
        "labelling/<int:pk>/suggestions/apply/",
        views.apply_suggestions,
        name="labelling_apply_suggestions",
    ),
    path(
        "labelling/applications/<int:pk>/undo/",
        views.undo_suggestions,
        name="labelling_undo_suggestions",
    ),
    path(
        "labelling/<int:pk>/consensus/",
        views.consensus_report_page,
        name="consensus_report",
    ),
]
