from django.urls import path

from . import views

app_name = "benchmark"

urlpatterns = [
    path("", views.home, name="home"),
]
