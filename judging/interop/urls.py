from django.urls import path

from judging.interop import views

urlpatterns = [
    path(
        "evaluations/<slug:slug>/runs/import/",
        views.import_run,
        name="import_evaluation_run",
    ),
    path(
        "evaluation-runs/<int:pk>/inspect.eval",
        views.export_run_inspect,
        name="export_run_inspect",
    ),
]
