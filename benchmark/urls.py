from django.urls import path

from . import views

app_name = "benchmark"

urlpatterns = [
    path("", views.home, name="home"),
    path("b/<slug:slug>/items/", views.item_list, name="item_list"),
    path("b/<slug:slug>/items/<int:item_id>/", views.item_detail, name="item_detail"),
]
