from django.urls import path

from construction import views

app_name = "construction"

urlpatterns = [
    path("<slug:slug>/", views.construction_page, name="page"),
    path("<slug:slug>/sources/import/", views.import_sources, name="import_sources"),
    path("<slug:slug>/runs/start/", views.start_stage, name="start_stage"),
    path("<slug:slug>/release/", views.release, name="release"),
    path("<slug:slug>/funnel/", views.funnel_page, name="funnel"),
    path("<slug:slug>/funnel.svg", views.funnel_svg, name="funnel_svg"),
    path("<slug:slug>/funnel.csv", views.funnel_csv, name="funnel_csv"),
    path("<slug:slug>/candidates/<int:pk>/", views.candidate_page, name="candidate"),
    path("<slug:slug>/review/", views.review_page, name="review"),
    path("<slug:slug>/review/<int:pk>/", views.review_flag, name="review_flag"),
    path("runs/<int:pk>/", views.run_page, name="run"),
    path(
        "runs/<int:pk>/cancel/",
        views.run_control,
        {"action": "cancel"},
        name="run_cancel",
    ),
    path(
        "runs/<int:pk>/resume/",
        views.run_control,
        {"action": "resume"},
        name="run_resume",
    ),
]
