import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Campaign, GradingLabel

pytestmark = pytest.mark.django_db


def test_demo_has_work_on_every_screen(client):
    call_command("load_demo", stdout=open("/dev/null", "w"))
    call_command("load_demo", stdout=open("/dev/null", "w"))
    campaigns = {c.kind: c for c in Campaign.objects.all()}
    assert set(campaigns) == {"grading", "adjudication", "translation_review"}
    assert Campaign.objects.count() == 3
    grading = campaigns["grading"]
    assert grading.tasks.count() == 60
    # Two simulated experts graded everything; the demo expert has the third grade.
    assert GradingLabel.objects.filter(task__campaign=grading).count() == 120
    for kind, username, screen in [
        ("grading", "expert", "grade"),
        ("adjudication", "adjudicator", "adjudicate"),
        ("translation_review", "reviewer", "review"),
    ]:
        client.login(username=username, password="assay-demo")
        page = client.get(reverse(f"annotation:{screen}", args=[campaigns[kind].pk]))
        assert page.status_code == 200
        assert 'data-task=""' not in page.content.decode(), kind
