"""A search service that never answers in full does not hold a worker: search
verification on a real worker, one of whose queries the SearxNG-protocol test
server answers one byte a second, for ever, or with 1 GiB. Each try is bounded whole
by SEARCH_TIMEOUT_SECONDS (3 s here) and its body by SEARCH_MAX_BODY_BYTES
(assay/outbound.py): the stage run ends *Needs attention* with that candidate
pending and why, the other passes, and no transaction is left open.

The polling limit is a liveness bound (worker start-up, 2 tries of 3 s, the clean
calls, a loaded machine), not a timing assertion: before, a trickling service
held the stage *Running* for minutes per query.
"""

import json
import re

import pytest

from construction.actions import do_save_search_service
from construction.models import StageRun
from judging.llm.actions import do_save_endpoint
from judging.llm.prompts import default_template
from tests.construction.factories import make_candidate, make_source
from tests.construction.stage_fixtures import run_stage
from tests.openai_stub import OpenAIStub, first_user_text
from tests.search_stub import SearchReply, SearchStub
from tests.worker_checks import open_transactions

PASSED = [("dedup", "pass", ""), ("quality", "pass", "")]
SEARCH_ENV = {
    "SEARCH_TIMEOUT_SECONDS": "3",
    "SEARCH_MAX_ATTEMPTS": "2",
    "SEARCH_BACKOFF_BASE_MS": "10",
    "SEARCH_MAX_BODY_BYTES": "100000",
}


def respond(body):
    prompt = first_user_text(body)
    if prompt.startswith("Propose exactly three"):
        question = re.search(r"^Question: (.*)$", prompt, re.MULTILINE).group(1)
        queries = [f"{question} q{n}" for n in (1, 2, 3)]
        return json.dumps({"queries": queries}, ensure_ascii=False)
    if prompt.startswith("Decide whether"):
        return json.dumps({"verdict": "pass", "supporting": [1], "reason": "[1]."})
    return "OK"


def hits(query):
    return [(f"https://gb.example/{n}", f"GB/T 2099.1 p{n}", "250 V") for n in (1, 2)]


@pytest.mark.worker
@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("trickle", "Timed out after 3 s"),
        ("endless", "Timed out after 3 s"),
        ("huge", "SEARCH_MAX_BODY_BYTES"),
    ],
)
def test_a_trickling_search_service_ends_the_stage(
    fault, reason, killable_worker, benchmark, monkeypatch
):
    monkeypatch.setenv("STUB_API_KEY", "k")
    source = make_source(benchmark, text="插座额定电压不应超过 250 V。")
    slow = make_candidate(source, "慢的问题？", PASSED)
    fine = make_candidate(source, "快的问题？", PASSED)
    with OpenAIStub(responder=respond) as llm, SearchStub(responder=hits) as search:
        search.script("慢的问题？ q2", SearchReply(results=hits(""), fault=fault))
        endpoint = do_save_endpoint(
            "writer", base_url=llm.base_url, model="m", api_key_env="STUB_API_KEY"
        )
        service = do_save_search_service(
            "searx", adapter="searxng", base_url=search.base_url
        )
        killable_worker.env.update(SEARCH_ENV)
        killable_worker.start()
        run = run_stage(
            benchmark,
            "search",
            endpoint=endpoint,
            template=default_template("search_queries"),
            verifier_template=default_template("search_verification"),
            search_service=service,
        )
        assert open_transactions() == []
    assert run.status == StageRun.Status.ATTENTION
    pending = slow.decisions.get(stage="search")
    assert pending.outcome == "pending"
    assert "慢的问题？ q2" in pending.reason and reason in pending.reason
    assert fine.decisions.get(stage="search").outcome == "pass"
