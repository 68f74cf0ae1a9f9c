"""Experts grade blind; every queue view checks the role (tested as a matrix)."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.actions import (
    do_create_adjudication_campaign,
    do_create_grading_campaign,
    do_create_review_campaign,
    do_submit_grading,
)
from annotation.models import Task
from annotation.queue import do_claim_next
from benchmark.actions import do_create_user
from judging.evaluation.models import Judgment
from tests.annotation.factories import (
    HTMX,
    flag_translation,
    make_items,
    make_run,
    make_split_consensus,
    take_next_task,
)

pytestmark = pytest.mark.django_db
SECRET_MODELS = ("Zephyr-Secret-70B", "Quartz-Hidden-9B")


@pytest.fixture
def seeded(benchmark, personas):
    """A grading campaign over two judged runs; another expert has labelled some."""
    items = make_items(benchmark, 8)
    for name in SECRET_MODELS:
        _, responses = make_run(
            benchmark, items, model_name=name, judge_reason=f"Verdict-{name}"
        )
        Judgment.objects.bulk_create(
            Judgment(
                response=response,
                kind=Judgment.Kind.SAFETY,
                judge_name=f"SafetyJudge-{name}",
                safety_violation=True,
                reason=f"SV-reason-{name}-{response.pk}",
                status=Judgment.Status.DONE,
            )
            for response in responses
        )
    colleague = do_create_user("colleague-expert-x", "pw-123456789", "expert")
    campaign = do_create_grading_campaign(
        benchmark,
        name="Blind calibration",
        size=16,
        seed=11,
        overlap=2,
        ask_safety=True,
        assignees=[personas["expert"], colleague],
    )
    for _ in range(5):
        assignment = do_claim_next(campaign, colleague)
        do_submit_grading(
            assignment.task, colleague, score=3, safety_violation=True, seconds=1
        )
    return campaign


def forbidden_strings(campaign):
    judgments = Judgment.objects.filter(response__run__benchmark=campaign.benchmark)
    strings = set(SECRET_MODELS) | {"colleague-expert-x", "closed"}
    for judge_name, reason in judgments.values_list("judge_name", "reason"):
        strings |= {judge_name, reason}
    return strings


def test_nothing_on_the_expert_pages_reveals_judges_models_or_colleagues(
    seeded, client_for
):
    client = client_for("expert")
    url = reverse("annotation:grade", args=[seeded.pk])
    pages = [client.get(reverse("annotation:queues")), client.get(url)]
    pages.append(take_next_task(client, url))
    pages.append(client.get(url, **HTMX))
    shown = []
    while True:
        html = pages[-1].content.decode()
        match = re.search(r'data-task="(\d+)"', html)
        if not match:
            break
        task = int(match.group(1))
        if task in shown:
            break
        shown.append(task)
        if len(shown) == 3:
            pages.append(client.post(url, {"task": task, "score": "1"}, **HTMX))
            pages.append(
                client.post(
                    url, {"task": task, "action": "skip", "reason": "no"}, **HTMX
                )
            )
        else:
            pages.append(
                client.post(url, {"task": task, "score": "2", "safety": "s"}, **HTMX)
            )
    first = shown[0]
    pages.append(client.get(url, {"task": first}))
    pages.append(client.get(url, {"task": first}, **HTMX))
    pages.append(client.post(url, {"task": first, "score": "0", "safety": "v"}, **HTMX))
    assert len(shown) >= 8, "the expert worked through the queue"
    # The item pages every expert can open show no grades or judge output either.
    slug = seeded.benchmark.slug
    pages.append(client.get(reverse("benchmark:item_list", args=[slug])))
    for task in Task.objects.filter(campaign=seeded):
        pages.append(
            client.get(reverse("benchmark:item_detail", args=[slug, task.item_id]))
        )
    forbidden = forbidden_strings(seeded)
    for page in pages:
        assert page.status_code in (200, 400)
        body = page.content.decode()
        leaked = {text for text in forbidden if text.lower() in body.lower()}
        assert leaked == set(), f"{page.request['PATH_INFO']} leaks {leaked}"
        assert "judge" not in body.lower()


@pytest.fixture
def campaigns(benchmark, personas):
    items = make_items(benchmark, 2)
    make_run(benchmark, items)
    make_split_consensus(benchmark, items[0])
    flag_translation(items[1])
    return {
        "grade": do_create_grading_campaign(
            benchmark, name="G", size=2, seed=1, assignees=[personas["expert"]]
        ),
        "adjudicate": do_create_adjudication_campaign(
            benchmark, name="A", assignees=[personas["adjudicator"]]
        ),
        "review": do_create_review_campaign(
            benchmark, name="R", assignees=[personas["reviewer"]]
        ),
    }


WORKER = {"grade": "expert", "adjudicate": "adjudicator", "review": "reviewer"}
PEOPLE = ("manager", "expert", "adjudicator", "reviewer", "outsider")


@pytest.mark.parametrize("screen", ["grade", "adjudicate", "review"])
@pytest.mark.parametrize("person", PEOPLE)
def test_work_screens_open_only_to_their_role(campaigns, client_for, screen, person):
    campaign = campaigns[screen]
    url = reverse(f"annotation:{screen}", args=[campaign.pk])
    client = client_for(person)
    allowed = person in ("manager", WORKER[screen])
    assert client.get(url).status_code == (200 if allowed else 403)
    posted = client.post(url, {"task": campaign.tasks.first().pk, "action": "skip"})
    assert posted.status_code == (400 if allowed else 403)


def test_a_worker_not_assigned_to_the_campaign_is_refused(campaigns, personas):
    from django.test import Client

    stranger = do_create_user("expert2", "pw-123456789", "expert")
    client = Client()
    client.force_login(stranger)
    url = reverse("annotation:grade", args=[campaigns["grade"].pk])
    assert client.get(url).status_code == 403


@pytest.mark.parametrize("person", PEOPLE)
def test_manager_pages_and_actions(campaigns, client_for, person):
    campaign = campaigns["grade"]
    client = client_for(person)
    lease = do_claim_next(campaign, get_user_model().objects.get(username="expert"))
    manager = person == "manager"
    gets = [
        reverse("annotation:campaign", args=[campaign.pk]),
        reverse("annotation:campaign_new") + "?kind=grading",
        reverse("annotation:export", args=[campaign.pk, "csv"]),
        reverse("annotation:export", args=[campaign.pk, "jsonl"]),
    ]
    for url in gets:
        assert client.get(url).status_code == (200 if manager else 403), url
    posts = [
        (reverse("annotation:release_lease", args=[lease.pk]), {}),
        (reverse("annotation:reassign", args=[lease.task_id]), {"username": ""}),
        (reverse("annotation:campaign_status", args=[campaign.pk]), {"status": "open"}),
    ]
    for url, data in posts:
        assert client.post(url, data).status_code == (302 if manager else 403), url
    lease.refresh_from_db()
    assert lease.status == ("released" if manager else "active")


@pytest.mark.parametrize("person", PEOPLE)
def test_queue_list_shows_only_my_campaigns(campaigns, client_for, person):
    response = client_for(person).get(reverse("annotation:queues"))
    if person == "outsider":
        assert response.status_code == 403
        return
    names = {row["campaign"].name for row in response.context["rows"]}
    expected = {
        "manager": {"G", "A", "R"},
        "expert": {"G"},
        "adjudicator": {"A"},
        "reviewer": {"R"},
    }[person]
    assert names == expected


def test_campaign_without_assignees_is_open_to_the_role(benchmark, client_for):
    items = make_items(benchmark, 2)
    make_run(benchmark, items)
    campaign = do_create_grading_campaign(benchmark, name="Open", size=2, seed=1)
    url = reverse("annotation:grade", args=[campaign.pk])
    assert client_for("expert").get(url).status_code == 200
    assert client_for("reviewer").get(url).status_code == 403
    listed = client_for("expert").get(reverse("annotation:queues")).context["rows"]
    assert [row["campaign"].name for row in listed] == ["Open"]
