from django import template
from django.utils import timezone
from django.utils.timesince import timesince

register = template.Library()


@register.filter
def duration_text(seconds) -> str:
    """12 -> "12 s", 754 -> "13 min", 5400 -> "1 h 30 min"."""
    if seconds is None:
        return "—"
    seconds = int(round(float(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


@register.filter
def ago(moment) -> str:
    """A past moment as "just now" (under a minute: timesince would say "0 minutes")
    or "5 minutes ago"."""
    if (timezone.now() - moment).total_seconds() < 60:
        return "just now"
    return f"{timesince(moment)} ago"
