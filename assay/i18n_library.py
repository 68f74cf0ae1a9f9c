"""Django's `i18n` template library with `{% translate "literal" %}` remembered
per language (settings.TEMPLATES maps `{% load i18n %}` here).

Django's tag makes a lazy string for every literal it renders, translates it, then
escapes and marks the result: about 85 Python calls for one `{% translate %}`, and
a work screen has some seventy of them — which made #30's pages a quarter slower
than the same pages in bare English (docs/BENCHMARKS.md). A literal's output
depends only on the active language, the message context, `noop` and the
template's autoescaping, so the first rendering's output is kept under those and
reused (`assay.per_language`). A translation of a variable (`{% translate name %}`)
or one with filters goes through Django's own node.
"""

from django import template
from django.template.base import render_value_in_context
from django.templatetags import i18n as django_i18n
from django.utils.safestring import SafeData, mark_safe
from django.utils.translation import get_language

from assay.per_language import language_cache

register = template.Library()
register.tags.update(django_i18n.register.tags)
register.filters.update(django_i18n.register.filters)

# (language, message context, msgid, noop, autoescape) -> the tag's output
_rendered = language_cache()


class RememberedTranslateNode(django_i18n.TranslateNode):
    def __init__(self, filter_expression, noop, asvar=None, message_context=None):
        super().__init__(filter_expression, noop, asvar, message_context)
        literal = self.filter_expression.var.literal
        self.remembered = (
            isinstance(literal, str)
            and not self.filter_expression.filters
            and (message_context is None or not message_context.is_var)
        )
        if self.remembered:
            context_name = message_context.var if message_context else None
            self.key = (context_name, literal, noop)

    def render(self, context):
        if not self.remembered:
            return super().render(context)
        key = (get_language(), *self.key, context.autoescape)
        value = _rendered.get(key)
        if value is None:
            value = _rendered[key] = self.translated(context)
        if self.asvar:
            context[self.asvar] = value
            return ""
        return value

    def translated(self, context):
        """The output of Django's `TranslateNode.render` without `as`."""
        self.filter_expression.var.translate = not self.noop
        if self.message_context:
            self.filter_expression.var.message_context = self.message_context.resolve(
                context
            )
        output = self.filter_expression.resolve(context)
        value = render_value_in_context(output, context)
        is_safe = isinstance(value, SafeData)
        value = value.replace("%%", "%")
        return mark_safe(value) if is_safe else value


@register.tag("translate")
@register.tag("trans")
def do_translate(parser, token):
    node = django_i18n.do_translate(parser, token)
    return RememberedTranslateNode(
        node.filter_expression, node.noop, node.asvar, node.message_context
    )
