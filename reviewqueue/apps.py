from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ReviewQueueConfig(AppConfig):
    name = "reviewqueue"
    verbose_name = _("Review queues")
