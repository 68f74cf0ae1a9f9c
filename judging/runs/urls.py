from django.urls import path

from judging.runs import views

urlpatterns = [
    path(
        "runs/<slug:kind>/<int:pk>/<slug:action>/",
        views.run_control,
        name="run_control",
    ),
]
