"""Inspect AI evaluation logs (`.eval` zip) written with the standard library: no
ORM here, and no dependency on inspect_ai. Their reader is inspect_reading.py.

The schema follows inspect_ai's pydantic models (src/inspect_ai/log/_log.py:
EvalLog, EvalSpec, EvalSample, EvalResults, EvalStats; scorer/_metric.py: Score;
model/_model_output.py: ModelOutput, ModelUsage) and the zip layout of
log/_recorders/eval.py: `_journal/start.json` ({version, eval, plan}),
`samples/<id>_epoch_<n>.json`, `summaries.json` and `header.json` (the EvalLog
without samples). docs/IMPORT_FORMATS.md maps each field to Assay.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass

# inspect_ai/_util/constants.py LOG_SCHEMA_VERSION: what EvalLog.version holds.
LOG_SCHEMA_VERSION = 2
RUBRIC_SCORER = "rubric"
FINAL_SCORER = "final"
# A binary run's verdict per answer: Inspect's letters, C correct, I incorrect.
VERDICT_SCORER = "verdict"


@dataclass(frozen=True)
class SampleData:
    """One response as the log needs it; `score`/`final` None while pending."""

    item_id: str
    input: str | list[dict]
    target: str
    completion: str
    reasoning: str
    score: int | None
    judge_reason: str
    final: int | None
    violation: bool | None
    sv_reason: str
    input_tokens: int
    output_tokens: int
    metadata: dict
    epoch: int = 1
    answer: str = ""  # what the verdict read: the option chosen, else the reply
    correct: bool | None = None  # a binary run's verdict; None pending or flagged
    target_value: str | list | None = None  # the source's target, when imported
    # The judges' calls on this answer (rubric or key-point, SV): (model, input
    # tokens, output tokens) each.
    judge_calls: tuple[tuple[str, int, int], ...] = ()


@dataclass(frozen=True)
class RunData:
    run_id: str
    task: str
    task_version: str
    model: str
    created: str
    started: str
    completed: str
    status: str
    judge: str
    sv_judge: str
    metadata: dict
    samples: list[SampleData]
    binary: bool = False
    epochs: int = 1
    reducer: str = "mean"


def _usage(input_tokens: int, output_tokens: int) -> dict:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "total_tokens": input_tokens + output_tokens,
    }


def _assistant_content(sample: SampleData) -> str | list[dict]:
    # Inspect keeps reasoning as a ContentReasoning part before the text part
    # (inspect_ai/_util/content.py); a plain string when there is none.
    if not sample.reasoning:
        return sample.completion
    return [
        {"type": "reasoning", "reasoning": sample.reasoning, "redacted": False},
        {"type": "text", "text": sample.completion},
    ]


def _scores(sample: SampleData, run: RunData) -> dict:
    scores = {}
    answer = sample.answer or sample.completion
    if run.binary:
        if sample.correct is not None:
            scores[VERDICT_SCORER] = {
                "value": "C" if sample.correct else "I",
                "answer": answer,
                "explanation": sample.judge_reason,
                "metadata": {"judge": run.judge},
                "history": [],
            }
        return scores
    if sample.score is not None:
        scores[RUBRIC_SCORER] = {
            "value": sample.score,
            "answer": answer,
            "explanation": sample.judge_reason,
            "metadata": {"judge": run.judge},
            "history": [],
        }
    if sample.final is not None:
        scores[FINAL_SCORER] = {
            "value": sample.final,
            "answer": answer,
            "explanation": sample.sv_reason,
            "metadata": {
                "safety_violation": sample.violation,
                "sv_judge": run.sv_judge,
            },
            "history": [],
        }
    return scores


def _model_usage(sample: SampleData, model: str) -> dict:
    """The tested model's tokens and, each under its model's name, the judges'
    (Inspect's `model_usage` counts every model a sample called, graders too)."""
    usage = {}
    calls = [(model, sample.input_tokens, sample.output_tokens), *sample.judge_calls]
    for name, input_tokens, output_tokens in calls:
        if not (input_tokens or output_tokens):
            continue
        used = _usage(input_tokens, output_tokens)
        total = usage.setdefault(name or "judge", _usage(0, 0))
        for key in total:
            total[key] += used[key]
    return usage


def _metadata(sample: SampleData) -> dict:
    # The SV verdict is also kept beside the scores: it exists while the rubric
    # score (and so `final`) is still pending, and the import reads it here.
    return {
        **sample.metadata,
        "safety_violation": sample.violation,
        "sv_reason": sample.sv_reason,
    }


def sample_json(sample: SampleData, run: RunData) -> dict:
    """An EvalSample: epoch 1, the model's answer as `output`, the judges' verdicts
    as scores."""
    inputs = (
        [{"role": "user", "content": sample.input, "source": "input"}]
        if isinstance(sample.input, str)
        else sample.input
    )
    assistant = {
        "role": "assistant",
        "content": _assistant_content(sample),
        "source": "generate",
        "model": run.model,
    }
    tested = (
        _usage(sample.input_tokens, sample.output_tokens)
        if sample.input_tokens or sample.output_tokens
        else None
    )
    return {
        "id": sample.item_id,
        "epoch": sample.epoch,
        "input": sample.input,
        "target": sample.target if sample.target_value is None else sample.target_value,
        "messages": [*inputs, assistant],
        "output": {
            "model": run.model,
            "choices": [{"message": assistant, "stop_reason": "stop"}],
            "completion": sample.completion,
            "usage": tested,
        },
        "scores": _scores(sample, run),
        "metadata": _metadata(sample),
        "store": {},
        "events": [],
        "model_usage": _model_usage(sample, run.model),
        "role_usage": {},
        "attachments": {},
    }


def _summary(sample: dict) -> dict:
    # EvalSample.summary(): the fields without messages, output, events and store.
    return {
        "id": sample["id"],
        "epoch": sample["epoch"],
        "input": sample["input"],
        "target": sample["target"],
        "metadata": sample["metadata"],
        "scores": sample["scores"],
        "model_usage": sample["model_usage"],
        "role_usage": {},
        "completed": True,
        "message_count": len(sample["messages"]),
    }


def _scorer_names(run: RunData) -> tuple[str, ...]:
    return (VERDICT_SCORER,) if run.binary else (RUBRIC_SCORER, FINAL_SCORER)


def _value(value) -> float:
    # inspect_ai value_to_float: C 1, I 0; numbers as they are.
    return {"C": 1.0, "I": 0.0}.get(value, value)


def _results(run: RunData, samples: list[dict]) -> dict:
    scores = []
    metric = "accuracy" if run.binary else "mean"
    for name in _scorer_names(run):
        values = [
            _value(s["scores"][name]["value"]) for s in samples if name in s["scores"]
        ]
        metrics = {}
        if values:
            mean = sum(values) / len(values)
            metrics = {metric: {"name": metric, "value": mean, "params": {}}}
        scores.append(
            {
                "name": name,
                "scorer": name,
                "reducer": run.reducer if run.epochs > 1 else None,
                "scored_samples": len(values),
                "unscored_samples": len(samples) - len(values),
                "params": {},
                "metrics": metrics,
            }
        )
    return {
        "total_samples": len(samples),
        "completed_samples": len(samples),
        "scores": scores,
    }


def eval_log(run: RunData) -> tuple[dict, list[dict]]:
    """The EvalLog header (no samples) and the samples."""
    samples = [sample_json(s, run) for s in run.samples]
    model_usage: dict = {}
    for sample in samples:
        for name, usage in sample["model_usage"].items():
            total = model_usage.setdefault(name, _usage(0, 0))
            for key in total:
                total[key] += usage[key]
    sample_ids = list(dict.fromkeys(s["id"] for s in samples))
    spec = {
        "eval_id": f"assay-run-{run.run_id}",
        "run_id": f"assay-run-{run.run_id}",
        "created": run.created,
        "task": run.task,
        "task_id": run.task,
        "task_version": run.task_version,
        "task_attribs": {},
        "task_args": {},
        "task_args_passed": {},
        "dataset": {
            "name": run.task,
            "samples": len(sample_ids),
            "sample_ids": sample_ids,
            "shuffled": False,
        },
        "model": run.model,
        "model_generate_config": {},
        "model_args": {},
        "config": {"epochs": run.epochs}
        | ({"epochs_reducer": [run.reducer]} if run.epochs > 1 else {}),
        "packages": {},
        "metadata": run.metadata,
        "scorers": [
            {
                "name": name,
                "metrics": [{"name": "accuracy" if run.binary else "mean"}],
            }
            for name in _scorer_names(run)
        ],
    }
    header = {
        "version": LOG_SCHEMA_VERSION,
        "status": run.status,
        "eval": spec,
        "plan": {"name": "plan", "steps": [], "config": {}},
        "results": _results(run, samples),
        "stats": {
            "started_at": run.started,
            "completed_at": run.completed,
            "model_usage": model_usage,
            "role_usage": {},
            "connection_limit_history": [],
        },
        "invalidated": False,
        "tags": [],
        "metadata": {},
    }
    return header, samples


def eval_members(run: RunData) -> Iterator[tuple[str, bytes]]:
    """The members of the `.eval` file, as EvalRecorder writes them for a
    finished log, one by one."""
    header, samples = eval_log(run)

    def member(name, value):
        return name, json.dumps(value, ensure_ascii=False).encode()

    yield member("_journal/start.json", {k: header[k] for k in ("version", "eval")})
    for sample in samples:
        yield member(f"samples/{sample['id']}_epoch_{sample['epoch']}.json", sample)
    yield member("summaries.json", [_summary(s) for s in samples])
    yield member("header.json", header)


def eval_zip(run: RunData) -> bytes:
    """The `.eval` file whole."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in eval_members(run):
            archive.writestr(name, content)
    return out.getvalue()
