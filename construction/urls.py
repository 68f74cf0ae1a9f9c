from django.urls import path

from construction import views
from construction.audits import views as audit_views
from construction.expert import views as expert_views

app_name = "construction"

urlpatterns = [
    # Before "<slug>/": "audits" would be read as a benchmark's slug.
    path("audits/", audit_views.audit_list, name="audits"),
    path("audits/<int:pk>/", audit_views.audit_screen, name="audit"),
    path("<slug:slug>/", views.construction_page, name="page"),
    path("<slug:slug>/sources/import/", views.import_sources, name="import_sources"),
    path("<slug:slug>/runs/start/", views.start_stage, name="start_stage"),
    path("<slug:slug>/release/pool/", views.open_pool, name="open_pool"),
    path("<slug:slug>/release/sample/", views.draw_sample, name="draw_sample"),
    path("<slug:slug>/release/", views.release, name="release"),
    path("<slug:slug>/funnel/", views.funnel_page, name="funnel"),
    path("<slug:slug>/funnel.svg", views.funnel_svg, name="funnel_svg"),
    path("<slug:slug>/funnel.csv", views.funnel_csv, name="funnel_csv"),
    path("<slug:slug>/candidates/<int:pk>/", views.candidate_page, name="candidate"),
    path("<slug:slug>/review/", views.review_page, name="review"),
    path("<slug:slug>/review/<int:pk>/", views.review_flag, name="review_flag"),
    path(
        "<slug:slug>/forum/expert/open/",
        expert_views.open_review,
        name="forum_open_review",
    ),
    path("<slug:slug>/forum/expert/", expert_views.review_page, name="forum_review"),
    path(
        "<slug:slug>/forum/expert/<int:pk>/",
        expert_views.verify,
        name="forum_verify",
    ),
    path("<slug:slug>/forum/release/", expert_views.release, name="forum_release"),
    path("<slug:slug>/stages/<str:stage>/", audit_views.stage_page, name="stage"),
    path(
        "<slug:slug>/stages/<str:stage>/audits/open/",
        audit_views.open_audit,
        name="open_audit",
    ),
    path(
        "<slug:slug>/stages/<str:stage>/trial/",
        audit_views.start_trial,
        name="start_trial",
    ),
    path(
        "<slug:slug>/stages/<str:stage>/compare/",
        audit_views.compare_page,
        name="compare",
    ),
    path("runs/<int:pk>/", views.run_page, name="run"),
]
