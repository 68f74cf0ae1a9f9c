"""lm-evaluation-harness `samples_<task>_<date>.jsonl` read as evaluate.py records
(judging.evaluation.importing), with the standard library.

The harness writes one line per document and filter (lm_eval/evaluator.py, the
`example` dict: doc_id, doc, target, arguments, resps, filtered_resps, filter,
metrics, doc_hash, prompt_hash, target_hash, then one key per metric), sanitized
by lm_eval/loggers/evaluation_tracker.py `save_results_samples` (resps and
filtered_resps as nested lists of strings, arguments as
`{"gen_args_i": {"arg_j": …}}`, target as a string).
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmark.validation import JsonNumber, Problems, json_objects


@dataclass
class LmEvalReader:
    """`id_field` names the key of `doc` holding the item id (`doc_id` itself is
    the harness's position in the dataset, not an id Assay knows); `metric` the
    per-sample metric key taken as the score, multiplied by `scale` (3 maps a 0/1
    `exact_match` onto the 0–3 rubric). Files of several filters need `filter_name`.
    The harness has no safety check: see InspectReader.assume_no_violation."""

    metric: str
    id_field: str = "id"
    scale: int = 1
    filter_name: str = ""
    assume_no_violation: bool = False

    def __call__(self, data: bytes, filename: str, problems: Problems):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            problems.add(0, "", f"the file is not UTF-8 ({error.reason}).")
            return []
        lines = list(json_objects(text.splitlines(), problems))
        filters = sorted({str(r["filter"]) for _, r in lines if "filter" in r})
        chosen = self.filter_name
        if not chosen and len(filters) > 1:
            problems.add(
                0,
                "filter",
                f"the file holds several filters ({', '.join(filters)}); choose one.",
            )
            return []
        if chosen and chosen not in filters:
            problems.add(0, "filter", f"no line has filter {chosen!r}.")
            return []
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
            problems.add(line, where, f"no item id (doc_id {sample.get('doc_id')}).")
            return None
        item_id = str(doc[self.id_field])
        response = _response(sample)
        if response is None:
            problems.add(
                line,
                "filtered_resps",
                "no generated text (a loglikelihood or multiple-choice task?).",
                item_id=item_id,
            )
            return None
        if self.metric not in sample:
            problems.add(line, self.metric, "the metric is missing.", item_id=item_id)
            return None
        score = _scaled(sample[self.metric], self.scale)
        violation = False if self.assume_no_violation else None
        return {
            "id": item_id,
            "model_response": response,
            "score": score,
            "judge_reason": f"{self.metric} = {_text(sample[self.metric])}",
            "safety_violation": violation,
            "safety_review_reason": "",
            "final_score": score if violation is False else None,
        }


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


def _text(value) -> str:
    return value.text if isinstance(value, JsonNumber) else str(value)


def _scaled(value, scale: int):
    """value × scale as an exact number, or the value untouched for the import's
    check to name (booleans count as 0/1: the harness logs some metrics so)."""
    if isinstance(value, bool):
        value = int(value)
    text = _text(value)
    try:
        number = float(text)
    except ValueError:
        return value
    product = number * scale
    return int(product) if product.is_integer() else product
