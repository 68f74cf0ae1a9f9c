from django.urls import path

from judging.llm import views

urlpatterns = [
    path("endpoints/", views.endpoints, name="endpoints"),
    path("endpoints/<int:pk>/", views.endpoint, name="endpoint"),
    path("endpoints/<int:pk>/test/", views.endpoint_test, name="endpoint_test"),
]
