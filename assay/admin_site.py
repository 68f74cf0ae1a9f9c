"""The admin site, with one rule for every model registered on it (Assay's and
third parties' alike): secret-like fields are never filtered or searched.

A changelist filters by any field of its model named in the query string
(`?secret__startswith=whsec_j`): the count it shows answers "does the secret start
with this?", and one character at a time gives the whole secret away, though the
field itself is never displayed. So a lookup whose path names a secret-like field is
refused (Django answers 400), and a `search_fields`, `list_filter`,
`date_hierarchy` or `ordering` naming one fails the system checks at start-up.

Secret-like is judged by the name alone and errs wide: "key" also catches a glossary
key or a key variable's name, whose filters nobody needs in the admin.
"""

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.core import checks
from django.core.exceptions import FieldDoesNotExist
from django.db.models.constants import LOOKUP_SEP

SECRET_WORDS = ("secret", "key", "token", "digest", "password")


def is_secret_like(name: str) -> bool:
    return any(word in name.lower() for word in SECRET_WORDS)


def names_secret_field(model, lookup: str) -> bool:
    """Does `lookup` (`user__password__startswith`) pass through a secret-like
    field of `model` or of a model it follows a relation to?"""
    for part in lookup.lstrip("^=@-").split(LOOKUP_SEP):
        try:
            field = model._meta.get_field(part)
        except FieldDoesNotExist:
            return False
        if is_secret_like(field.name):
            return True
        if not field.is_relation or field.related_model is None:
            return False
        model = field.related_model
    return False


class SecretFieldsGuard:
    """Mixed into every ModelAdmin by AssaySite.register."""

    def lookup_allowed(self, lookup, value, request=None):
        if names_secret_field(self.model, lookup):
            return False
        return super().lookup_allowed(lookup, value, request)

    def check(self, **kwargs):
        return [*super().check(**kwargs), *self._secret_field_errors()]

    def _secret_field_errors(self) -> list[checks.Error]:
        named = {
            "search_fields": list(self.search_fields or ()),
            "list_filter": [
                entry[0] if isinstance(entry, (list, tuple)) else entry
                for entry in self.list_filter or ()
                if isinstance(entry, (str, list, tuple))
            ],
            "date_hierarchy": [self.date_hierarchy] if self.date_hierarchy else [],
            "ordering": list(self.ordering or ()),
        }
        return [
            checks.Error(
                f"{option} names {name!r}, a secret-like field: filtering, "
                "searching or sorting by it reveals the secret one guess at a time.",
                obj=type(self),
                id="assay.E001",
            )
            for option, names in named.items()
            for name in names
            if isinstance(name, str) and names_secret_field(self.model, name)
        ]


class AssaySite(admin.AdminSite):
    def register(self, model_or_iterable, admin_class=None, **options):
        admin_class = admin_class or admin.ModelAdmin
        if not issubclass(admin_class, SecretFieldsGuard):
            admin_class = type(
                admin_class.__name__,
                (SecretFieldsGuard, admin_class),
                {"__module__": admin_class.__module__},
            )
        super().register(model_or_iterable, admin_class, **options)


class AssayAdminConfig(AdminConfig):
    default_site = "assay.admin_site.AssaySite"
