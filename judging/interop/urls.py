from django.urls import path

from judging.interop import views

urlpatterns = [
    path(
        "evaluation-runs/<int:pk>/inspect.eval",
        views.export_run_inspect,
        name="export_run_inspect",
    ),
]
