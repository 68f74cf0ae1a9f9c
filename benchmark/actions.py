"""State changes for benchmarks, taxonomy and users. Each runs in one transaction."""

from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from benchmark import history
from benchmark.models import (
    Benchmark,
    FinalLabel,
    Item,
    ItemEvent,
    ItemSubset,
    ItemVariant,
    Label,
    LabelDimension,
    Rendering,
    SsoIdentity,
)
from benchmark.notes import Note
from benchmark.roles import MANAGER_APPS, ROLE_PERMISSIONS, Role
from benchmark.taxonomy import DEFAULT_TAXONOMY, DimensionSpec

FINAL_LABEL_BATCH = 1000


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
            aliases=list(label.aliases),
            position=index,
        )
        for index, label in enumerate(spec.labels)
    )
    return dimension


@transaction.atomic
def do_save_item_subset(
    benchmark,
    *,
    name: str,
    rule: str,
    description: str,
    item_ids,
    derived_from: dict,
    user=None,
) -> ItemSubset:
    """Save a named item subset; a name already taken on the benchmark is refused
    (a saved subset never changes, so tables computed on it can be redone)."""
    if ItemSubset.objects.filter(benchmark=benchmark, name=name).exists():
        raise ValidationError(
            f"{benchmark.name} already has a subset named {name!r}; choose another "
            "name (saved subsets never change)."
        )
    if not item_ids:
        raise ValidationError(_("The rule leaves no item: nothing to save."))
    return ItemSubset.objects.create(
        benchmark=benchmark,
        name=name,
        rule=rule,
        description=description,
        item_ids=sorted(int(pk) for pk in item_ids),
        derived_from=derived_from,
        created_by=user,
    )


@transaction.atomic
def do_set_kappa_weights(benchmark, weights: str) -> Benchmark:
    """The weighted κ the benchmark's agreement reports headline."""
    if weights not in Benchmark.KappaWeights.values:
        raise ValidationError(
            f"κ weights must be one of {', '.join(Benchmark.KappaWeights.values)}."
        )
    benchmark.kappa_weights = weights
    benchmark.save(update_fields=["kappa_weights"])
    return benchmark


@transaction.atomic
def ensure_role_groups() -> dict[str, Group]:
    """Create the four role groups with their permissions; safe to call repeatedly.
    Permissions are compared as ids and the missing links written at once: every
    new user calls this, and the manager's group holds several hundred."""
    groups = {g.name: g for g in Group.objects.filter(name__in=Role.values)}
    for role in Role:
        if role.value not in groups:
            groups[role.value] = Group.objects.create(name=role.value)
    named = {dotted for role in Role for dotted in ROLE_PERMISSIONS[role]}
    by_name, by_app = {}, {}
    for pk, app_label, codename in Permission.objects.filter(
        Q(content_type__app_label__in=MANAGER_APPS)
        | Q(content_type__app_label__in={d.split(".")[0] for d in named})
    ).values_list("pk", "content_type__app_label", "codename"):
        by_name[f"{app_label}.{codename}"] = pk
        by_app.setdefault(app_label, set()).add(pk)
    if unknown := named - by_name.keys():
        raise Permission.DoesNotExist(f"No permission {', '.join(sorted(unknown))}.")
    link = Group.permissions.through
    linked = set(
        link.objects.filter(group__in=groups.values()).values_list(
            "group_id", "permission_id"
        )
    )
    missing = []
    for role in Role:
        wanted = {by_name[dotted] for dotted in ROLE_PERMISSIONS[role]}
        if role == Role.MANAGER:
            wanted.update(*(by_app.get(app, ()) for app in MANAGER_APPS))
        group = groups[role.value]
        missing += [
            link(group_id=group.pk, permission_id=pk)
            for pk in wanted
            if (group.pk, pk) not in linked
        ]
    link.objects.bulk_create(missing, ignore_conflicts=True)
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
    user, _created = user_model.objects.get_or_create(
        username=username, defaults={"email": email}
    )
    user.set_password(password)
    user.is_staff = role == Role.MANAGER
    user.save(update_fields=["password", "is_staff"])
    user.groups.set([groups[role]])
    return user


@transaction.atomic
def do_set_final_label(
    item,
    label: Label,
    *,
    provenance: str,
    user=None,
    note: str = "",
    overwrite_human: bool = False,
) -> FinalLabel | None:
    """Set an item's final label in the label's dimension and record it in history.

    A label decided by a person (adjudicated or manual) is never replaced by a machine
    provenance unless `overwrite_human` is set; returns None when it was kept.
    """
    dimension = label.dimension
    current = (
        FinalLabel.objects.select_for_update()
        .select_related("label")
        .filter(item=item, dimension=dimension)
        .first()
    )
    machine = provenance not in {
        FinalLabel.Provenance.ADJUDICATED,
        FinalLabel.Provenance.MANUAL,
    }
    if current and current.is_human_decision and machine and not overwrite_human:
        return None
    before = (
        {"label": current.label.code, "provenance": current.provenance}
        if current
        else None
    )
    after = {"label": label.code, "provenance": provenance}
    if current:
        if before == after and current.note == note:
            return current
        current.label = label
        current.provenance = provenance
        current.decided_by = user
        current.note = note
        current.save(
            update_fields=["label", "provenance", "decided_by", "note", "decided_at"]
        )
        final = current
    else:
        final = FinalLabel.objects.create(
            item=item,
            dimension=dimension,
            label=label,
            provenance=provenance,
            decided_by=user,
            note=note,
        )
    ItemEvent.objects.create(
        item=item,
        kind="label",
        **ItemEvent.summary_fields(
            history.label_decided(dimension, label, final.provenance)
        ),
        before=before,
        after=after,
        user=user,
    )
    return final


HUMAN_PROVENANCES = {FinalLabel.Provenance.ADJUDICATED, FinalLabel.Provenance.MANUAL}


@transaction.atomic
def do_set_final_labels(
    decisions: Sequence[tuple[int, Label, str]],
    *,
    user=None,
    note: str = "",
    protected: frozenset = frozenset(HUMAN_PROVENANCES),
) -> dict[tuple[int, int], FinalLabel]:
    """The set-based `do_set_final_label` for many items: (item id, label,
    provenance) per decision, at most one per item and dimension, with the same
    rules — a final label whose provenance is `protected` (by default a human
    decision: adjudicated or manual) is never replaced by a machine provenance, an
    unchanged label writes nothing, every change is recorded in the item's history.

    A handful of queries whatever the number of decisions: the current labels are
    read and locked, then new labels, changed labels and history events are written
    in one statement each. Returns the protected final labels that were kept, by
    (item id, dimension id).
    """
    now = timezone.now()
    kept: dict[tuple[int, int], FinalLabel] = {}
    for start in range(0, len(decisions), FINAL_LABEL_BATCH):
        batch = decisions[start : start + FINAL_LABEL_BATCH]
        current = {
            (final.item_id, final.dimension_id): final
            for final in FinalLabel.objects.select_for_update()
            .select_related("label")
            .filter(
                item_id__in={item_id for item_id, _, _ in batch},
                dimension_id__in={label.dimension_id for _, label, _ in batch},
            )
        }
        created, changed, events = [], [], []
        for item_id, label, provenance in batch:
            key = (item_id, label.dimension_id)
            final = current.get(key)
            if (
                final is not None
                and final.provenance in protected
                and provenance not in HUMAN_PROVENANCES
            ):
                kept[key] = final
                continue
            before = (
                {"label": final.label.code, "provenance": final.provenance}
                if final is not None
                else None
            )
            after = {"label": label.code, "provenance": provenance}
            if final is None:
                final = FinalLabel(
                    item_id=item_id,
                    dimension_id=label.dimension_id,
                    label=label,
                    provenance=provenance,
                    decided_by=user,
                    note=note,
                )
                created.append(final)
            elif before == after and final.note == note:
                continue
            else:
                final.label = label
                final.provenance = provenance
                final.decided_by = user
                final.note = note
                final.decided_at = now  # bulk_update skips auto_now
                changed.append(final)
            events.append(
                ItemEvent(
                    item_id=item_id,
                    kind="label",
                    **ItemEvent.summary_fields(
                        history.label_decided(label.dimension, label, final.provenance)
                    ),
                    before=before,
                    after=after,
                    user=user,
                )
            )
        # A plain insert, not an upsert: a label someone else decided since the read
        # above makes this fail (and the transaction roll back) rather than vanish.
        FinalLabel.objects.bulk_create(created)
        FinalLabel.objects.bulk_update(
            changed, ["label", "provenance", "decided_by", "note", "decided_at"]
        )
        ItemEvent.objects.bulk_create(events)
    return kept


@dataclass(frozen=True)
class RenderingChange:
    """One new version of an item's text in one language (do_add_rendering_versions).
    Options and key points left as None are the previous version's."""

    item: object
    language: str
    question: str
    answer: str
    origin: str
    review_status: str
    options: list[str] | None = None
    key_points: list[str] | None = None


@transaction.atomic
def do_add_rendering_version(
    item,
    language: str,
    *,
    question: str,
    answer: str,
    origin: str,
    review_status: str,
    user=None,
    note: str = "",
    options: list[str] | None = None,
    key_points: list[str] | None = None,
) -> Rendering:
    """Add version n+1 of the item's text in `language` and make it current.

    Options and key points left as None are the previous version's: an edit of the
    question or answer (a reviewer's, a translation's) keeps them.
    """
    change = RenderingChange(
        item, language, question, answer, origin, review_status, options, key_points
    )
    return do_add_rendering_versions([change], user=user, note=note)[0]


@transaction.atomic
def do_add_rendering_versions(
    changes: list[RenderingChange], *, user=None, note: str = ""
) -> list[Rendering]:
    """Add a new current version for each change, with its history event, in a
    fixed number of statements whatever the count (an import updating 10,000 items
    made six round trips per rendering one by one)."""
    if not changes:
        return []
    item_ids = {change.item.pk for change in changes}
    languages = {change.language for change in changes}
    # The latest version of each (item, language), locked: versions are numbered
    # under this lock, so two writers never make the same version twice.
    latest: dict[tuple[int, str], Rendering] = {}
    for rendering in (
        Rendering.objects.select_for_update()
        .filter(item_id__in=item_ids, language__in=languages)
        .order_by("item_id", "language", "-version")
    ):
        latest.setdefault((rendering.item_id, rendering.language), rendering)
    previous = [latest.get((c.item.pk, c.language)) for c in changes]
    Rendering.objects.filter(
        pk__in=[p.pk for p in previous if p is not None and p.is_current]
    ).update(is_current=False)
    renderings = Rendering.objects.bulk_create(
        Rendering(
            item=change.item,
            language=change.language,
            version=before.version + 1 if before else 1,
            is_current=True,
            question=change.question,
            answer=change.answer,
            options=(
                change.options
                if change.options is not None
                else (before.options if before else [])
            ),
            key_points=(
                change.key_points
                if change.key_points is not None
                else (before.key_points if before else [])
            ),
            origin=change.origin,
            review_status=change.review_status,
            created_by=user,
            note=note,
        )
        for change, before in zip(changes, previous, strict=True)
    )
    ItemEvent.objects.bulk_create(
        _rendering_event(rendering, before, user)
        for rendering, before in zip(renderings, previous, strict=True)
    )
    return renderings


def _rendering_event(rendering: Rendering, previous: Rendering | None, user):
    before = None
    if previous:
        before = {
            "version": previous.version,
            "question": previous.question,
            "answer": previous.answer,
        }
    after = {
        "version": rendering.version,
        "question": rendering.question,
        "answer": rendering.answer,
    }
    # History shows options and key points only where they changed, so the history
    # of an open-QA item reads as it always has.
    for name in ("options", "key_points"):
        old = getattr(previous, name) if previous else []
        value = getattr(rendering, name)
        if value != old:
            after[name] = value
            if previous:
                before[name] = old
    return ItemEvent(
        item=rendering.item,
        kind="rendering",
        **ItemEvent.summary_fields(history.rendering_added(rendering)),
        before=before,
        after=after,
        user=user,
    )


@transaction.atomic
def do_set_item_status(items, status: str, *, summary: Note | str, user=None) -> int:
    """Move items to `status` (active, draft, retired), one history event per
    item that changed; returns how many changed."""
    changed = [item for item in items if item.status != status]
    for item in changed:
        before, item.status = item.status, status
        item.save(update_fields=["status", "updated_at"])
        ItemEvent.objects.create(
            item=item,
            kind="status",
            **ItemEvent.summary_fields(summary),
            before={"status": before},
            after={"status": status},
            user=user,
        )
    return len(changed)


@transaction.atomic
def do_set_rendering_review_status(
    rendering: Rendering, review_status: str, *, user=None, note: str = ""
) -> Rendering:
    before = rendering.review_status
    rendering.review_status = review_status
    rendering.save(update_fields=["review_status"])
    ItemEvent.objects.create(
        item=rendering.item,
        kind="review",
        **ItemEvent.summary_fields(history.rendering_reviewed(rendering)),
        before={"review_status": before},
        after={"review_status": review_status, "note": note},
        user=user,
    )
    return rendering


@transaction.atomic
def do_set_item_difficulties(
    benchmark, difficulties: dict[int, str], *, provenance: str, user=None
) -> int:
    """Set items' difficulty (easy/medium/hard) with its provenance, one history event
    per changed item. `difficulties` maps item id -> difficulty; returns the number
    of items changed."""
    from django.utils import timezone

    from benchmark.models import Item

    now = timezone.now()
    valid = set(Item.Difficulty.values) - {""}
    unknown = set(difficulties.values()) - valid
    if unknown:
        raise ValueError(f"Unknown difficulty value(s): {', '.join(sorted(unknown))}.")
    items = Item.objects.select_for_update().filter(
        benchmark=benchmark, pk__in=list(difficulties)
    )
    changed, events = [], []
    for item in items:
        new = difficulties[item.pk]
        if item.difficulty == new and item.difficulty_provenance == provenance:
            continue
        before = {
            "difficulty": item.difficulty,
            "provenance": item.difficulty_provenance,
        }
        item.difficulty = new
        item.difficulty_provenance = provenance
        item.updated_at = now
        changed.append(item)
        events.append(
            ItemEvent(
                item=item,
                kind="difficulty",
                **ItemEvent.summary_fields(history.difficulty_set(new, provenance)),
                before=before,
                after={"difficulty": new, "provenance": provenance},
                user=user,
            )
        )
    Item.objects.bulk_update(
        changed, ["difficulty", "difficulty_provenance", "updated_at"], batch_size=1000
    )
    ItemEvent.objects.bulk_create(events, batch_size=1000)
    return len(changed)


@dataclass(frozen=True)
class SsoClaims:
    """What a single sign-on provider says about the person signing in."""

    subject: str
    email: str
    email_verified: bool
    username: str
    roles: frozenset[str]


@transaction.atomic
def do_sign_in_sso_user(claims: SsoClaims):
    """Find or create the user the provider's subject names, and give them exactly
    the roles the provider's claims map to.

    A new subject is linked to an existing account with the same email only if the
    provider vouched for the address (`email_verified`) and exactly one account
    holds it, so a password account carries on under single sign-on; otherwise a
    new account is made.
    """
    unknown = claims.roles - set(Role.values)
    if unknown:
        raise ValueError(f"Unknown roles {sorted(unknown)}.")
    user_model = get_user_model()
    identity = (
        SsoIdentity.objects.select_related("user")
        .select_for_update()
        .filter(subject=claims.subject)
        .first()
    )
    if identity is not None:
        user = identity.user
    else:
        matches = (
            list(user_model.objects.filter(email__iexact=claims.email)[:2])
            if claims.email and claims.email_verified
            else []
        )
        if len(matches) == 1 and not hasattr(matches[0], "sso_identity"):
            user = matches[0]
        else:
            user = user_model.objects.create_user(
                _free_username(claims.username or claims.subject), email=claims.email
            )
        SsoIdentity.objects.create(user=user, subject=claims.subject)
    if claims.email and user.email != claims.email:
        user.email = claims.email
        user.save(update_fields=["email"])
    do_set_roles(user, claims.roles)
    return user


@transaction.atomic
def do_set_roles(user, roles: frozenset[str]) -> None:
    """Grant and revoke role groups so that the user holds exactly `roles`; groups
    that are not Assay roles are left alone."""
    groups = ensure_role_groups()
    user.groups.remove(*(groups[role] for role in set(Role.values) - roles))
    user.groups.add(*(groups[role] for role in roles))
    is_staff = Role.MANAGER in roles or user.is_superuser
    if user.is_staff != is_staff:
        user.is_staff = is_staff
        user.save(update_fields=["is_staff"])
    # benchmark.roles caches a user's roles on the object, which outlives this call.
    user._assay_roles = None


def _free_username(wanted: str) -> str:
    """`wanted`, cut to the username field's length, with a number added if taken."""
    user_model = get_user_model()
    limit = user_model._meta.get_field("username").max_length
    base = wanted[:limit]
    candidate, number = base, 1
    while user_model.objects.filter(username=candidate).exists():
        number += 1
        suffix = f"-{number}"
        candidate = base[: limit - len(suffix)] + suffix
    return candidate


@dataclass(frozen=True)
class VariantSpec:
    """A variant item to create from its seed (judging.robustness writes these
    from the metamorphic relations; the answer key is already the changed one)."""

    seed: Item
    relation: str
    sector: str
    language: str
    question: str
    answer: str
    options: list[str]
    correct_options: list[str]
    correct_answer: bool | None
    option_map: list[int]
    provenance: dict


def variant_external_id(seed_external_id: str, relation: str) -> str:
    return f"{seed_external_id}~{relation}"


@transaction.atomic
def do_create_variants(benchmark: Benchmark, specs: list[VariantSpec], *, user=None):
    """Create each variant as an item of `benchmark` linked to its seed, with its
    rendering and a history entry; a (seed, relation) that already has a variant
    is skipped, so the same specs twice create nothing. Returns the new links."""
    seeds = {spec.seed.pk for spec in specs}
    # Two generations of the same seeds at once: the second waits, then skips.
    list(Item.objects.select_for_update().filter(pk__in=seeds).values_list("pk"))
    taken = set(
        ItemVariant.objects.filter(seed_id__in=seeds).values_list("seed_id", "relation")
    )
    fresh: dict[tuple[int, str], VariantSpec] = {}
    for spec in specs:
        fresh.setdefault((spec.seed.pk, spec.relation), spec)
    specs = [spec for key, spec in fresh.items() if key not in taken]
    if not specs:
        return []
    items = Item.objects.bulk_create(
        Item(
            benchmark=benchmark,
            external_id=variant_external_id(spec.seed.external_id, spec.relation),
            source_kind=spec.seed.source_kind,
            source_reference=spec.seed.source_reference,
            knowledge_text=spec.seed.knowledge_text,
            domain=spec.seed.domain,
            difficulty=spec.seed.difficulty,
            format=spec.seed.format,
            correct_options=spec.correct_options,
            multiple_answers=spec.seed.multiple_answers,
            correct_answer=spec.correct_answer,
        )
        for spec in specs
    )
    Rendering.objects.bulk_create(
        Rendering(
            item=item,
            language=spec.language,
            question=spec.question,
            answer=spec.answer,
            options=spec.options,
            origin=Rendering.Origin.SOURCE,
            review_status=Rendering.ReviewStatus.APPROVED,
            created_by=user,
        )
        for item, spec in zip(items, specs, strict=True)
    )
    ItemEvent.objects.bulk_create(
        ItemEvent(
            item=item,
            kind="created",
            **ItemEvent.summary_fields(
                history.variant_created(spec.seed, spec.relation)
            ),
            after=spec.provenance,
            user=user,
        )
        for item, spec in zip(items, specs, strict=True)
    )
    return ItemVariant.objects.bulk_create(
        ItemVariant(
            item=item,
            seed=spec.seed,
            relation=spec.relation,
            sector=spec.sector[:200],
            option_map=spec.option_map,
        )
        for item, spec in zip(items, specs, strict=True)
    )
