from django.urls import path

from benchmark import language_views, views

app_name = "benchmark"

urlpatterns = [
    path("", views.home, name="home"),
    path("import/", views.import_items, name="import_items"),
    path("import/jobs/<int:job_id>/", views.import_job, name="import_job"),
    path("export/", views.export_items, name="export_items"),
    path("export/<slug:slug>.<str:fmt>", views.export_download, name="export_download"),
    path("preferences/", language_views.preferences, name="preferences"),
    path("language/", language_views.set_language, name="set_language"),
    path("b/<slug:slug>/items/", views.item_list, name="item_list"),
    path("b/<slug:slug>/items/<int:item_id>/", views.item_detail, name="item_detail"),
]
