from .evaluation_urls import urlpatterns as evaluation_urlpatterns

app_name = "judging"

urlpatterns: list = []
urlpatterns += evaluation_urlpatterns
