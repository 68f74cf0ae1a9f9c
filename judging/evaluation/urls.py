from django.urls import path

from judging.evaluation import views

urlpatterns = [
    path("evaluations/", views.evaluations, name="evaluations"),
    path(
        # `path`: external ids are the dataset's own and may hold a slash (GB/T …).
        "evaluations/<slug:slug>/items/<path:external_id>/",
        views.item_results,
        name="item_results",
    ),
    path("evaluations/<slug:slug>/runs/", views.runs, name="evaluation_runs"),
    path("evaluations/<slug:slug>/runs/new/", views.start_run, name="start_evaluation"),
    path("evaluations/<slug:slug>/category/", views.set_category, name="set_category"),
    path(
        "evaluations/<slug:slug>/subsets/",
        views.item_subsets,
        name="item_subsets",
    ),
    path(
        "evaluations/<slug:slug>/difficulty/",
        views.write_difficulty,
        name="write_difficulty",
    ),
    # Not under evaluations/<slug>/: a benchmark's slug could be "check-table".
    path("evaluation-runs/<int:pk>/", views.run_detail, name="evaluation_run"),
    path("evaluation-runs/<int:pk>/waive/", views.waive, name="waive_pending"),
]
