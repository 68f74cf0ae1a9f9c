"""A stage audit worked over the API, as on the audit screen: reviewers (and
managers) only; the next item is a lease from the screen's review queue, so two
API clients never hold the same item; an answer goes through the screen's action,
a bad one refused with nothing changed; and the stage's audit statistics follow
the answers."""

import json

import pytest

from benchmark.actions import do_create_user
from construction.audits.actions import do_open_audit
from construction.models import AuditAnswer
from reviewqueue.models import Lease
from tests.api.helpers import BASE, declared_statuses, token_client
from tests.construction.factories import make_candidate, make_source

VERSION = "quality-test v1"


@pytest.fixture
def audit(benchmark):
    """An audit of six quality decisions: two rejects, four passes."""
    source = make_source(benchmark, text="插座额定电压 250 V")
    for n, outcome in enumerate(["reject"] * 2 + ["pass"] * 4):
        make_candidate(source, f"question {n}", [("quality", outcome, f"why {n}")])
    return do_open_audit(benchmark, "quality", VERSION, size=6, seed=1)


def url(audit, tail: str = "") -> str:
    return (
        f"{BASE}/benchmarks/{audit.benchmark.slug}/construction/audits/{audit.pk}{tail}"
    )


def post(client, address, body=None):
    return client.post(address, json.dumps(body or {}), "application/json")


def answer_url(audit, item_id) -> str:
    return url(audit, f"/items/{item_id}/answer")


def stored():
    return (
        list(AuditAnswer.objects.values_list("pk", "item_id", "agrees", "note")),
        list(Lease.objects.values_list("pk", "item_id", "user_id", "status")),
    )


@pytest.mark.parametrize(
    ("persona", "status"),
    [("manager", 200), ("reviewer", 200), ("expert", 403), ("adjudicator", 403)],
)
def test_the_audit_is_worked_by_reviewers_and_managers_only(
    audit, personas, persona, status
):
    client = token_client(personas[persona])
    listed = client.get(f"{BASE}/benchmarks/{audit.benchmark.slug}/construction/audits")
    claimed = post(client, url(audit, "/next"))
    item = audit.items.order_by("position").first()
    answered = post(client, answer_url(audit, item.pk), {"agrees": True})
    assert (listed.status_code, claimed.status_code, answered.status_code) == (
        status,
        status,
        status,
    )
    for response, name in (
        (listed, "list_audits"),
        (claimed, "next_audit_item"),
        (answered, "answer_audit_item"),
    ):
        assert response.status_code in declared_statuses(
            response.request["REQUEST_METHOD"], name
        )
    if status == 403:
        assert stored() == ([], [])
    else:
        relisted = client.get(
            f"{BASE}/benchmarks/{audit.benchmark.slug}/construction/audits"
        )
        assert listed.json()[0]["answered"] == 0
        assert relisted.json() == [
            {
                "id": audit.pk,
                "stage": "quality",
                "prompt_version": VERSION,
                "items": 6,
                "answered": 1,
                "left": 5,
            }
        ]


def test_the_next_item_shows_the_verdict_and_is_held_until_answered(audit, personas):
    reviewer = token_client(personas["reviewer"])
    task = post(reviewer, url(audit, "/next")).json()
    first = audit.items.order_by("position").first()
    item = task["item"]
    assert item["id"] == first.pk and item["position"] == 0
    assert item["question"] == first.decision.candidate.question
    assert (item["outcome"], item["reason"]) == (
        first.decision.outcome,
        first.decision.reason,
    )
    assert item["mine"] is None
    assert task["progress"]["left"] == 6
    # Asking again before answering gives the same item (the lease is renewed).
    assert post(reviewer, url(audit, "/next")).json()["item"]["id"] == first.pk
    answered = post(
        reviewer, answer_url(audit, first.pk), {"agrees": False, "note": " 不对 "}
    )
    assert answered.status_code == 200
    assert answered.json()["note"] == "不对"
    following = post(reviewer, url(audit, "/next")).json()["item"]
    assert following["id"] != first.pk


def test_two_api_clients_are_never_given_the_same_item(audit, personas):
    second_reviewer = do_create_user("reviewer2", "correct-horse-battery", "reviewer")
    clients = [token_client(personas["reviewer"]), token_client(second_reviewer)]
    seen = []
    while True:
        items = [post(client, url(audit, "/next")).json()["item"] for client in clients]
        held = [item["id"] for item in items if item]
        if not held:
            break
        assert len(set(held)) == len(held), held
        seen += held
        for client, item in zip(clients, items, strict=True):
            if item:
                answered = post(client, answer_url(audit, item["id"]), {"agrees": True})
                assert answered.status_code == 200
    assert sorted(seen) == sorted(audit.items.values_list("pk", flat=True))
    assert AuditAnswer.objects.count() == 6


def test_a_bad_answer_is_refused_with_why_and_nothing_changes(audit, personas):
    reviewer = token_client(personas["reviewer"])
    other = token_client(personas["manager"])
    held = post(other, url(audit, "/next")).json()["item"]["id"]
    free = audit.items.exclude(pk=held).order_by("position").first().pk
    before = stored()
    refusals = [
        (free, {"agrees": True, "note": "x" * 2001}, 422, "over 2000 characters"),
        (free, {"agrees": "maybe"}, 422, "agrees"),
        (free, {"note": "no verdict"}, 422, "agrees"),
        (free, {"agrees": True, "verdict": "x"}, 422, "verdict"),
        (held, {"agrees": True}, 409, "manager is working on this one now"),
    ]
    for item_id, body, status, why in refusals:
        answer = post(reviewer, answer_url(audit, item_id), body)
        assert answer.status_code == status, (body, answer.content)
        assert why in answer.json()["detail"], (body, answer.json())
        assert stored() == before, body
    elsewhere = post(
        reviewer,
        f"{BASE}/benchmarks/no-such-bench/construction/audits/{audit.pk}"
        f"/items/{free}/answer",
        {"agrees": True},
    )
    assert elsewhere.status_code == 404
    assert post(reviewer, url(audit, "/next")).json()["item"]["id"] != held
    assert AuditAnswer.objects.count() == 0


def test_the_stage_audit_statistics_follow_the_answers(audit, personas, benchmark):
    reviewer = token_client(personas["reviewer"])
    # People disagree with the first reject (keep it) and one pass (reject it).
    disagree = {"question 0", "question 2"}
    while item := post(reviewer, url(audit, "/next")).json()["item"]:
        agrees = item["question"] not in disagree
        answered = post(reviewer, answer_url(audit, item["id"]), {"agrees": agrees})
        assert answered.status_code == 200
    manager = token_client(personas["manager"])
    [measured] = manager.get(
        f"{BASE}/benchmarks/{benchmark.slug}/construction/stages/quality/audits"
    ).json()
    assert (measured["items"], measured["answered"], measured["measured"]) == (6, 6, 6)
    # TP 1 (reject 1), FP 1 (reject 0), FN 1 (pass 2), TN 3.
    assert (measured["agreement"]["successes"], measured["agreement"]["n"]) == (4, 6)
    assert (measured["precision"]["successes"], measured["precision"]["n"]) == (1, 2)
    assert (measured["recall"]["successes"], measured["recall"]["n"]) == (1, 2)
