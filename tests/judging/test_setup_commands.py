"""The commands that save a provider by name (`add_endpoint`,
`add_search_service`): run again, the command line is the whole definition, and
the command says which saved settings that changed, so that an option left out
(and put back to its default) is never changed silently."""

import io

from django.core.management import call_command

from construction.search.models import SearchService
from judging.llm.models import Endpoint

ENDPOINT = [
    "add_endpoint",
    "judge",
    "--base-url",
    "http://127.0.0.1:9/v1",
    "--model",
    "qwen-max",
    "--api-key-env",
    "JUDGE_API_KEY",
]


def run(*args) -> list[str]:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().splitlines()


def test_a_new_endpoint_is_saved_without_a_list_of_changes(db):
    assert run(*ENDPOINT, "--max-concurrency", "32") == [
        "Endpoint judge (qwen-max) saved."
    ]


def test_a_rerun_names_every_setting_it_puts_back(db):
    run(*ENDPOINT, "--max-concurrency", "32", "--rpm", "600", "--stream")
    lines = run(*ENDPOINT, "--price-input", "0.002")
    assert lines == [
        "Endpoint judge (qwen-max) saved.",
        "Changed from what was saved:",
        "  max_concurrency: 32 → 8",
        "  rpm_limit: 600 → —",
        "  stream: True → False",
        "  price_input_per_1k: — → 0.002",
    ]
    endpoint = Endpoint.objects.get(name="judge")
    assert (endpoint.max_concurrency, endpoint.rpm_limit, endpoint.stream) == (
        8,
        None,
        False,
    )


def test_a_rerun_that_changes_nothing_says_so(db):
    run(*ENDPOINT, "--param", "temperature=0", "--thinking-on", '{"x": true}')
    again = run(*ENDPOINT, "--param", "temperature=0", "--thinking-on", '{"x": true}')
    assert again == ["Endpoint judge (qwen-max) saved.", "Nothing changed."]


def test_a_search_service_rerun_names_what_it_changed(db, settings):
    settings.SEARCH_SERVICE_HOSTS = ["127.0.0.1"]
    service = [
        "add_search_service",
        "web",
        "--base-url",
        "http://127.0.0.1:9",
        "--max-concurrency",
        "4",
    ]
    run(*service, "--inactive")
    lines = run(*service[:4])
    assert lines[1:] == ["Changed from what was saved:", "  is_active: False → True"]
    assert SearchService.objects.get(name="web").max_concurrency == 4
