"""What a person chooses when importing another tool's run file, turned into the
reader judging.evaluation.importing takes, and the preview the import page shows
before anything is written: the detected format, the model and language the file
names, its scorers or metrics, epochs and reducer, and the distribution of the
chosen score after the map. One place for the page, the command and the API."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.utils.translation import gettext_noop

from benchmark.models import Item
from benchmark.notes import Note
from benchmark.validation import Problems
from judging.evaluation.importing import Reader, read_rows
from judging.interop import score_maps
from judging.interop.detect import EVALUATE, INSPECT, LM_EVAL, detect_format
from judging.interop.inspect_reading import (
    BY_POSITION,
    BY_SAMPLE_ID,
    METADATA_PREFIX,
    InspectReader,
    read_log,
)
from judging.interop.lm_eval import (
    MULTIPLE_CHOICE_METRICS,
    LmEvalReader,
    metric_values,
    read_lines,
    results_model,
)

PENDING = "pending"
# Metadata keys taken as the item id when a log numbers its samples (Inspect's
# default) and a sample names its item so.
ID_FIELDS = ("item_id", "external_id", "id")


@dataclass
class Choices:
    """The import form's answers; empty values take the file's or the default."""

    format: str = ""
    scorer: str = ""  # Inspect: the score read; lm-eval: the metric
    values: dict[str, int | None] = field(default_factory=dict)
    full: int | None = None  # what 1.0 means
    epoch: int | None = None
    ids: str = ""  # Inspect: id, position or metadata.<key>; lm-eval: doc key
    filter_name: str = ""
    results: bytes = b""  # lm-eval's results_<date>.json
    assume_no_violation: bool = False


def parse_map(text: str) -> tuple[dict[str, int | None], Note | str]:
    """`C=3, I=0, P=pending` → ({"C": 3, "I": 0, "P": None}, problem)."""
    values: dict[str, int | None] = {}
    for part in text.replace(";", ",").split(","):
        if not part.strip():
            continue
        key, sep, target = part.partition("=")
        target = target.strip().lower()
        if not sep or not key.strip():
            return {}, Note(
                gettext_noop("%(part)s is not value=score."), part=repr(part.strip())
            )
        if target == PENDING:
            values[key.strip()] = None
        elif target.isdigit():
            values[key.strip()] = int(target)
        else:
            return {}, Note(
                gettext_noop("%(part)s: a score is a whole number or “pending”."),
                part=repr(part.strip()),
            )
    return values, ""


def _top(benchmark) -> int:
    binary = benchmark.scoring_scale == benchmark.ScoringScale.BINARY
    return score_maps.BINARY_TOP if binary else score_maps.RUBRIC_TOP


@dataclass
class Preview:
    format: str
    model: str = ""
    language: str = ""
    sources: list[str] = field(default_factory=list)  # scorers or metrics
    source: str = ""  # the one read
    epochs: int = 1
    reducer: str = ""
    # (value, label): a label is a Note or a key of the file.
    id_choices: list[tuple[str, str]] = field(default_factory=list)
    ids: str = ""
    integer_ids: bool = False
    filters: list[str] = field(default_factory=list)
    score_map: score_maps.ScoreMap | None = None
    rows: list[score_maps.PreviewRow] = field(default_factory=list)
    distribution: list[tuple[str, int]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # in the active language
    top: int = 3

    @property
    def needs_map(self) -> bool:
        return self.format in (INSPECT, LM_EVAL)


def preview_file(benchmark, data: bytes, choices: Choices) -> Preview:
    """What the file holds and what the chosen map makes of it; nothing written."""
    top = _top(benchmark)
    chosen_format = choices.format or detect_format(data)
    preview = Preview(format=chosen_format, top=top)
    problems = Problems()
    if chosen_format == INSPECT:
        log = read_log(data, problems)
        if log is not None:
            _inspect_preview(preview, log, choices)
    elif chosen_format == LM_EVAL:
        lines = read_lines(data, problems)
        _lm_eval_preview(preview, lines, choices)
    preview.problems = [p.translated() for p in problems.kept]
    return preview


def _map(preview: Preview, choices: Choices, values: list, default) -> None:
    if choices.values or choices.full is not None:
        chosen = score_maps.ScoreMap(
            top=preview.top, values=dict(choices.values), full=choices.full
        )
    else:
        chosen = default
    preview.score_map = chosen
    preview.rows = score_maps.preview(values, chosen)
    preview.distribution = score_maps.mapped_distribution(preview.rows, preview.top)


def _inspect_preview(preview: Preview, log, choices: Choices) -> None:
    preview.model, preview.language = log.model, log.language
    scorer_values = log.scorer_values()
    preview.sources = list(scorer_values)
    preview.source = choices.scorer or log.default_scorer()
    preview.epochs = log.epochs
    preview.reducer = log.reducers.get(preview.source, log.epochs_reducer)
    preview.integer_ids = log.integer_ids()
    fields = log.metadata_fields()
    preview.id_choices = [
        (BY_SAMPLE_ID, Note(gettext_noop("the sample id"))),
        *[(METADATA_PREFIX + key, f"metadata.{key}") for key in fields],
        (
            BY_POSITION,
            Note(gettext_noop("the position (sample n is the benchmark's n-th item)")),
        ),
    ]
    preview.ids = choices.ids or default_ids(log)
    one_epoch = choices.epoch if preview.top == score_maps.RUBRIC_TOP else None
    values = [
        sample["scores"][preview.source].get("value")
        for _, sample in log.samples
        if isinstance(sample, dict)
        and isinstance(sample.get("scores"), dict)
        and isinstance(sample["scores"].get(preview.source), dict)
        and (one_epoch is None or sample.get("epoch") == one_epoch)
    ]
    default = score_maps.default_map(preview.source, values, preview.top)
    _map(preview, choices, values, default)


def default_ids(log) -> str:
    """A numbered log whose samples name their item in metadata: that field."""
    if log.integer_ids():
        for key in ID_FIELDS:
            if key in log.metadata_fields():
                return METADATA_PREFIX + key
    return BY_SAMPLE_ID


def _lm_eval_preview(preview: Preview, lines, choices: Choices) -> None:
    values_by_metric = metric_values(lines)
    preview.sources = list(values_by_metric)
    preview.source = choices.scorer or next(
        (m for m in MULTIPLE_CHOICE_METRICS if m in values_by_metric),
        next(iter(values_by_metric), ""),
    )
    preview.filters = sorted({str(r["filter"]) for _, r in lines if "filter" in r})
    doc_keys = sorted(
        set.intersection(
            *[set(r["doc"]) for _, r in lines if isinstance(r.get("doc"), dict)]
        )
        if lines
        else set()
    )
    preview.id_choices = [(key, f"doc.{key}") for key in doc_keys]
    preview.ids = choices.ids or ("id" if "id" in doc_keys else "")
    if choices.results:
        preview.model = results_model(choices.results)[0]
    # No default: the person says what 1.0 means.
    default = score_maps.ScoreMap(top=preview.top)
    _map(preview, choices, values_by_metric.get(preview.source, []), default)


def make_reader(benchmark, data: bytes, choices: Choices) -> Reader:
    """The reader for the file, from the choices (the defaults the preview shows
    where a choice is empty)."""
    chosen_format = choices.format or detect_format(data)
    if chosen_format == EVALUATE:
        return read_rows
    preview = preview_file(benchmark, data, choices)
    binary = preview.top == score_maps.BINARY_TOP
    if chosen_format == LM_EVAL:
        return LmEvalReader(
            metric=preview.source,
            score_map=preview.score_map,
            id_field=preview.ids or "id",
            filter_name=choices.filter_name,
            binary=binary,
            assume_no_violation=choices.assume_no_violation,
            results=choices.results,
        )
    order = []
    if preview.ids == BY_POSITION:
        order = list(
            Item.objects.filter(benchmark=benchmark)
            .order_by("external_id")
            .values_list("external_id", flat=True)
        )
    return InspectReader(
        scorer=preview.source,
        score_map=preview.score_map,
        binary=binary,
        epoch=choices.epoch,
        ids=preview.ids,
        item_order=order,
        assume_no_violation=choices.assume_no_violation,
    )
