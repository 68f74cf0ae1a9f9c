from django.urls import path

from construction import views

app_name = "construction"

urlpatterns = [
    path("<slug:slug>/", views.construction_page, name="page"),
    path("<slug:slug>/sources/import/", views.import_sources, name="import_sources"),
]
