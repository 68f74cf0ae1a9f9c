"""Release, in IndustryBench's order (§3.2–3.3):

    verified pool ─open─▶ draft items ─labels─▶ release sample ─▶ exact dedup
    ─▶ dangling references ─people─▶ released items

1. `do_open_pool`: each candidate of the verified pool (it passed every stage
   run before the release sample) becomes a *draft* item, so that a labelling
   run (item filter status = draft) or imported final labels give it its
   capability and industry; a source field named like a strata dimension whose
   value is one of its label codes is imported as that final label.
2. `do_draw_release_sample`: a seeded sample of the pool stratified by
   capability × industry (largest-remainder allocation, construction.sampling:
   each stratum within one item of its share), of the paper's target size or
   another; a `release` decision per pool candidate — pass when drawn, reject
   ("not drawn") otherwise — so the funnel's release row reads pool → sample.
3. The exact-dedup and dangling-reference runs (postprocess.py) decide on the
   sample only; people review the flags (actions.do_review_flag).
4. `do_release`: what passed them becomes active items, with a `released`
   decision each; refused while flags wait.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from benchmark.actions import do_set_final_labels, do_set_item_status
from benchmark.creating import CREATE_BATCH, NewItem, do_create_items
from benchmark.models import Benchmark, FinalLabel, Item, Label
from benchmark.notes import Note
from construction.models import Candidate, Source, Stage, StageDecision
from construction.pipeline import pool_ids, stage_pool, stages_run
from construction.sampling import stratified_sample

STRATA = ("capability", "industry")
# The paper's release sample: 2,049 released after exact dedup removed 25 and
# the dangling check 9 (§3.3).
PAPER_RELEASE_SIZE = 2049 + 25 + 9
NOT_DRAWN = "Not drawn in the release sample"
# A released forum item's provenance names its post by these, with its counts.
POST_PROVENANCE = ("forum", "post_id", "url", "title", "posted_at", "field")
Outcome = StageDecision.Outcome

ITEM_SOURCE_KIND = {
    Source.Kind.GBT_STANDARD: Item.SourceKind.STANDARD,
    Source.Kind.PRODUCT_RECORD: Item.SourceKind.PRODUCT,
}


def release_external_id(candidate: Candidate) -> str:
    return f"CAND-{candidate.pk}"


def provenance(candidate: Candidate) -> dict:
    """Where a construction item came from: its candidate and source (and, for
    a forum post, the post's metadata)."""
    source = candidate.source
    found = {
        "candidate": candidate.pk,
        "source": source.pk,
        "source_kind": source.kind,
        "source_reference": source.reference,
    }
    if source.kind == Source.Kind.FORUM_POST:
        fields = source.fields
        found["post"] = {
            **{name: fields[name] for name in POST_PROVENANCE if fields.get(name)},
            "views": fields.get("views", 0),
            "replies": fields.get("replies", 0),
            "votes": fields.get("votes", 0),
            "screenshots": len(fields.get("images") or []),
        }
    return found


# -- 1. the verified pool as draft items ----------------------------------------------


def verified_pool(benchmark: Benchmark) -> list[Candidate]:
    return stage_pool(benchmark.pk, Stage.RELEASE)


@transaction.atomic
def do_open_pool(benchmark: Benchmark, *, user=None) -> int:
    """Give each candidate of the verified pool without one a draft item (its
    question and newest reference answer), with the labels its source names;
    returns how many were opened. Opening again adds nothing. The items are
    written in batches (benchmark.creating) and linked in one UPDATE per batch:
    this runs in a web request."""
    missing = Candidate.objects.select_for_update().filter(
        pk__in=pool_ids(benchmark.pk, Stage.RELEASE), item__isnull=True
    )
    candidates = list(missing.select_related("source").order_by("id"))
    _draft_items(benchmark, candidates, user)
    labels = _strata_labels(benchmark)
    imported = []
    for candidate in candidates:
        for dimension in STRATA:
            code = str(candidate.source.fields.get(dimension, ""))
            if (dimension, code) in labels:
                imported.append(
                    (candidate.item_id, labels[dimension, code], "imported")
                )
    if imported:
        do_set_final_labels(imported, user=user, note="from the construction source")
    return len(candidates)


def _draft_items(benchmark: Benchmark, candidates: list[Candidate], user) -> None:
    """A draft item for each of `candidates` (which have none), written in batches
    (benchmark.creating), set on the candidate and linked in one UPDATE per batch."""
    items = do_create_items(
        benchmark, [_draft_item(candidate) for candidate in candidates], user=user
    )
    for candidate, item in zip(candidates, items, strict=True):
        candidate.item = item
    _link_items(candidates)


def _draft_item(candidate: Candidate) -> NewItem:
    """The candidate's item, a draft until it is released."""
    source = candidate.source
    return NewItem(
        external_id=release_external_id(candidate),
        question=candidate.question,
        answer=candidate.reference_answer,
        source_kind=ITEM_SOURCE_KIND.get(source.kind, Item.SourceKind.OTHER),
        source_reference=source.reference,
        knowledge_text=candidate.knowledge_text,
        summary=Note(
            gettext_noop(
                "Drafted from construction candidate %(candidate)s (source %(source)s)"
            ),
            candidate=candidate.pk,
            source=source.reference,
        ),
        provenance=provenance(candidate),
        status=Item.Status.DRAFT,
    )


def _link_items(candidates: list[Candidate]):
    """Each candidate's `item_id`, in one UPDATE … FROM VALUES per batch (named
    in a WITH clause: SQLite does not take column names after a VALUES alias)."""
    table = connection.ops.quote_name(Candidate._meta.db_table)
    for start in range(0, len(candidates), CREATE_BATCH):
        batch = candidates[start : start + CREATE_BATCH]
        values = ", ".join(["(%s, %s)"] * len(batch))
        with connection.cursor() as cursor:
            cursor.execute(
                f"WITH link (id, item_id) AS (VALUES {values}) "
                f"UPDATE {table} AS candidate SET item_id = link.item_id "
                "FROM link WHERE candidate.id = link.id",
                [value for c in batch for value in (c.pk, c.item_id)],
            )


def _strata_labels(benchmark: Benchmark) -> dict[tuple[str, str], Label]:
    return {
        (label.dimension.code, label.code): label
        for label in Label.objects.filter(
            dimension__benchmark=benchmark, dimension__code__in=STRATA
        ).select_related("dimension")
    }


# -- 2. the release sample ------------------------------------------------------------


def candidate_strata(candidates: list[Candidate]) -> dict[int, str]:
    """candidate id → "capability × industry" label codes of its item's final
    labels, for the candidates whose item has both."""
    codes: dict[int, dict[str, str]] = {}
    by_item = {c.item_id: c.pk for c in candidates if c.item_id}
    for item_id, dimension, code in FinalLabel.objects.filter(
        item_id__in=by_item, dimension__code__in=STRATA
    ).values_list("item_id", "dimension__code", "label__code"):
        codes.setdefault(by_item[item_id], {})[dimension] = code
    return {
        candidate_id: " × ".join(found[d] for d in STRATA)
        for candidate_id, found in codes.items()
        if all(d in found for d in STRATA)
    }


def sample_version(size: int, seed: int) -> str:
    return f"sample n={size} seed={seed} by {' × '.join(STRATA)}"


@dataclass(frozen=True)
class ReleaseSample:
    pool: int
    drawn: int
    strata: dict[str, tuple[int, int]]  # stratum → (in the pool, drawn)
    new: bool  # False: this sample was drawn before

    def __str__(self):
        numbers = {"drawn": self.drawn, "pool": self.pool, "strata": len(self.strata)}
        if self.new:
            return (
                _(
                    "Release sample of %(drawn)s from a verified pool of %(pool)s, "
                    "over %(strata)s capability × industry strata."
                )
                % numbers
            )
        return (
            _(
                "Release sample of %(drawn)s from a verified pool of %(pool)s, "
                "over %(strata)s capability × industry strata (drawn before: "
                "nothing changed)."
            )
            % numbers
        )


def check_draw_release_sample(benchmark: Benchmark, size: int, seed: int):
    """(the pool, its strata, whether this sample was drawn before), or
    ValidationError saying what is missing."""
    if size < 1 or seed < 0:
        raise ValidationError(_("Draw at least one candidate, with a seed ≥ 0."))
    ran = stages_run(benchmark.pk)
    for stage in (Stage.GENERATION, Stage.DEDUP, Stage.QUALITY):
        if stage not in ran:
            raise ValidationError(
                _("Run the %(value)s stage first.")
                % {"value": Stage(stage).label.lower()}
            )
    pool = verified_pool(benchmark)
    if not pool:
        raise ValidationError(_("No candidate is in the verified pool."))
    drawn = (
        StageDecision.objects.filter(
            candidate__source__benchmark=benchmark, stage=Stage.RELEASE
        )
        .values_list("prompt_version", flat=True)
        .first()
    )
    if drawn and drawn != sample_version(size, seed):
        raise ValidationError(
            _(
                "The release sample was already drawn (%(drawn)s); the checks and the "
                "release follow from it."
            )
            % {"drawn": drawn}
        )
    unopened = sum(1 for candidate in pool if candidate.item_id is None)
    if unopened:
        raise ValidationError(
            _(
                "%(unopened)s candidate(s) of the verified pool have no draft item: "
                "open the pool for labelling first."
            )
            % {"unopened": unopened}
        )
    strata = candidate_strata(pool)
    unlabelled = len(pool) - len(strata)
    if unlabelled:
        raise ValidationError(
            _(
                "%(unlabelled)s candidate(s) of the verified pool lack a capability "
                "or industry label: label the draft items (a labelling run on status "
                "draft) or import their final labels."
            )
            % {"unlabelled": unlabelled}
        )
    return pool, strata, bool(drawn)


@transaction.atomic
def do_draw_release_sample(
    benchmark: Benchmark, size: int, seed: int, *, user=None
) -> ReleaseSample:
    pool, strata, drawn_before = check_draw_release_sample(benchmark, size, seed)
    names = [strata[candidate.pk] for candidate in pool]
    chosen = {pool[i].pk for i in stratified_sample(names, size, seed)}
    version = sample_version(size, seed)
    StageDecision.objects.bulk_create(
        [
            StageDecision(
                candidate=candidate,
                stage=Stage.RELEASE,
                outcome=Outcome.PASS if candidate.pk in chosen else Outcome.REJECT,
                reason="" if candidate.pk in chosen else NOT_DRAWN,
                model="stratified-sample",
                prompt_version=version,
                evidence={"stratum": strata[candidate.pk]},
                decided_by=user,
            )
            for candidate in pool
        ],
        ignore_conflicts=True,
    )
    in_pool = Counter(names)
    drawn = Counter(strata[pk] for pk in chosen)
    return ReleaseSample(
        pool=len(pool),
        drawn=len(chosen),
        strata={name: (n, drawn[name]) for name, n in sorted(in_pool.items())},
        new=not drawn_before,
    )


# -- 4. release ---------------------------------------------------------------------


@dataclass(frozen=True)
class ReleaseResult:
    released: int
    already: int

    def __str__(self):
        if not self.released:
            return _(
                "Nothing added: the %(already)s item(s) were already released."
            ) % {"already": self.already}
        return _("%(released)s item(s) released.") % {"released": self.released}


def check_release(benchmark: Benchmark) -> None:
    ran = stages_run(benchmark.pk)
    for stage in (Stage.RELEASE, Stage.EXACT, Stage.DANGLING):
        if stage not in ran:
            if stage == Stage.RELEASE:
                raise ValidationError(_("Draw the release sample first."))
            raise ValidationError(
                _("Run the %(stage)s check on the sample first.")
                % {"stage": Stage(stage).label.lower()}
            )
    waiting = (
        StageDecision.objects.filter(
            candidate__source__benchmark=benchmark,
            stage=Stage.DANGLING,
            outcome=Outcome.PENDING,
        )
        .values("candidate")
        .distinct()
        .count()
    )
    if waiting:
        raise ValidationError(
            _(
                "%(waiting)s dangling-reference flag(s) wait for review: approve or "
                "remove each first."
            )
            % {"waiting": waiting}
        )


@transaction.atomic
def do_release(benchmark: Benchmark, *, user=None) -> ReleaseResult:
    """Make the items of the candidates that passed the sample's checks active,
    each with a `released` decision; releasing again adds nothing."""
    check_release(benchmark)
    pool = list(
        Candidate.objects.select_for_update(of=("self",))
        .filter(pk__in=pool_ids(benchmark.pk, Stage.RELEASED))
        .select_related("item", "source")
        .order_by("id")
    )
    # Sampled without the pool opened (a script): their items are drafted here.
    _draft_items(benchmark, [c for c in pool if c.item is None], user)
    strata = candidate_strata(pool)
    fresh = [c for c in pool if c.item.status != Item.Status.ACTIVE]
    do_set_item_status(
        [candidate.item for candidate in fresh],
        Item.Status.ACTIVE,
        summary=Note(gettext_noop("Released from construction")),
        user=user,
    )
    record_released(fresh, user, lambda c: {"stratum": strata.get(c.pk)})
    return ReleaseResult(released=len(fresh), already=len(pool) - len(fresh))


def record_released(candidates, user, evidence) -> None:
    """The ledger's last row for each released candidate: its item, and what
    `evidence(candidate)` adds (its stratum, its format). Once per candidate."""
    StageDecision.objects.bulk_create(
        [
            StageDecision(
                candidate=candidate,
                stage=Stage.RELEASED,
                outcome=Outcome.PASS,
                model="release",
                prompt_version="released",
                evidence={"item": candidate.item_id, **evidence(candidate)},
                decided_by=user,
            )
            for candidate in candidates
        ],
        ignore_conflicts=True,
    )
