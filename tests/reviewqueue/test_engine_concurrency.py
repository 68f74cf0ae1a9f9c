"""Twenty reviewers taking stage-audit items and variant drafts at once
(PostgreSQL, one connection each): no item is ever handed to two of them, and
every item is decided exactly once (#26)."""

import threading
from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.db import connections

from benchmark.models import Benchmark
from construction.audits.actions import audit_queue, do_answer, do_open_audit
from construction.audits.read import unanswered
from construction.demo import industrial as construction_demo
from construction.models import AuditAnswer, AuditItem, StageDecision
from judging.robustness import actions as robustness
from judging.robustness import demo as robustness_demo
from judging.robustness.models import VariantDraft
from reviewqueue import engine
from reviewqueue.models import Lease

WORKERS = 20
pytestmark = pytest.mark.django_db(transaction=True)


def reviewers():
    return [get_user_model().objects.create_user(f"r{i}") for i in range(WORKERS)]


def race(queue, people, candidates, decide):
    """Every reviewer claims and decides until the queue is empty; returns the
    (item, reviewer) hand-outs and any error."""
    handed, errors = [], []
    start = threading.Barrier(len(people))

    def work(user):
        try:
            start.wait()
            while (item_id := engine.claim(queue, user, candidates())) is not None:
                handed.append((item_id, user.pk))
                decide(item_id, user)
        except Exception as error:  # surfaced by the assertion below
            errors.append(repr(error))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(user,)) for user in people]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert all(not thread.is_alive() for thread in threads)
    return handed, errors


def test_twenty_reviewers_never_get_the_same_audit_item():
    construction_demo.seed()
    benchmark = Benchmark.objects.get(slug=construction_demo.CONSTRUCTION_SLUG)
    version = (
        StageDecision.objects.filter(stage="quality", decided_by__isnull=True)
        .values_list("prompt_version", flat=True)
        .first()
    )
    audit = do_open_audit(benchmark, "quality", version, size=60, seed=3)
    AuditAnswer.objects.filter(item__audit=audit).delete()
    items = AuditItem.objects.filter(audit=audit).count()
    assert items >= 2 * WORKERS

    def decide(item_id, user):
        do_answer(AuditItem.objects.get(pk=item_id), agrees=True, user=user)

    handed, errors = race(
        audit_queue(audit.pk), reviewers(), lambda: unanswered(audit), decide
    )
    assert errors == []
    per_item = Counter(item for item, _ in handed)
    assert len(per_item) == items
    assert set(per_item.values()) == {1}  # 0 double hand-outs
    answers = Counter(AuditAnswer.objects.values_list("item_id", flat=True))
    assert set(answers.values()) == {1} and len(answers) == items
    assert not Lease.objects.filter(status="active").exists()


def test_twenty_reviewers_never_get_the_same_variant_draft():
    benchmark = robustness_demo.seed(None)
    template = VariantDraft.objects.filter(status="awaiting").first()
    VariantDraft.objects.bulk_create(
        VariantDraft(
            run=template.run,
            seed=template.seed,
            relation=f"logic-{n}",
            text=f"{template.text} ({n})",
        )
        for n in range(60)
    )
    awaiting = VariantDraft.objects.filter(status="awaiting").count()

    def decide(draft_id, user):
        robustness.do_review_draft(draft_id, "rejected", user=user, reason="load")

    handed, errors = race(
        robustness.drafts_queue(benchmark.pk),
        reviewers(),
        lambda: robustness.awaiting_drafts(benchmark),
        decide,
    )
    assert errors == []
    per_draft = Counter(draft for draft, _ in handed)
    assert len(per_draft) == awaiting
    assert set(per_draft.values()) == {1}  # 0 double hand-outs
    assert not VariantDraft.objects.filter(status="awaiting").exists()
    decided_by = dict(
        VariantDraft.objects.filter(reason="load").values_list("pk", "reviewed_by")
    )
    assert decided_by == dict(handed)
