"""Live run pages reach their end without a reload (#26): a run page polls while
the run works and while work that follows its end is under way (a labelling run's
consensus); once it has settled, the page refreshes itself once, so its status,
buttons, links and final numbers all show the end — and then stops polling."""

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import expect

from judging.evaluation.models import EvaluationRun
from judging.labelling.models import LabellingRun
from judging.robustness.models import VariantRun
from judging.runs.models import RunStatus
from judging.translation.models import TranslationRun

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAGES = [
    (EvaluationRun, "judging:evaluation_run"),
    (TranslationRun, "judging:translation_run"),
    (VariantRun, "judging:variant_run"),
]


def open_running(page, model, url_name, **extra):
    run = model.objects.order_by("pk").first()
    model.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING, finished_at=None, **extra
    )
    page.goto(reverse(url_name, args=[run.pk]))
    expect(page.get_by_role("button", name="Cancel run")).to_be_visible()
    return run


def end(model, run, **extra):
    """What the lifecycle writes when a worker ends the run."""
    model.objects.filter(pk=run.pk).update(
        status=RunStatus.COMPLETE, finished_at=timezone.now(), **extra
    )


def test_run_pages_show_the_end_without_a_reload(personas, login):
    call_command("load_demo", allow_without_debug=True, verbosity=0)
    page = login("manager")
    for model, url_name in PAGES:
        run = open_running(page, model, url_name)
        end(model, run)
        # The Cancel button sits outside the polled fragment: only the page's own
        # refresh takes it away.
        expect(page.get_by_role("button", name="Cancel run")).to_have_count(0)
        expect(page.locator("[hx-trigger]")).to_have_count(0)

    run = open_running(page, LabellingRun, "judging:labelling_run", consensus_at=None)
    end(LabellingRun, run)
    expect(page.get_by_text("computing consensus")).to_be_visible()
    expect(page.get_by_role("link", name="Consensus report")).to_have_count(0)
    LabellingRun.objects.filter(pk=run.pk).update(consensus_at=timezone.now())
    expect(page.get_by_role("link", name="Consensus report")).to_be_visible()
    expect(page.get_by_role("button", name="Cancel run")).to_have_count(0)
    expect(page.get_by_text("computing consensus")).to_have_count(0)
    page.screenshot(path="/tmp/live_labelling_run_settled.png", full_page=True)
