"""`{% load fragments %}`: markup that depends on the interface language alone,
rendered once per language and kept (`assay.per_language`).

    {% per_language_fragment "_language_switch.html#buttons" %}

For pieces on every page whose loops cost more than the page's own work — the
header's language switch renders four languages twice — and that read nothing of
the request, the user or the page: the fragment is rendered with an empty context.
"""

from django import template
from django.template import Context
from django.utils.safestring import mark_safe
from django.utils.translation import get_language

from assay.per_language import language_cache

register = template.Library()

# (language, template name, autoescape) -> the fragment's HTML
_fragments = language_cache()


@register.simple_tag(takes_context=True)
def per_language_fragment(context, template_name):
    key = (get_language(), template_name, context.autoescape)
    html = _fragments.get(key)
    if html is None:
        fragment = context.template.engine.get_template(template_name)
        html = mark_safe(fragment.render(Context(autoescape=context.autoescape)))
        _fragments[key] = html
    return html
