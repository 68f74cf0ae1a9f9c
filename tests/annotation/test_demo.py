import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Campaign, GradingLabel
from annotation.screens import campaigns_for
from tests.annotation.factories import take_next_task

pytestmark = pytest.mark.django_db
PEOPLE = ("expert", "adjudicator", "reviewer")


def test_demo_has_work_on_every_screen(client):
    call_command("load_demo", "--allow-without-debug", stdout=open("/dev/null", "w"))
    call_command("load_demo", "--allow-without-debug", stdout=open("/dev/null", "w"))
    people = get_user_model().objects.filter(username__in=PEOPLE)
    campaigns = {c.kind: c for person in people for c in campaigns_for(person)}
    assert set(campaigns) == {"grading", "adjudication", "translation_review"}
    assert Campaign.objects.count() == 4  # and the simulated calibration sample
    assert campaigns["grading"].tasks.count() == 60
    assert not GradingLabel.objects.filter(task__campaign=campaigns["grading"]).exists()
    for kind, username, screen in [
        ("grading", "expert", "grade"),
        ("adjudication", "adjudicator", "adjudicate"),
        ("translation_review", "reviewer", "review"),
    ]:
        client.post(reverse("login"), {"username": username, "password": "assay-demo"})
        page = take_next_task(
            client, reverse(f"annotation:{screen}", args=[campaigns[kind].pk])
        )
        assert page.status_code == 200
        assert 'data-task=""' not in page.content.decode(), kind
