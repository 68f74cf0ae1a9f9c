"""Import an evaluation run produced elsewhere (IndustryBench evaluate.py output).

One row per item with the columns of the public evaluate.py output:
`id, model_response, model_name, score, judge_reason, safety_violation,
safety_review_reason, final_score`, as CSV or JSONL. The import is all-or-nothing:
every row is checked first and any problem rejects the whole file with row-level
messages; nothing is written. The messages are Notes (benchmark.notes): English on
the command line, in the REST API and the log, the reader's language on the page.

Blank `score` means the judge gave no verdict, blank `safety_violation` means the SV
check failed: those items are imported as *pending* (never as 0 or "no violation"),
and their `final_score` must be blank too.

On a benchmark graded correct / incorrect the records need only `id`,
`model_response` and `score` (1 correct, 0 incorrect, blank pending); a
multiple-choice or true/false item's verdict becomes its AnswerGrade (`extracted`,
the option the source recorded), any other item's a key-point verdict. Readers of
other formats (judging.interop) may add `trial` (0-based: Inspect's epochs),
`input_tokens` / `output_tokens` and `source`, what the file said of the sample
that Assay has no column for (kept on the response and written back by exports),
and name the file's `model`, `language` and run-level `run_metadata`.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from benchmark.models import Item, Rendering
from benchmark.notes import Note
from benchmark.validation import JsonNumber, Problems, json_objects, not_utf8
from judging.evaluation.choices import CHOICE_FORMATS
from judging.evaluation.models import AnswerGrade, EvaluationRun, Judgment, Response

REQUIRED_COLUMNS = (
    "id",
    "model_response",
    "score",
    "judge_reason",
    "safety_violation",
    "safety_review_reason",
    "final_score",
)
BINARY_REQUIRED_COLUMNS = ("id", "model_response", "score")
OPTIONAL_COLUMNS = ("model_name",)
TRUE_WORDS = {"true", "1", "yes", "y", "t"}
FALSE_WORDS = {"false", "0", "no", "n", "f"}
DEFAULT_JUDGE = "imported-judge"
DEFAULT_SV_JUDGE = "imported-sv-judge"

# Turns a file into (line number, record) pairs in the evaluate.py columns, adding
# what cannot be read to the Problems. Other formats (judging.interop)
# supply their own, so every run import is checked and written by the code below.
Reader = Callable[[bytes, str, Problems], list[tuple[int, dict]]]


@dataclass(frozen=True)
class RunRow:
    line: int
    item_id: str
    response: str
    score: int | None
    judge_reason: str
    violation: bool | None
    sv_reason: str
    trial: int = 0
    extracted: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    source: dict | None = None


def read_rows(data: bytes, filename: str, problems: Problems) -> list[tuple[int, dict]]:
    """(line number, record) pairs from a CSV or JSONL file; what cannot be read is
    added to `problems`."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        problems.add(0, "", not_utf8(error))
        return []
    stripped = text.lstrip()
    if filename.lower().endswith((".jsonl", ".json")) or stripped.startswith("{"):
        return list(json_objects(text.splitlines(), problems))
    return _read_csv(text, problems)


def _read_csv(text: str, problems: Problems) -> list[tuple[int, dict]]:
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        problems.add(
            line,
            "",
            Note(gettext_noop("contains a NUL character, which no field accepts.")),
        )
        return []
    reader = csv.DictReader(io.StringIO(text))
    try:
        records = [(reader.line_num, row) for row in reader]
    except csv.Error as error:
        problems.add(
            reader.line_num,
            "",
            Note(gettext_noop("CSV error: %(error)s."), error=str(error)),
        )
        return []
    if reader.fieldnames is None:
        problems.add(0, "", Note(gettext_noop("the file is empty.")))
        return []
    missing = [c for c in REQUIRED_COLUMNS if c not in reader.fieldnames]
    if missing:
        problems.add(
            1,
            "",
            Note(
                gettext_noop("missing column(s): %(columns)s."),
                columns=", ".join(missing),
            ),
        )
        return []
    return records


def _text(value) -> str:
    return "" if value is None else str(value).strip()


SCORE_TEXT = re.compile(r"[+-]?\d+(?:\.0*)?")


def _parse_score(value, name: str, top: int = 3) -> tuple[int | None, Note | str]:
    """An integer 0–top written as one (`2`, `2.0`): `2.9999999999999999`, `inf` or
    `1e309` are refused, never rounded."""
    if isinstance(value, bool):
        return None, Note(
            gettext_noop("%(name)s %(value)s is not a number."),
            name=name,
            value=repr(value),
        )
    text = value.text if isinstance(value, JsonNumber) else _text(value)
    if text == "" or text.lower() in {"none", "null", "nan"}:
        return None, ""
    if not SCORE_TEXT.fullmatch(text):
        return None, Note(
            gettext_noop("%(name)s %(value)s is not an integer 0–%(top)s."),
            name=name,
            value=repr(text[:40]),
            top=top,
        )
    number = int(text.split(".")[0])
    if not 0 <= number <= top:
        return None, Note(
            gettext_noop(
                "%(name)s %(value)s is out of range: use an integer 0–%(top)s."
            ),
            name=name,
            value=text[:40],
            top=top,
        )
    return number, ""


def _parse_bool(value) -> tuple[bool | None, Note | str]:
    if isinstance(value, bool):
        return value, ""
    text = _text(value).lower()
    if text in {"", "none", "null", "nan"}:
        return None, ""
    if text in TRUE_WORDS:
        return True, ""
    if text in FALSE_WORDS:
        return False, ""
    return None, Note(
        gettext_noop("safety_violation %(value)s is not a boolean (true/false, 1/0)."),
        value=repr(value),
    )


def check_rows(
    records, items_by_id: dict, problems: Problems, *, binary: bool = False
) -> list[RunRow]:
    rows, seen, models = [], {}, set()
    required = BINARY_REQUIRED_COLUMNS if binary else REQUIRED_COLUMNS
    top = 1 if binary else 3
    for line, record in records:
        missing = [c for c in required if c not in record]
        item_id = _text(record.get("id"))
        if missing:
            message = Note(
                gettext_noop("missing field(s): %(fields)s."),
                fields=", ".join(missing),
            )
            problems.add(line, "", message, item_id=item_id)
            continue
        errors = []
        trial = record.get("trial", 0)
        if isinstance(trial, bool) or not isinstance(trial, int) or trial < 0:
            errors.append(
                Note(
                    gettext_noop("trial %(trial)s is not a whole number from 0."),
                    trial=repr(trial),
                )
            )
            trial = 0
        key = (item_id, trial)
        if not item_id:
            errors.append(Note(gettext_noop("id is empty.")))
        elif item_id not in items_by_id:
            errors.append(
                Note(
                    gettext_noop("unknown item id %(id)s in this benchmark."),
                    id=repr(item_id),
                )
            )
        elif key in seen and trial:
            errors.append(
                Note(
                    gettext_noop(
                        "duplicate id (trial %(trial)s) (first on line %(first)s)."
                    ),
                    trial=trial + 1,
                    first=seen[key],
                )
            )
        elif key in seen:
            errors.append(
                Note(
                    gettext_noop("duplicate id (first on line %(first)s)."),
                    first=seen[key],
                )
            )
        else:
            seen[key] = line
        if _text(record.get("model_name")):
            models.add(_text(record.get("model_name")))
        score, error = _parse_score(record["score"], "score", top)
        errors += [error] if error else []
        final = violation = None
        if not binary:
            final, error = _parse_score(record["final_score"], "final_score")
            errors += [error] if error else []
            violation, error = _parse_bool(record["safety_violation"])
            errors += [error] if error else []
        response = (
            "" if record["model_response"] is None else str(record["model_response"])
        )
        empty = not response.strip()
        if not errors and not binary:
            errors += _consistency(empty, score, violation, final, record)
        for message in errors:
            problems.add(line, "", message, item_id=item_id)
        if not errors:
            rows.append(
                RunRow(
                    line=line,
                    item_id=item_id,
                    response=response,
                    score=score,
                    judge_reason=_text(record.get("judge_reason")),
                    violation=None if empty else violation,
                    sv_reason=_text(record.get("safety_review_reason")),
                    trial=trial,
                    extracted=_text(record.get("extracted"))[:20].strip(),
                    input_tokens=_tokens(record.get("input_tokens")),
                    output_tokens=_tokens(record.get("output_tokens")),
                    source=record.get("source") or {},
                )
            )
    if len(models) > 1:
        problems.add(
            0,
            "",
            Note(
                gettext_noop(
                    "the file mixes models (%(models)s); import one model per run."
                ),
                models=", ".join(sorted(models)),
            ),
        )
    return rows


def _tokens(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _consistency(empty, score, violation, final, record) -> list[Note]:
    if empty:
        if score not in (None, 0):
            return [
                Note(
                    gettext_noop(
                        "empty model_response must have score 0, not %(score)s."
                    ),
                    score=score,
                )
            ]
        if final not in (None, 0):
            return [
                Note(
                    gettext_noop(
                        "empty model_response must have final_score 0, not %(final)s."
                    ),
                    final=final,
                )
            ]
        return []
    if score is None or violation is None:
        if final is not None:
            # The column's name, the same in every language.
            what = "score" if score is None else "safety_violation"
            return [
                Note(
                    gettext_noop(
                        "final_score %(final)s given but %(column)s is blank (pending)."
                    ),
                    final=final,
                    column=what,
                )
            ]
        return []
    expected = 0 if violation else score
    if final is None:
        return [
            Note(
                gettext_noop("final_score is blank; expected %(expected)s."),
                expected=expected,
            )
        ]
    if final == expected:
        return []
    if violation:
        return [
            Note(
                gettext_noop(
                    "final_score %(final)s is inconsistent: safety_violation is "
                    "true, so it must be %(expected)s."
                ),
                final=final,
                expected=expected,
            )
        ]
    return [
        Note(
            gettext_noop(
                "final_score %(final)s is inconsistent: score is %(score)s, so it "
                "must be %(expected)s."
            ),
            final=final,
            score=score,
            expected=expected,
        )
    ]


def check_import(
    benchmark,
    data: bytes,
    filename: str,
    reader: Reader = read_rows,
    language: str = "",
) -> list[RunRow]:
    """Validated rows, or ImportRejected listing every problem found. A reader
    that names the file's language (`reader.language`) must agree with the run's."""
    problems = Problems()
    records = reader(data, filename, problems)
    file_language = getattr(reader, "language", "")
    if language and file_language and file_language != language:
        problems.add(
            0,
            "language",
            Note(
                gettext_noop(
                    "the file says its answers are in %(file)s, not %(chosen)s: "
                    "choose %(file)s or check the file."
                ),
                file=repr(file_language),
                chosen=repr(language),
            ),
        )
    items_by_id = dict(
        Item.objects.filter(benchmark=benchmark).values_list("external_id", "pk")
    )
    binary = benchmark.scoring_scale == benchmark.ScoringScale.BINARY
    rows = check_rows(records, items_by_id, problems, binary=binary) if records else []
    if not records and not problems:
        problems.add(0, "", Note(gettext_noop("the file has no rows.")))
    if problems:
        raise problems.rejection()
    return rows


@transaction.atomic
def do_import_run(
    benchmark,
    data: bytes,
    *,
    filename: str,
    model_name: str,
    language: str,
    thinking: bool = False,
    model_category: str = "",
    judge_name: str = DEFAULT_JUDGE,
    sv_judge_name: str = DEFAULT_SV_JUDGE,
    user=None,
    reader: Reader = read_rows,
) -> EvaluationRun:
    """Create an imported EvaluationRun with its Response and Judgment rows.

    Raises ImportRejected (nothing written) when any row has a problem.
    """
    problems = Problems()
    for field_name, value, longest in (
        ("model_name", model_name, 200),
        ("model_category", model_category, 100),
        ("judge_name", judge_name, 200),
        ("sv_judge_name", sv_judge_name, 200),
    ):
        if len(value.strip()) > longest:
            problems.add(0, field_name, _too_long(longest))
        if "\x00" in value:
            problems.add(0, field_name, Note(gettext_noop("contains a NUL character.")))
    if language not in benchmark.languages:
        problems.add(
            0,
            "",
            Note(
                gettext_noop(
                    "language %(language)s is not one of this benchmark's languages "
                    "(%(languages)s)."
                ),
                language=repr(language),
                languages=", ".join(benchmark.languages),
            ),
        )
    if problems:
        raise problems.rejection()
    rows = check_import(benchmark, data, filename, reader, language)
    # The form's model name wins; a file that names its model (Inspect, lm-eval)
    # fills an empty one.
    model_name = model_name.strip() or str(getattr(reader, "model", "")).strip()
    if not model_name:
        problems.add(
            0, "", Note(gettext_noop("a model name is required (the file names none)."))
        )
    elif len(model_name) > 200:
        problems.add(0, "model_name", _too_long(200))
    if problems:
        raise problems.rejection()
    binary = benchmark.scoring_scale == benchmark.ScoringScale.BINARY
    items = dict(
        Item.objects.filter(benchmark=benchmark).values_list("external_id", "pk")
    )
    renderings = dict(
        Rendering.objects.filter(
            item__benchmark=benchmark, language=language, is_current=True
        ).values_list("item_id", "pk")
    )
    if binary:
        pending = sum(1 for r in rows if r.score is None and r.response.strip())
    else:
        pending = sum(
            1
            for r in rows
            if r.score is None or (r.violation is None and r.response.strip())
        )
    now = timezone.now()
    run = EvaluationRun.objects.create(
        benchmark=benchmark,
        model_name=model_name,
        model_category=model_category.strip(),
        language=language,
        thinking=thinking,
        origin=EvaluationRun.Origin.IMPORTED,
        status=EvaluationRun.Status.ATTENTION
        if pending
        else EvaluationRun.Status.COMPLETE,
        binary=binary,
        trials=max((r.trial for r in rows), default=0) + 1,
        judge_name=judge_name,
        sv_judge_name="" if binary else sv_judge_name,
        source_file=filename[:300],
        source_metadata=getattr(reader, "run_metadata", None) or {},
        total_items=len(rows),
        answered_count=len(rows),
        judged_count=sum(1 for r in rows if r.score is not None),
        sv_checked_count=0
        if binary
        else sum(1 for r in rows if r.violation is not None),
        scored_count=len(rows) - pending,
        failed_count=pending,
        input_tokens=sum(r.input_tokens for r in rows),
        output_tokens=sum(r.output_tokens for r in rows),
        created_by=user,
        started_at=now,
        finished_at=None if pending else now,
    )
    responses = Response.objects.bulk_create(
        [
            Response(
                run=run,
                item_id=items[row.item_id],
                rendering_id=renderings.get(items[row.item_id]),
                trial=row.trial,
                text=row.response,
                status=Response.Status.ANSWERED
                if row.response.strip()
                else Response.Status.EMPTY,
                source_record=row.source or {},
            )
            for row in rows
        ],
        batch_size=2000,
    )
    if binary:
        _write_binary_verdicts(benchmark, run, rows, responses, items)
    else:
        _write_rubric_verdicts(rows, responses, judge_name, sv_judge_name)
    return run


def _too_long(longest: int) -> Note:
    return Note(gettext_noop("has more than %(count)s characters."), count=longest)


def _write_rubric_verdicts(rows, responses, judge_name, sv_judge_name) -> None:
    judgments = []
    for row, response in zip(rows, responses, strict=True):
        empty = response.status == Response.Status.EMPTY
        judgments.append(
            Judgment(
                response=response,
                kind=Judgment.Kind.RUBRIC,
                judge_name=judge_name,
                score=0 if empty else row.score,
                reason=row.judge_reason,
                status=Judgment.Status.DONE
                if empty or row.score is not None
                else Judgment.Status.FAILED,
            )
        )
        if not empty:
            judgments.append(
                Judgment(
                    response=response,
                    kind=Judgment.Kind.SAFETY,
                    judge_name=sv_judge_name,
                    safety_violation=row.violation,
                    reason=row.sv_reason,
                    status=Judgment.Status.DONE
                    if row.violation is not None
                    else Judgment.Status.FAILED,
                )
            )
    Judgment.objects.bulk_create(judgments, batch_size=5000)


def _write_binary_verdicts(benchmark, run, rows, responses, items) -> None:
    """The source's verdicts as a binary run keeps them: an MC/TF item's as its
    AnswerGrade (the option the source recorded as `extracted`; an empty answer
    is flagged, as the rules flag it), any other item's as a key-point verdict of
    the run's judge. A verdict-less answer stays pending."""
    choice_items = set(
        Item.objects.filter(
            benchmark=benchmark, pk__in=items.values(), format__in=CHOICE_FORMATS
        ).values_list("pk", flat=True)
    )
    grades, judgments = [], []
    for row, response in zip(rows, responses, strict=True):
        empty = response.status == Response.Status.EMPTY
        if response.item_id in choice_items:
            if empty:
                grades.append(
                    AnswerGrade(response=response, grade=AnswerGrade.Grade.NONE)
                )
            elif row.score is not None:
                grade = (
                    AnswerGrade.Grade.CORRECT if row.score else AnswerGrade.Grade.WRONG
                )
                grades.append(
                    AnswerGrade(response=response, extracted=row.extracted, grade=grade)
                )
            continue
        judgments.append(
            Judgment(
                response=response,
                kind=Judgment.Kind.KEYPOINT,
                judge_name=run.judge_name,
                prompt_version=run.judge_prompt_version,
                score=0 if empty else row.score,
                reason=row.judge_reason,
                status=Judgment.Status.DONE
                if empty or row.score is not None
                else Judgment.Status.FAILED,
            )
        )
    AnswerGrade.objects.bulk_create(grades, batch_size=5000)
    Judgment.objects.bulk_create(judgments, batch_size=5000)
