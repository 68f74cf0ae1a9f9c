"""Before *Start*, the form says how many items and calls the run will make and what
it will roughly cost; with no endpoints it says how to add one (#18)."""

from decimal import Decimal

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from benchmark.models import Rendering
from judging.evaluation.preview import run_preview
from judging.llm.models import Endpoint, LLMCall
from tests.judging.factories import make_items

pytestmark = pytest.mark.django_db


def endpoint(name: str, price_in=None, price_out=None) -> Endpoint:
    return Endpoint.objects.create(
        name=name,
        base_url="https://llm.example.com/v1",
        model=f"{name}-model",
        api_key_env="STUB_API_KEY",
        price_input_per_1k=price_in,
        price_output_per_1k=price_out,
    )


def past_calls(endpoint: Endpoint, purpose: str, *tokens: tuple[int, int]):
    for index, (input_tokens, output_tokens) in enumerate(tokens):
        LLMCall.objects.create(
            endpoint=endpoint,
            purpose=purpose,
            scope=purpose,
            request_hash=f"{endpoint.name}-{purpose}-{index}",
            model=endpoint.model,
            status=LLMCall.Status.OK,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
        )


@pytest.fixture
def priced_endpoints():
    tested = endpoint("tested", Decimal("1.0"), Decimal("2.0"))
    judge = endpoint("judge", Decimal("0.5"), Decimal("1.0"))
    sv = endpoint("sv")
    past_calls(tested, "answering", (800, 400), (1200, 600))  # 1,000 / 500
    past_calls(judge, "rubric_judging", (2000, 100))
    past_calls(sv, "safety_check", (1000, 0))
    past_calls(tested, "rubric_judging", (99_999, 99_999))  # another purpose
    return tested, judge, sv


def test_the_preview_prices_each_stage_from_its_endpoints_past_calls(
    benchmark, priced_endpoints
):
    tested, judge, sv = priced_endpoints
    for item in make_items(benchmark, 8, languages=("zh",))[:2]:
        Rendering.objects.create(
            item=item, language="en", question="Q?", answer="A.", origin="machine"
        )
    preview = run_preview(
        benchmark,
        language="en",
        item_filter={"external_ids": [], "difficulty": "", "labels": [], "limit": None},
        endpoints={"tested": tested, "judge": judge, "sv_judge": sv},
    )
    assert (preview.items, preview.calls, preview.without_rendering) == (2, 6, 6)
    answer, rubric, safety = preview.stages
    assert (answer.input_tokens, answer.output_tokens, answer.history) == (
        1000,
        500,
        2,
    )
    assert answer.cost == Decimal("4.00")  # 2 × (1,000 × 1.0 + 500 × 2.0) / 1,000
    assert rubric.cost == Decimal("2.20")  # 2 × (2,000 × 0.5 + 100 × 1.0) / 1,000
    assert safety.cost is None and safety.why_unknown == "the endpoint has no prices"
    assert preview.cost is None


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_manager_sees_calls_and_cost_change_with_the_form(
    page, login, benchmark, priced_endpoints
):
    make_items(benchmark, 10)
    Endpoint.objects.filter(name="sv").update(
        price_input_per_1k=Decimal("0.1"), price_output_per_1k=Decimal("0.1")
    )
    login("manager")
    page.goto(reverse("judging:start_evaluation", args=[benchmark.slug]))
    expect(page.get_by_test_id("preview-items")).to_have_text("10")
    expect(page.get_by_test_id("preview-calls")).to_have_text("30")
    expect(page.get_by_test_id("preview-cost")).to_have_text("unknown")
    page.get_by_label("Tested model").select_option(label="tested")
    page.get_by_label("Rubric judge").select_option(label="judge")
    page.get_by_label("Safety-violation judge").select_option(label="sv")
    # 10 × (2.00 + 1.10 + 0.10)
    expect(page.get_by_test_id("preview-cost")).to_have_text("32.00")
    page.get_by_label("At most N items").fill("4")
    expect(page.get_by_test_id("preview-items")).to_have_text("4")
    expect(page.get_by_test_id("preview-calls")).to_have_text("12")
    expect(page.get_by_test_id("preview-cost")).to_have_text("12.80")
    page.screenshot(path="/tmp/start-run-preview.png", full_page=True)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_what_is_typed_before_the_page_scripts_run_reaches_the_preview(
    page, login, benchmark, priced_endpoints
):
    """On a slow connection a manager may change the form before htmx has
    bound its triggers: the preview asks for the form as htmx finds it."""
    make_items(benchmark, 10)
    login("manager")
    # The page's own request for htmx fails; the same file comes later.
    page.route("**/static/htmx.min.js", lambda route: route.abort())
    page.goto(reverse("judging:start_evaluation", args=[benchmark.slug]))
    page.get_by_label("Tested model").select_option(label="tested")
    page.get_by_label("At most N items").fill("4")
    expect(page.get_by_test_id("preview-calls")).to_have_text("30")
    page.add_script_tag(url="/static/htmx.min.js?late")
    expect(page.get_by_test_id("preview-items")).to_have_text("4")
    expect(page.get_by_test_id("preview-calls")).to_have_text("12")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_with_no_endpoints_the_form_says_how_to_add_one(page, login, benchmark):
    make_items(benchmark, 3)
    login("manager")
    page.goto(reverse("judging:start_evaluation", args=[benchmark.slug]))
    notice = page.get_by_test_id("no-endpoints")
    expect(notice).to_contain_text("No endpoints yet")
    expect(page.get_by_role("button", name="Start run")).to_be_disabled()
    notice.get_by_role("link", name="Endpoints").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("LLM endpoints")
