import re

from django import template

register = template.Library()

# Exactly "http://" or "https://" at the very start, and nothing a browser would
# strip or fold (spaces, tabs, line breaks, other control characters) anywhere:
# "java\tscript:", " javascript:" and "JaVaScRiPt:" all fail it.
WEB_URL = re.compile(r"(?i)https?://[^\x00-\x20\x7f]+")


@register.filter
def web_url(value) -> str:
    """The URL of a search result when it may be a link (http or https), else "".

    Results come from a search service and, through it, from any web page; a
    `javascript:` or `data:` URL in one must never become a link a reviewer
    clicks (the content security policy is a second line, not the first)."""
    text = value if isinstance(value, str) else ""
    return text if WEB_URL.fullmatch(text) else ""
