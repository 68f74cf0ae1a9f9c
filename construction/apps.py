from django.apps import AppConfig


class ConstructionConfig(AppConfig):
    name = "construction"
