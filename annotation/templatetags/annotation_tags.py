from django import template

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
