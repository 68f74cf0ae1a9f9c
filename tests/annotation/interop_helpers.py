"""The campaign the real tools' files (tests/fixtures/interop/) are imported into,
and reading those files with the campaign's response ids."""

from pathlib import Path

from annotation.actions import do_create_campaign
from annotation.models import Campaign, GradingLabel
from tests.annotation.factories import make_items, make_run

FIXTURES = Path(__file__).parents[1] / "fixtures" / "interop"
# The response ids the fixtures were made with (make_label_studio_fixture.py).
FIXTURE_RESPONSES = (910001, 910002, 910003)


def campaign_for_fixtures(benchmark, personas) -> Campaign:
    """A score + safety grading campaign of three responses, its graders known to
    Label Studio by the fixture's e-mail addresses."""
    personas["expert"].email = "annotator.a@lab.example"
    personas["reviewer"].email = "annotator.b@lab.example"
    for user in (personas["expert"], personas["reviewer"]):
        user.save(update_fields=["email"])
    items = make_items(benchmark, 3)
    _run, responses = make_run(benchmark, items)
    return do_create_campaign(
        benchmark,
        name="from another tool",
        kind=Campaign.Kind.GRADING,
        tasks=[{"response_id": r.pk, "item_id": r.item_id} for r in responses],
        ask_safety=True,
    )


def fixture(campaign, name: str) -> bytes:
    """The fixture file with its response ids replaced by the campaign's, in
    order: the only change made to a tool's file."""
    data = (FIXTURES / name).read_bytes()
    ids = campaign.tasks.order_by("position").values_list("response_id", flat=True)
    for old, new in zip(FIXTURE_RESPONSES, ids, strict=True):
        data = data.replace(str(old).encode(), str(new).encode())
    return data


def latest(campaign) -> list[tuple]:
    return list(
        GradingLabel.objects.filter(task__campaign=campaign, is_latest=True)
        .order_by("task__position", "user__username")
        .values_list(
            "task__position",
            "user__username",
            "score",
            "safety_violation",
            "seconds_spent",
        )
    )


LABEL_STUDIO_GRADES = [
    (0, "expert", 3, False, 12.5),
    (0, "reviewer", 2, False, 30.0),
    (1, "expert", 0, True, 8.0),
    (1, "reviewer", 1, False, 14.0),
    (2, "expert", 0, False, 5.0),  # reviewer skipped task 3
]
