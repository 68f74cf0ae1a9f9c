"""State changes for benchmarks, taxonomy and users. Each runs in one transaction."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db import transaction

from .models import Benchmark, Label, LabelDimension
from .roles import ROLE_PERMISSIONS, Role
from .taxonomy import DEFAULT_TAXONOMY, DimensionSpec


@transaction.atomic
def do_create_benchmark(
    *,
    name: str,
    slug: str,
    version: str = "1.0",
    source_language: str = "zh",
    target_languages: tuple[str, ...] = ("en", "ru", "vi"),
    taxonomy: tuple[DimensionSpec, ...] = DEFAULT_TAXONOMY,
    description: str = "",
    is_demo: bool = False,
) -> Benchmark:
    benchmark = Benchmark.objects.create(
        name=name,
        slug=slug,
        version=version,
        source_language=source_language,
        target_languages=list(target_languages),
        description=description,
        is_demo=is_demo,
    )
    for position, spec in enumerate(taxonomy):
        do_add_dimension(benchmark, spec, position=position)
    return benchmark


@transaction.atomic
def do_add_dimension(
    benchmark: Benchmark, spec: DimensionSpec, *, position: int
) -> LabelDimension:
    dimension = LabelDimension.objects.create(
        benchmark=benchmark, code=spec.code, name=spec.name, position=position
    )
    Label.objects.bulk_create(
        Label(
            dimension=dimension,
            code=label.code,
            name=label.name,
            definition=label.definition,
            position=index,
        )
        for index, label in enumerate(spec.labels)
    )
    return dimension


@transaction.atomic
def ensure_role_groups() -> dict[str, Group]:
    """Create the four role groups with their permissions; safe to call repeatedly."""
    groups = {}
    for role in Role:
        group, _ = Group.objects.get_or_create(name=role.value)
        for dotted in ROLE_PERMISSIONS[role]:
            app_label, codename = dotted.split(".")
            group.permissions.add(
                Permission.objects.get(
                    content_type__app_label=app_label, codename=codename
                )
            )
        groups[role.value] = group
    return groups


@transaction.atomic
def do_create_user(username: str, password: str, role: str, *, email: str = ""):
    """Create a user, or reset an existing one's password and role."""
    if role not in Role.values:
        raise ValueError(
            f"Unknown role {role!r}; choose one of {', '.join(Role.values)}."
        )
    groups = ensure_role_groups()
    user_model = get_user_model()
    user, _ = user_model.objects.get_or_create(
        username=username, defaults={"email": email}
    )
    user.set_password(password)
    user.is_staff = role == Role.MANAGER
    user.save(update_fields=["password", "is_staff"])
    user.groups.set([groups[role]])
    return user
