"""Sources, a stub that answers generation and quality prompts with a planned
funnel, and a helper that runs a stage and waits for it.

The plan, with two questions per source:
- SRC-1 (standard) gives two candidates;
- SRC-2 (product record) gives two: one repeats SRC-1's first question with other
  punctuation (dedup rejects it), the other is vague (quality rejects it);
- SRC-3 (standard) never replies with usable JSON: its generation stays pending.
So generation 3 sources → 4 candidates (1 source pending), dedup 4 → 3,
quality 3 → 2.
"""

import json
import re

from construction import pipeline
from construction.actions import do_import_sources, do_start_stage
from construction.models import StageRun
from judging.llm.actions import do_save_endpoint
from judging.runs import lifecycle
from tests.judging.labelling_fixtures import wait_until
from tests.openai_stub import first_user_text

SOURCES = [
    {
        "kind": "gbt_standard",
        "reference": "GB/T 2099.1-2021 5.2",
        "text": "SRC-1 插座的额定电压不应超过 250 V，额定电流不应超过 16 A。",
        "fields": {"label": "electrical"},
    },
    {
        "kind": "product_record",
        "reference": "fasteners R-17",
        "text": "SRC-2 不锈钢螺栓 M8×40，材质 A2-70。",
        "fields": {"label": "machinery"},
    },
    {
        "kind": "gbt_standard",
        "reference": "GB/T 1-2020 3.1",
        "text": "SRC-3 标准的结构和起草规则。",
    },
]
GENERATED = {
    "SRC-1": [
        ("按 GB/T 2099.1，插座的额定电压最高是多少伏？", "250 V"),
        ("按 GB/T 2099.1，插座的额定电流最高是多少安？", "16 A"),
    ],
    "SRC-2": [
        ("按 GB/T 2099.1 插座的额定电压最高是多少伏?", "250 V"),
        ("这种螺栓怎么样（模糊）？", "A2-70"),
    ],
}


def respond(body):
    prompt = first_user_text(body)
    if prompt.startswith("Write"):
        source = re.search(r"SRC-\d", prompt).group(0)
        if source not in GENERATED:
            return "Sorry, I cannot help with that."
        items = [{"question": q, "answer": a} for q, a in GENERATED[source]]
        return json.dumps({"items": items}, ensure_ascii=False)
    if prompt.startswith("Check the candidate"):
        vague = "模糊" in prompt
        return json.dumps(
            {
                "verdict": "reject" if vague else "pass",
                "reason": "Not enough constraints." if vague else "All four hold.",
            }
        )
    return "OK"


def import_sources(benchmark):
    data = "\n".join(json.dumps(s, ensure_ascii=False) for s in SOURCES)
    return do_import_sources(benchmark, data.encode(), "sources.jsonl")


def stub_endpoint(stub):
    """The writer: it declares its thinking switch (a request field), as deep
    verification asks in thinking mode."""
    return do_save_endpoint(
        "stub-writer",
        base_url=stub.base_url,
        model="writer-model",
        api_key_env="STUB_API_KEY",
        max_concurrency=4,
        thinking_switch="parameter",
        thinking_on={"enable_thinking": True},
        thinking_off={"enable_thinking": False},
    )


def run_stage(benchmark, stage, **options) -> StageRun:
    """Start a stage run and wait (on a worker) until it ends."""
    run = do_start_stage(benchmark, stage, **options)

    def ended():
        run.refresh_from_db()
        return not run.is_active

    wait_until(ended, 60, f"the {stage} run did not end")
    return run


def run_here(benchmark, stage, **options) -> StageRun:
    """Start a stage run and do its work in this process (the gateway talks to
    the stub from here): for tests that need no worker."""
    run = do_start_stage(benchmark, stage, **options)
    lifecycle.start(pipeline.STAGES, run.pk)
    run.refresh_from_db()
    for run_id, units in pipeline.open_chunks(run):
        pipeline.stage_chunk(run_id, units)
    lifecycle.finish(pipeline.STAGES, run.pk)
    run.refresh_from_db()
    return run
