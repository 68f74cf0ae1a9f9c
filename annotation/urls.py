from django.urls import path

from annotation import views
from annotation.agreement import views as report_views
from annotation.interop import views as interop_views
from annotation.paper import views as paper_views

app_name = "annotation"

urlpatterns = [
    path("", views.queues, name="queues"),
    path("campaigns/new/", views.campaign_new, name="campaign_new"),
    path("campaigns/<int:campaign_id>/", views.campaign, name="campaign"),
    path(
        "campaigns/<int:campaign_id>/status/",
        views.campaign_status,
        name="campaign_status",
    ),
    path(
        "campaigns/<int:campaign_id>/labels.<str:fmt>",
        views.export,
        name="export",
    ),
    path(
        "campaigns/<int:campaign_id>/export/<str:tool>.zip",
        interop_views.export_for_tool,
        name="export_for_tool",
    ),
    path(
        "campaigns/<int:campaign_id>/import/",
        interop_views.import_grades,
        name="import_grades",
    ),
    path("campaigns/<int:campaign_id>/grade/", views.grade, name="grade"),
    path(
        "campaigns/<int:campaign_id>/adjudicate/", views.adjudicate, name="adjudicate"
    ),
    path("campaigns/<int:campaign_id>/review/", views.review, name="review"),
    path(
        "leases/<int:assignment_id>/release/",
        views.release_lease,
        name="release_lease",
    ),
    path("tasks/<int:task_id>/reassign/", views.reassign, name="reassign"),
    path("reports/", report_views.report_index, name="report_index"),
    path(
        "reports/<slug:slug>/disagreements/",
        report_views.disagreements,
        name="report_disagreements",
    ),
    path(
        "reports/<slug:slug>/paper-tables.zip",
        paper_views.paper_archive,
        name="paper_archive",
    ),
    path("reports/<slug:slug>/<str:name>/", report_views.report_page, name="report"),
    path(
        "reports/<slug:slug>/<str:name>/weights/",
        report_views.report_weights,
        name="report_weights",
    ),
    path(
        "reports/<slug:slug>/<str:name>.<str:fmt>",
        report_views.report_download,
        name="report_download",
    ),
]
