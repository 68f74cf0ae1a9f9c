"""lm-evaluation-harness `samples_<task>_<date>.jsonl` read as evaluate.py records
(judging.evaluation.importing), with the standard library.

The harness writes one line per document and filter (lm_eval/evaluator.py, the
`example` dict: doc_id, doc, target, arguments, resps, filtered_resps, filter,
metrics, doc_hash, prompt_hash, target_hash, then one key per metric), sanitized
by lm_eval/loggers/evaluation_tracker.py `save_results_samples` (resps and
filtered_resps as nested lists of strings, arguments as
`{"gen_args_i": {"arg_j": …}}`, target as a string).

A generate_until task's response is its filtered text. A multiple_choice task
(loglikelihood of each option; MMLU, ARC, HellaSwag) has no text: its response is
the option the metric picked — the highest log-likelihood for `acc`, the highest
per character of the option for `acc_norm` (lm_eval/api/task.py
process_results) — and that option's letter is recorded as the answer read.

The samples file does not name the model; the run's `results_<date>.json`, when
given, does (`model_name`). There is no default scale: `score_map` says what the
metric's values mean (score_maps.py). Problems are Notes (benchmark.notes), shown
in the reader's language on the import page.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from django.utils.translation import gettext_noop

from benchmark.formats import LETTERS
from benchmark.notes import Note
from benchmark.validation import JsonNumber, Problems, json_objects, not_utf8
from judging.interop import score_maps

MULTIPLE_CHOICE_METRICS = ("acc", "acc_norm")
SAMPLES_NAME = re.compile(
    r"samples_(?P<task>.+?)(?:_\d{4}-\d{2}-\d{2}T[\d.:-]+)?\.jsonl$"
)


def read_lines(data: bytes, problems: Problems) -> list[tuple[int, dict]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        problems.add(0, "", not_utf8(error))
        return []
    return list(json_objects(text.splitlines(), problems))


def metric_values(lines: list[tuple[int, dict]]) -> dict[str, list]:
    """Each per-sample metric (named by the line's `metrics` list) → its values."""
    values: dict[str, list] = {}
    for _, sample in lines:
        for name in sample.get("metrics") or []:
            if isinstance(name, str) and name in sample:
                values.setdefault(name, []).append(_plain(sample[name]))
    return values


def results_model(results: bytes) -> tuple[str, dict]:
    """(model name, what the run keeps) from a `results_<date>.json`."""
    try:
        data = json.loads(results.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return "", {}
    if not isinstance(data, dict):
        return "", {}
    config = data.get("config") if isinstance(data.get("config"), dict) else {}
    model_args = config.get("model_args")
    pretrained = model_args.get("pretrained") if isinstance(model_args, dict) else ""
    name = str(pretrained or data.get("model_name") or config.get("model") or "")
    kept = {
        "model_name": data.get("model_name"),
        "model": config.get("model"),
        "model_args": model_args,
        "lm_eval_version": data.get("lm_eval_version"),
        "date": data.get("date"),
    }
    return name, kept


@dataclass
class LmEvalReader:
    """`metric` is the per-sample metric read, mapped by `score_map`; `id_field`
    names the key of `doc` holding the item id (`doc_id` is the harness's
    position in the dataset, not an id Assay knows). Files of several filters need
    `filter_name`. `results` is the run's results JSON, read for the model name.
    The harness has no safety check: see InspectReader.assume_no_violation."""

    metric: str
    score_map: score_maps.ScoreMap
    id_field: str = "id"
    filter_name: str = ""
    binary: bool = False
    assume_no_violation: bool = False
    results: bytes = b""
    model: str = ""
    language: str = ""
    run_metadata: dict = field(default_factory=dict)

    def __call__(self, data: bytes, filename: str, problems: Problems):
        lines = read_lines(data, problems)
        filters = sorted({str(r["filter"]) for _, r in lines if "filter" in r})
        chosen = self.filter_name
        if not chosen and len(filters) > 1:
            problems.add(
                0,
                "filter",
                Note(
                    gettext_noop(
                        "the file holds several filters (%(filters)s); choose one."
                    ),
                    filters=", ".join(filters),
                ),
            )
            return []
        if chosen and chosen not in filters:
            problems.add(
                0,
                "filter",
                Note(
                    gettext_noop("no line has filter %(filter)s."), filter=repr(chosen)
                ),
            )
            return []
        top = score_maps.BINARY_TOP if self.binary else score_maps.RUBRIC_TOP
        if self.score_map.top != top:
            problems.add(0, "scale", score_maps.wrong_scale(self.score_map.top))
            return []
        self.model, from_results = (
            results_model(self.results)
            if self.results
            else (
                "",
                {},
            )
        )
        task = SAMPLES_NAME.search(filename)
        self.run_metadata = {
            "format": "lm-eval",
            "task": task["task"] if task else "",
            "metric": self.metric,
            "filter": chosen or (filters[0] if filters else ""),
            "score_map": {
                "values": self.score_map.values,
                "full": self.score_map.full,
                "top": self.score_map.top,
            },
            "results": from_results,
        }
        records = []
        for line, sample in lines:
            if chosen and str(sample.get("filter", chosen)) != chosen:
                continue
            record = self._record(line, sample, problems)
            if record is not None:
                records.append((line, record))
        return records

    def _record(self, line: int, sample: dict, problems: Problems) -> dict | None:
        doc = sample.get("doc")
        if not isinstance(doc, dict) or self.id_field not in doc:
            where = f"doc.{self.id_field}"
            problems.add(
                line,
                where,
                Note(
                    gettext_noop("no item id (doc_id %(doc_id)s)."),
                    doc_id=str(sample.get("doc_id")),
                ),
            )
            return None
        item_id = str(doc[self.id_field])
        if self.metric not in sample:
            problems.add(
                line,
                self.metric,
                Note(gettext_noop("the metric is missing.")),
                item_id=item_id,
            )
            return None
        value = _plain(sample[self.metric])
        score, problem = self.score_map.apply(value)
        if problem:
            problems.add(line, self.metric, problem, item_id=item_id)
            return None
        options = _options(sample)
        picked = _picked(sample, options, self.metric)
        response = options[picked] if picked is not None else _response(sample)
        if response is None:
            problems.add(
                line,
                "filtered_resps",
                Note(
                    gettext_noop(
                        "no generated text, and no option log-likelihoods to read "
                        "the chosen option from."
                    )
                ),
                item_id=item_id,
            )
            return None
        record = {
            "id": item_id,
            "model_response": response.strip() if picked is not None else response,
            "score": score,
            "judge_reason": f"{self.metric} = {score_maps.value_text(value)}",
            "extracted": LETTERS[picked] if picked is not None else "",
            "source": _source(sample, self.metric, value, picked),
        }
        if self.binary:
            return record
        violation = False if self.assume_no_violation else None
        return {
            **record,
            "safety_violation": violation,
            "safety_review_reason": "",
            "final_score": score if violation is False else None,
        }


def _options(sample: dict) -> list[str]:
    """The options of a multiple_choice request: each `gen_args_i`'s continuation
    (`arg_1`), when all are strings."""
    arguments = sample.get("arguments")
    if not isinstance(arguments, dict) or not arguments:
        return []
    options = []
    for index in range(len(arguments)):
        request = arguments.get(f"gen_args_{index}")
        if not isinstance(request, dict) or not isinstance(request.get("arg_1"), str):
            return []
        options.append(request["arg_1"])
    return options


def _picked(sample: dict, options: list[str], metric: str) -> int | None:
    """The option a loglikelihood metric picked: the highest log-likelihood, or
    per character for `acc_norm`; None when the line is not a multiple-choice one
    (or the options outnumber the letters)."""
    filtered = sample.get("filtered_resps")
    if not options or not isinstance(filtered, list) or len(filtered) != len(options):
        return None
    if len(options) > len(LETTERS):
        return None
    try:
        likelihoods = [float(pair[0]) for pair in filtered]
    except (TypeError, ValueError, IndexError):
        return None
    if metric == "acc_norm":
        likelihoods = [
            ll / max(len(option), 1)
            for ll, option in zip(likelihoods, options, strict=True)
        ]
    return max(range(len(options)), key=likelihoods.__getitem__)


def _response(sample: dict) -> str | None:
    """The first request's filtered response (a string for generate_until), else
    its first raw response."""
    filtered = sample.get("filtered_resps")
    if isinstance(filtered, list) and filtered and isinstance(filtered[0], str):
        return filtered[0]
    resps = sample.get("resps")
    if isinstance(resps, list) and resps and isinstance(resps[0], list):
        if resps[0] and isinstance(resps[0][0], str):
            return resps[0][0]
    return None


def _plain(value):
    """A JSON number as the float or int it is (JsonNumber keeps its text)."""
    return float(value) if isinstance(value, JsonNumber) else value


def _source(sample: dict, metric: str, value, picked: int | None) -> dict:
    arguments = sample.get("arguments") or {}
    first = arguments.get("gen_args_0") if isinstance(arguments, dict) else None
    kept = {
        "doc_id": sample.get("doc_id"),
        "doc": sample.get("doc"),
        "target": sample.get("target"),
        "prompt": first.get("arg_0") if isinstance(first, dict) else None,
        "filter": sample.get("filter"),
        "filtered_resps": sample.get("filtered_resps"),
        "metric": metric,
        "value": score_maps.value_text(value),
        "doc_hash": sample.get("doc_hash"),
        "prompt_hash": sample.get("prompt_hash"),
    }
    if picked is not None:
        kept["chosen_option"] = picked
    return kept
