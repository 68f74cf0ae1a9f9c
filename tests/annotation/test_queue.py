from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.utils import timezone

from annotation.actions import (
    do_create_grading_campaign,
    do_reassign,
    do_release_lease,
    do_set_campaign_status,
    do_skip,
    do_submit_grading,
)
from annotation.models import Assignment, Campaign, GradingLabel, Task
from annotation.queue import do_claim_next, following_task_id, previous_task_id
from benchmark.models import ItemEvent
from tests.annotation.factories import make_items, make_run

pytestmark = [pytest.mark.django_db, pytest.mark.smoke]


def users(count):
    model = get_user_model()
    return [model.objects.create_user(f"annotator{i}") for i in range(count)]


@pytest.fixture
def responses(benchmark):
    items = make_items(benchmark, 12)
    return make_run(benchmark, items)[1]


def campaign_for(benchmark, people, *, overlap=1, size=12, ask_safety=False):
    return do_create_grading_campaign(
        benchmark,
        name="Calibration",
        size=size,
        seed=7,
        overlap=overlap,
        assignees=people,
        ask_safety=ask_safety,
    )


def grade(assignment, user, score=2):
    return do_submit_grading(assignment.task, user, score=score, seconds=3)


def test_two_people_never_hold_one_task_with_overlap_one(benchmark, responses):
    alice, bob = users(2)
    campaign = campaign_for(benchmark, [alice, bob])
    first = do_claim_next(campaign, alice)
    second = do_claim_next(campaign, bob)
    assert first.task_id != second.task_id
    # Asking again resumes the lease instead of taking another task.
    assert do_claim_next(campaign, alice).pk == first.pk


def test_partly_labelled_tasks_come_first_and_nobody_labels_twice(benchmark, responses):
    alice, bob, carol = users(3)
    campaign = campaign_for(benchmark, [alice, bob, carol], overlap=2)
    first = do_claim_next(campaign, alice)
    grade(first, alice)
    # Bob is handed the task Alice half-finished, not a fresh one.
    assert do_claim_next(campaign, bob).task_id == first.task_id
    grade(do_claim_next(campaign, bob), bob)
    task = Task.objects.get(pk=first.task_id)
    assert task.label_count == 2
    # The task is full: Carol gets another; Alice never sees hers again.
    assert do_claim_next(campaign, carol).task_id != first.task_id
    seen = set()
    while (assignment := do_claim_next(campaign, alice)) is not None:
        assert assignment.task_id not in seen
        seen.add(assignment.task_id)
        grade(assignment, alice)
    assert first.task_id not in seen
    assert GradingLabel.objects.filter(user=alice).count() == 12


def test_expired_lease_returns_to_the_queue_and_late_submit_is_refused(
    benchmark, responses
):
    alice, bob = users(2)
    campaign = campaign_for(benchmark, [alice, bob], size=1)
    held = do_claim_next(campaign, alice)
    assert do_claim_next(campaign, bob) is None
    Assignment.objects.filter(pk=held.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    taken = do_claim_next(campaign, bob)
    assert taken.task_id == held.task_id
    with pytest.raises(ValidationError, match="given to someone else"):
        grade(held, alice)
    assert GradingLabel.objects.count() == 0
    grade(taken, bob)
    assert Task.objects.get(pk=held.task_id).label_count == 1


def test_lapsed_lease_can_still_submit_when_nobody_took_the_task(benchmark, responses):
    (alice,) = users(1)
    campaign = campaign_for(benchmark, [alice], size=1)
    held = do_claim_next(campaign, alice)
    Assignment.objects.filter(pk=held.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    grade(held, alice)
    assert Task.objects.get(pk=held.task_id).label_count == 1


def test_reserved_task_goes_only_to_its_person_and_first(benchmark, responses):
    alice, bob = users(2)
    campaign = campaign_for(benchmark, [alice, bob])
    last = campaign.tasks.order_by("-position").first()
    do_reassign(last, bob)
    for _ in range(11):
        assignment = do_claim_next(campaign, alice)
        assert assignment.task_id != last.pk
        grade(assignment, alice)
    assert do_claim_next(campaign, alice) is None
    assert do_claim_next(campaign, bob).task_id == last.pk


def test_skip_needs_a_reason_and_hands_the_task_to_others(benchmark, responses):
    alice, bob = users(2)
    campaign = campaign_for(benchmark, [alice, bob], size=1)
    held = do_claim_next(campaign, alice)
    with pytest.raises(ValidationError, match="why"):
        do_skip(held.task, alice, reason=" ")
    do_skip(held.task, alice, reason="Outside my field")
    assert do_claim_next(campaign, alice) is None
    assert do_claim_next(campaign, bob).task_id == held.task_id
    skipped = Assignment.objects.get(pk=held.pk)
    assert (skipped.status, skipped.skip_reason) == ("skipped", "Outside my field")


def test_correction_adds_a_record_and_keeps_history(benchmark, responses):
    (alice,) = users(1)
    campaign = campaign_for(benchmark, [alice], ask_safety=True)
    held = do_claim_next(campaign, alice)
    first = do_submit_grading(
        held.task, alice, score=1, safety_violation=False, seconds=4
    )
    do_submit_grading(
        held.task, alice, score=3, safety_violation=True, seconds=2, corrects=first.pk
    )
    labels = GradingLabel.objects.filter(task=held.task).order_by("created_at")
    assert [(x.score, x.safety_violation, x.is_latest) for x in labels] == [
        (1, False, False),
        (3, True, True),
    ]
    assert Task.objects.get(pk=held.task_id).label_count == 1
    # Grades stay out of the item's history, which every expert can read.
    assert not ItemEvent.objects.filter(user=alice).exists()
    do_set_campaign_status(campaign, Campaign.Status.CLOSED)
    with pytest.raises(ValidationError, match="closed"):
        do_submit_grading(held.task, alice, score=0, safety_violation=False)
    assert GradingLabel.objects.filter(task=held.task).count() == 2


def test_bad_grades_change_nothing(benchmark, responses):
    (alice,) = users(1)
    campaign = campaign_for(benchmark, [alice], ask_safety=True)
    held = do_claim_next(campaign, alice)
    for score, safety in [(None, False), (4, False), (2, None)]:
        with pytest.raises(ValidationError):
            do_submit_grading(held.task, alice, score=score, safety_violation=safety)
    assert GradingLabel.objects.count() == 0
    assert Assignment.objects.get(pk=held.pk).status == "active"


def test_back_and_forward_walk_my_history(benchmark, responses):
    (alice,) = users(1)
    campaign = campaign_for(benchmark, [alice])
    done = []
    for _ in range(3):
        assignment = do_claim_next(campaign, alice)
        grade(assignment, alice)
        done.append(assignment.task_id)
    current = do_claim_next(campaign, alice)
    assert previous_task_id(campaign, alice, current.task_id) == done[2]
    assert previous_task_id(campaign, alice, done[2]) == done[1]
    assert previous_task_id(campaign, alice, done[0]) is None
    assert following_task_id(campaign, alice, done[0]) == done[1]
    assert following_task_id(campaign, alice, done[2]) is None


def test_released_lease_and_closed_campaign(benchmark, responses):
    alice, bob = users(2)
    campaign = campaign_for(benchmark, [alice, bob], size=1)
    held = do_claim_next(campaign, alice)
    do_release_lease(held)
    assert do_claim_next(campaign, bob).task_id == held.task_id
    do_set_campaign_status(campaign, Campaign.Status.CLOSED)
    assert do_claim_next(campaign, alice) is None
