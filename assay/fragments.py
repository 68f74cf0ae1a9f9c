"""`{% load fragments %}`: markup that depends on the interface language and a few
fixed values alone, rendered once per language and values and kept
(`assay.per_language`).

    {% per_language_fragment "_language_switch.html#buttons" %}
    {% per_language_fragment "reviewqueue/_keys.html#dialog" keys=keys %}

For pieces on every page or task whose loops cost more than the page's own work —
the header's language switch renders four languages twice, a work screen's key
dialog ten keys — and that read nothing of the request, the user or the task: the
fragment is rendered with the given values as its whole context. The values are
part of what it is kept under, so they must be few and hashable (a list is taken
as a tuple): module-level constants, not anything a request builds.
"""

from django import template
from django.template import Context
from django.utils.safestring import mark_safe
from django.utils.translation import get_language

from assay.per_language import language_cache

register = template.Library()

# (language, template name, autoescape, values) -> the fragment's HTML
_fragments = language_cache()


@register.simple_tag(takes_context=True)
def per_language_fragment(context, template_name, **values):
    values = {
        name: tuple(value) if isinstance(value, list) else value
        for name, value in values.items()
    }
    key = (get_language(), template_name, context.autoescape, *values.items())
    html = _fragments.get(key)
    if html is None:
        fragment = context.template.engine.get_template(template_name)
        html = fragment.render(Context(values, autoescape=context.autoescape))
        html = _fragments[key] = mark_safe(html)
    return html
