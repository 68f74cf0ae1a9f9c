from django import template
from django.utils import timezone
from django.utils.timesince import timesince
from django.utils.translation import gettext as _

register = template.Library()


@register.filter
def duration_text(seconds) -> str:
    """12 -> "12 s", 754 -> "13 min", 5400 -> "1 h 30 min" (in the reader's
    language)."""
    if seconds is None:
        return "—"
    seconds = int(round(float(seconds)))
    if seconds < 60:
        return _("%(seconds)s s") % {"seconds": seconds}
    minutes = round(seconds / 60)
    if minutes < 60:
        return _("%(minutes)s min") % {"minutes": minutes}
    hours, minutes = divmod(minutes, 60)
    if minutes:
        return _("%(hours)s h %(minutes)s min") % {"hours": hours, "minutes": minutes}
    return _("%(hours)s h") % {"hours": hours}


@register.filter
def ago(moment) -> str:
    """A past moment as "just now" (under a minute: timesince would say "0 minutes")
    or "5 minutes ago"."""
    if (timezone.now() - moment).total_seconds() < 60:
        return _("just now")
    return _("%(time)s ago") % {"time": timesince(moment)}
