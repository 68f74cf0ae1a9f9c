"""Stage audits: the stored, seeded sample (pending and people's decisions left
out), append-only answers, the measures on the stage page, the reviewer's
screen and who may open what."""

from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from construction.audits.actions import do_answer, do_open_audit
from construction.audits.read import audit_measure, audit_progress, unanswered
from construction.models import AuditAnswer, StageAudit, StageDecision
from tests.construction.factories import make_candidate, make_source

VERSION = "quality-test v1"


@pytest.fixture
def ledger(benchmark, personas):
    """Twelve quality decisions: four rejects, six passes, a pending one and
    one a person decided."""
    source = make_source(benchmark, text="插座额定电压 250 V")
    outcomes = ["reject"] * 4 + ["pass"] * 6 + ["pending"]
    candidates = [
        make_candidate(source, f"question {n}", [("quality", outcome, f"why {n}")])
        for n, outcome in enumerate(outcomes)
    ]
    by_person = make_candidate(source, "question by a person", [])
    StageDecision.objects.create(
        candidate=by_person,
        stage="quality",
        outcome="reject",
        prompt_version=VERSION,
        decided_by=personas["manager"],
    )
    return candidates


def test_the_sample_is_seeded_stored_and_leaves_out_pending_and_people(
    benchmark, ledger, personas
):
    audit = do_open_audit(benchmark, "quality", VERSION, size=5, seed=3)
    again = do_open_audit(benchmark, "quality", VERSION, size=5, seed=3)
    other = do_open_audit(benchmark, "quality", VERSION, size=5, seed=4)

    def sample(a):
        return list(a.items.order_by("position").values_list("decision_id", flat=True))

    assert sample(audit) == sample(again) != sample(other)
    assert audit.population == 10  # not the pending one, not the person's
    assert len(set(sample(audit))) == 5
    sampled = StageDecision.objects.filter(pk__in=sample(audit))
    assert not sampled.filter(outcome="pending").exists()
    assert not sampled.filter(decided_by__isnull=False).exists()
    everything = do_open_audit(benchmark, "quality", VERSION, size=50, seed=0)
    assert everything.items.count() == 10


@pytest.mark.parametrize(
    ("stage", "version", "size", "message"),
    [
        ("generation", VERSION, 5, "Choose a stage that decides on candidates."),
        ("quality", "nothing v9", 5, "No decided quality check decision"),
        ("quality", VERSION, 0, "The sample size must be between 1 and 5000."),
    ],
)
def test_a_bad_audit_is_refused_and_changes_nothing(
    benchmark, ledger, stage, version, size, message
):
    with pytest.raises(ValidationError) as refused:
        do_open_audit(benchmark, stage, version, size=size)
    assert message in refused.value.messages[0]
    assert not StageAudit.objects.exists()


def answer_all(audit, reviewer, disagree_on=()):
    """Answer every item: agree, except on the decisions of `disagree_on`."""
    while (item := next_item(audit)) is not None:
        agrees = item.decision.candidate.question not in disagree_on
        do_answer(item, agrees=agrees, note="" if agrees else "wrong", user=reviewer)


def test_answers_measure_precision_and_recall_with_reject_positive(
    benchmark, ledger, personas
):
    audit = do_open_audit(benchmark, "quality", VERSION, size=10, seed=1)
    reviewer = personas["reviewer"]
    # People disagree with one reject (question 0: keep it) and two passes
    # (questions 4 and 5: reject them).
    answer_all(audit, reviewer, disagree_on={"question 0", "question 4", "question 5"})
    assert audit_progress(audit).left == 0
    measured = audit_measure(audit)
    # TP 3 (rejects 1–3), FP 1 (reject 0), FN 2 (passes 4, 5), TN 4.
    assert (measured.true_reject, measured.false_reject) == (3, 1)
    assert (measured.missed_reject, measured.true_keep) == (2, 4)
    assert (measured.precision.successes, measured.precision.n) == (3, 4)
    assert (measured.recall.successes, measured.recall.n) == (3, 5)
    assert (measured.agreement.successes, measured.agreement.n) == (7, 10)
    assert measured.precision.low == pytest.approx(0.3006, abs=1e-4)
    assert measured.precision.high == pytest.approx(0.9544, abs=1e-4)


def next_item(audit):
    return unanswered(audit).first()


def test_answers_are_append_only_and_the_latest_counts(benchmark, ledger, personas):
    audit = do_open_audit(benchmark, "quality", VERSION, size=1, seed=0)
    item = audit.items.get()
    reviewer = personas["reviewer"]
    first = do_answer(item, agrees=False, note="  not sure ", user=reviewer)
    assert first.note == "not sure"
    do_answer(item, agrees=True, user=reviewer)
    assert list(item.answers.values_list("agrees", flat=True)) == [False, True]
    assert audit_measure(audit).agreement.successes == 1
    # A second reviewer disagreeing makes a tie: no verdict on the item.
    do_answer(item, agrees=False, user=personas["manager"])
    assert audit_measure(audit).answered == 0
    with pytest.raises(ValidationError):
        do_answer(item, agrees=True, note="x" * 2001, user=reviewer)
    assert AuditAnswer.objects.count() == 3


def test_the_reviewer_screen_shows_the_verdict_and_takes_answers(
    benchmark, ledger, personas, client_for
):
    audit = do_open_audit(benchmark, "quality", VERSION, size=3, seed=2)
    client = client_for("reviewer")
    url = reverse("construction:audit", args=[audit.pk])
    first = next_item(audit)
    assert "Taking your next task" in client.get(url).content.decode()  # no lease
    page = client.post(url, {"action": "next"})
    assert page.status_code == 200
    html = page.content.decode()
    assert first.decision.candidate.question in html
    assert first.decision.reason in html
    assert "插座额定电压 250 V" in html  # the source text
    assert 'data-key="a"' in html and 'data-key="d"' in html

    response = client.post(
        url,
        {"item": first.pk, "agrees": "0", "note": "too vague"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert 'id="task"' in response.content.decode()
    assert "<html" not in response.content.decode()  # the partial
    answer = AuditAnswer.objects.get()
    assert (answer.item, answer.agrees, answer.note) == (first, False, "too vague")
    assert answer.reviewer == personas["reviewer"]
    assert next_item(audit) != first

    refused = client.post(url, {"item": first.pk, "agrees": "maybe"})
    assert refused.status_code == 400
    assert AuditAnswer.objects.count() == 1

    listing = client.get(reverse("construction:audits"))
    assert f'data-audit="{audit.pk}"' in listing.content.decode()


def test_the_stage_page_shows_measures_and_says_reject_is_positive(
    benchmark, ledger, personas, client_for
):
    audit = do_open_audit(benchmark, "quality", VERSION, size=10, seed=1)
    answer_all(audit, personas["reviewer"], disagree_on={"question 0"})
    page = client_for("manager").get(
        reverse("construction:stage", args=[benchmark.slug, "quality"])
    )
    html = page.content.decode()
    assert page.status_code == 200
    assert "reject is the positive class" in html
    assert "Wilson" in html
    # Precision 3/4, recall 3/3, agreement 9/10.
    assert "<strong>0.75</strong>" in html and "n = 4" in html
    assert "<strong>1.00</strong>" in html and "n = 3" in html
    assert "<strong>0.90</strong>" in html and "n = 10" in html
    (shown,) = page.context["disagreements"]
    assert shown.item.decision.candidate.question == "question 0"
    assert shown.note == "wrong"


def test_a_manager_opens_an_audit_on_the_stage_page(benchmark, ledger, client_for):
    client = client_for("manager")
    url = reverse("construction:open_audit", args=[benchmark.slug, "quality"])
    response = client.post(url, {"prompt_version": VERSION, "size": 4, "seed": 9})
    assert response.status_code == 302
    audit = StageAudit.objects.get()
    assert (audit.sample_size, audit.seed, audit.items.count()) == (4, 9, 4)
    bad = client.post(url, {"prompt_version": "nope", "size": 4, "seed": 9})
    assert bad.status_code == 400
    assert StageAudit.objects.count() == 1


@pytest.mark.parametrize(
    ("persona", "stage_status", "audit_status"),
    [
        ("manager", 200, 200),
        ("reviewer", 403, 200),
        ("expert", 403, 403),
        ("adjudicator", 403, 403),
        ("outsider", 403, 403),
    ],
)
def test_who_may_open_the_pages(
    benchmark, ledger, client_for, persona, stage_status, audit_status
):
    audit = do_open_audit(benchmark, "quality", VERSION, size=2)
    client = client_for(persona)
    for name, args in [
        ("construction:stage", [benchmark.slug, "quality"]),
        ("construction:compare", [benchmark.slug, "quality"]),
    ]:
        assert client.get(reverse(name, args=args)).status_code == stage_status
    for name, args in [("construction:audits", []), ("construction:audit", [audit.pk])]:
        assert client.get(reverse(name, args=args)).status_code == audit_status
    posted = client.post(
        reverse("construction:open_audit", args=[benchmark.slug, "quality"]),
        {"prompt_version": VERSION, "size": 2, "seed": 0},
    )
    assert posted.status_code == (302 if persona == "manager" else 403)


def test_an_unknown_stage_is_not_found(benchmark, client_for):
    client = client_for("manager")
    for stage in ("generation", "release", "nonsense"):
        url = reverse("construction:stage", args=[benchmark.slug, stage])
        assert client.get(url).status_code == 404


def test_the_command_opens_an_audit_and_shows_its_measures(benchmark, ledger, personas):
    out = StringIO()
    call_command(
        "open_audit",
        "quality",
        benchmark=benchmark.slug,
        prompt_version=VERSION,
        size=10,
        seed=1,
        stdout=out,
    )
    audit = StageAudit.objects.get()
    assert f"Opened {audit} with 10 of 10 decisions." in out.getvalue()
    answer_all(audit, personas["reviewer"], disagree_on={"question 0"})
    out = StringIO()
    call_command("open_audit", show=audit.pk, stdout=out)
    assert "precision: 0.750 [0.301, 0.954] n=4" in out.getvalue()
    with pytest.raises(CommandError, match="No decided quality check decision"):
        call_command(
            "open_audit", "quality", benchmark=benchmark.slug, prompt_version="x"
        )


def test_a_reviewer_goes_back_and_answers_again(
    benchmark, ledger, personas, client_for
):
    audit = do_open_audit(benchmark, "quality", VERSION, size=3, seed=2)
    client = client_for("reviewer")
    url = reverse("construction:audit", args=[audit.pk])
    first = next_item(audit)
    client.post(url, {"item": first.pk, "agrees": "1"})
    second = next_item(audit)
    client.post(url, {"item": second.pk, "agrees": "0", "note": "vague"})
    page = client.get(url)
    assert page.context["previous_item_id"] == second.pk
    again = client.get(url, {"item": second.pk})
    assert again.context["item"] == second
    assert again.context["mine"].note == "vague"
    assert again.context["previous_item_id"] == first.pk
    assert "Your earlier answer" in again.content.decode()
    client.post(url, {"item": second.pk, "agrees": "1"})
    assert list(second.answers.values_list("agrees", flat=True)) == [False, True]
    # An item the reviewer has not answered is not shown out of turn.
    third = next_item(audit)
    assert client.get(url, {"item": third.pk}).context["mine"] is None
    other = client_for("manager").get(url, {"item": second.pk})
    assert other.context["item"] is None  # not answered by the manager


def test_the_audit_list_costs_the_same_queries_for_more_audits(
    benchmark, ledger, client_for
):
    client = client_for("reviewer")
    url = reverse("construction:audits")
    do_open_audit(benchmark, "quality", VERSION, size=3)
    with CaptureQueriesContext(connection) as one:
        client.get(url)
    for seed in range(4):
        do_open_audit(benchmark, "quality", VERSION, size=3, seed=seed)
    with CaptureQueriesContext(connection) as five:
        assert client.get(url).content.decode().count("data-audit=") == 5
    assert len(five) == len(one)


def test_the_same_answer_sent_twice_is_stored_once(benchmark, ledger, personas):
    audit = do_open_audit(benchmark, "quality", VERSION, size=1, seed=0)
    item = audit.items.get()
    reviewer = personas["reviewer"]
    first = do_answer(item, agrees=False, note="vague", user=reviewer)
    assert do_answer(item, agrees=False, note="vague", user=reviewer) == first
    # Answering again from the history (the answer shown named) adds a row.
    again = do_answer(
        item, agrees=False, note="vague", user=reviewer, corrects=first.pk
    )
    assert again != first and item.answers.count() == 2
