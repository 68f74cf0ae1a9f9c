from django.urls import path

from judging.leaderboard import views

urlpatterns = [
    path("evaluations/<slug:slug>/", views.leaderboard, name="leaderboard"),
    path(
        "evaluations/<slug:slug>/tables/<slug:table>.<str:fmt>",
        views.table_download,
        name="table_download",
    ),
    path("evaluations/<slug:slug>/cell/", views.cell_items, name="cell_items"),
    path("evaluation-tables/check/", views.check_table, name="check_table"),
]
