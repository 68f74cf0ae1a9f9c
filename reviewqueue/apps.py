from django.apps import AppConfig


class ReviewQueueConfig(AppConfig):
    name = "reviewqueue"
    verbose_name = "Review queues"
