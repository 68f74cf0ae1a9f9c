"""Inspect AI logs (`.eval` zip or `.json`) read as evaluate.py records
(judging.evaluation.importing), with the standard library: no ORM here.

What a log holds (inspect_ai/log/_log.py EvalLog): the spec (`eval`: task, model,
dataset, config with `epochs` and `epochs_reducer`, metadata), results with each
scorer's `reducer`, stats with `model_usage`, and samples, one per sample id and
epoch, each with its `scores` by scorer name. A scorer's values are mapped onto
Assay's scale by a `ScoreMap` (score_maps.py) chosen on import; epochs become
trials on a binary benchmark, and a 0–3 benchmark, which keeps one answer per
item, takes one chosen epoch. Sample ids are Assay's item ids, or (Inspect numbers
samples 1, 2, 3… by default) a metadata field, or the position in an item order
the caller gives. Problems are Notes (benchmark.notes): English on the command line
and in the REST API, the reader's language on the import page.
"""

from __future__ import annotations

import io
import json
import math
import zipfile
import zlib
from collections import Counter
from dataclasses import dataclass, field

import pyarrow
from django.conf import settings
from django.utils.translation import gettext_noop

from benchmark.notes import Note, noop
from benchmark.validation import Problems, unique_keys
from judging.interop import score_maps
from judging.interop.inspect_log import RUBRIC_SCORER

BY_SAMPLE_ID = "id"
BY_POSITION = "position"
METADATA_PREFIX = "metadata."
# Sample metadata Assay's own export writes beside the scores.
ASSAY_METADATA = ("safety_violation", "sv_reason")


@dataclass(frozen=True)
class Log:
    header: dict  # the EvalLog without samples
    samples: list[tuple[str, dict]]  # (zip member or `samples[i]`, sample)

    @property
    def spec(self) -> dict:
        return self.header["eval"]

    @property
    def model(self) -> str:
        return str(self.spec.get("model") or "")

    @property
    def language(self) -> str:
        metadata = self.spec.get("metadata")
        language = metadata.get("language") if isinstance(metadata, dict) else None
        return str(language) if isinstance(language, str) else ""

    @property
    def epochs(self) -> int:
        config = self.spec.get("config") if isinstance(self.spec, dict) else {}
        epochs = config.get("epochs") if isinstance(config, dict) else None
        return epochs if isinstance(epochs, int) and epochs > 0 else 1

    @property
    def epochs_reducer(self) -> str:
        """The config's `epochs_reducer` (Inspect's default, mean, when unset)."""
        if self.epochs == 1:
            return ""
        config = self.spec.get("config") or {}
        return ", ".join(config.get("epochs_reducer") or ["mean"])

    @property
    def reducers(self) -> dict[str, str]:
        """Scorer → the reducer Inspect combined its epochs with (results.scores[]
        `reducer`; the config's `epochs_reducer` when results lack it)."""
        results = self.header.get("results") or {}
        found = {}
        for score in results.get("scores") or []:
            if isinstance(score, dict) and score.get("name"):
                found[str(score["name"])] = str(
                    score.get("reducer") or self.epochs_reducer
                )
        return found

    def scorer_values(self) -> dict[str, list]:
        """Every scorer's values over the samples, in sample order."""
        values: dict[str, list] = {}
        for _, sample in self.samples:
            scores = sample.get("scores") if isinstance(sample, dict) else None
            if not isinstance(scores, dict):
                continue
            for name, score in scores.items():
                value = score.get("value") if isinstance(score, dict) else None
                values.setdefault(name, []).append(value)
        return values

    def metadata_fields(self) -> list[str]:
        """Sample metadata keys every sample has with a scalar value: candidates
        for the item id."""
        common = None
        for _, sample in self.samples:
            metadata = sample.get("metadata") if isinstance(sample, dict) else None
            if not isinstance(metadata, dict):
                return []
            keys = {
                k
                for k, v in metadata.items()
                if isinstance(v, str | int) and not isinstance(v, bool)
            }
            common = keys if common is None else common & keys
        return sorted((common or set()) - set(ASSAY_METADATA))

    def default_scorer(self) -> str:
        names = list(self.scorer_values())
        if RUBRIC_SCORER in names:
            return RUBRIC_SCORER
        return names[0] if len(names) == 1 else ""

    def integer_ids(self) -> bool:
        return any(
            isinstance(s.get("id"), int) for _, s in self.samples if isinstance(s, dict)
        )


def read_log(data: bytes, problems: Problems) -> Log | None:
    """The log's header and samples, or None with the reason in `problems`."""
    try:
        if data.startswith(b"PK\x03\x04"):
            return _zip_log(data, problems)
        log = _json(data, "the log")
    except (UnreadableLog, *ZIP_ERRORS) as error:
        problems.add(
            0,
            "",
            Note(
                gettext_noop("not a readable Inspect .eval or .json log: %(reason)s"),
                reason=_reason(error),
            ),
        )
        return None
    if not isinstance(log, dict) or not isinstance(log.get("eval"), dict):
        problems.add(
            0, "eval", Note(gettext_noop("not an Inspect log: no `eval` spec."))
        )
        return None
    if not isinstance(log.get("samples"), list) or not log["samples"]:
        problems.add(
            0,
            "samples",
            Note(gettext_noop("the log has no samples (logged without them?).")),
        )
        return None
    header = {k: v for k, v in log.items() if k != "samples"}
    return Log(header, [(f"samples[{i}]", s) for i, s in enumerate(log["samples"])])


def _zip_log(data: bytes, problems: Problems) -> Log | None:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = archive.namelist()
        spec_file = next(
            (n for n in ("header.json", "_journal/start.json") if n in names), None
        )
        if spec_file is None:
            problems.add(
                0, "", Note(gettext_noop("no header.json or _journal/start.json."))
            )
            return None
        # A re-logged sample repeats its member name; the last one counts, as in
        # inspect_ai's reader.
        members = sorted(
            n
            for n in dict.fromkeys(names)
            if n.startswith("samples/") and n.endswith(".json")
        )
        check_expanded_sizes(archive, [spec_file, *members])
        header = _json(read_member(archive, data, spec_file), spec_file)
        if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
            problems.add(
                0,
                spec_file,
                Note(gettext_noop("not an Inspect log header: no `eval` spec.")),
            )
            return None
        if not members:
            problems.add(0, "samples", Note(gettext_noop("the log has no samples.")))
            return None
        samples = [
            (name, _json(read_member(archive, data, name), name)) for name in members
        ]
    # Members sort as text (10 before 2); samples follow the epoch, then the id.
    samples.sort(key=lambda pair: _sample_order(pair[1]))
    return Log(header, samples)


def _sample_order(sample) -> tuple:
    if not isinstance(sample, dict):
        return (0, 0, "")
    epoch = sample.get("epoch")
    sample_id = sample.get("id")
    return (
        epoch if isinstance(epoch, int) else 0,
        sample_id if isinstance(sample_id, int) else math.inf,
        str(sample_id),
    )


@dataclass
class InspectReader:
    """Reads an Inspect log into evaluate.py records (judging.evaluation.importing).

    `scorer` names the score read (empty: Assay's own `rubric`, or the log's only
    scorer); `score_map` maps its values (None: score_maps.default_map for it);
    `binary` says the target scale is correct / incorrect, where epochs become
    trials; on the 0–3 scale a log of several epochs needs `epoch`, the one
    imported. `ids` says where the item id is: the sample id (`id`), a metadata
    field (`metadata.<key>`), or the position (`position`: the n-th sample of an
    epoch is `item_order[n - 1]`). On the 0–3 scale the SV flag and its reason
    are the sample's `metadata.safety_violation` / `sv_reason`, as Assay writes
    them; a log without them imports its items as SV pending unless
    `assume_no_violation` says the source had no safety check to wait for.

    After a call: `model`, `language` (the log's metadata), `run_metadata` (what
    the run keeps of the log) and `ignored` (the other scorers' counts)."""

    scorer: str = ""
    score_map: score_maps.ScoreMap | None = None
    binary: bool = False
    epoch: int | None = None
    ids: str = BY_SAMPLE_ID
    item_order: list[str] = field(default_factory=list)
    assume_no_violation: bool = False
    ignored: Counter = field(default_factory=Counter)
    model: str = ""
    language: str = ""
    run_metadata: dict = field(default_factory=dict)

    def __call__(self, data: bytes, filename: str, problems: Problems):
        log = read_log(data, problems)
        if log is None:
            return []
        self.model, self.language = log.model, log.language
        scorer = self.scorer or log.default_scorer()
        values = log.scorer_values()
        if not values:
            # No sample holds a readable score: each sample's problem is named.
            scorer = scorer or RUBRIC_SCORER
        elif scorer not in values:
            if scorer:
                message = Note(
                    gettext_noop(
                        "the log has no scorer %(scorer)s; choose one of: %(listed)s."
                    ),
                    scorer=repr(scorer),
                    listed=", ".join(values),
                )
            else:
                message = Note(
                    gettext_noop(
                        "the log has several scorers; choose one of: %(listed)s."
                    ),
                    listed=", ".join(values),
                )
            problems.add(0, "scores", message)
            return []
        top = score_maps.BINARY_TOP if self.binary else score_maps.RUBRIC_TOP
        chosen = self.score_map or score_maps.default_map(
            scorer, values.get(scorer, []), top
        )
        if chosen.top != top:
            problems.add(0, "scores", score_maps.wrong_scale(chosen.top))
            return []
        if not self._check_epochs(log, problems):
            return []
        self.ignored = Counter(
            {name: len(v) for name, v in values.items() if name != scorer}
        )
        self.run_metadata = _run_metadata(log, scorer, chosen)
        positions: dict[int, Counter] = {}
        records = []
        for line, (where, sample) in enumerate(log.samples, start=1):
            if (
                isinstance(sample, dict)
                and self.epoch
                and sample.get("epoch") != self.epoch
            ):
                continue
            record = self._record(
                line, where, sample, scorer, chosen, problems, positions
            )
            if record is not None:
                records.append((line, record))
        return records

    def _check_epochs(self, log: Log, problems: Problems) -> bool:
        if self.binary or log.epochs == 1:
            if self.epoch not in (None, 1) and self.epoch > log.epochs:
                problems.add(
                    0,
                    "epoch",
                    Note(
                        noop.ngettext(
                            "the log has %(count)s epoch.",
                            "the log has %(count)s epochs.",
                        ),
                        count=log.epochs,
                    ),
                )
                return False
            return True
        if self.epoch is None or not 1 <= self.epoch <= log.epochs:
            problems.add(
                0,
                "epoch",
                Note(
                    gettext_noop(
                        "the log has %(count)s epochs and a 0–3 benchmark keeps one "
                        "answer per item: choose the epoch to import (a benchmark "
                        "graded correct / incorrect keeps every epoch as a trial)."
                    ),
                    count=log.epochs,
                ),
            )
            return False
        return True

    def _item_id(self, sample: dict, errors: list[Note], positions) -> str:
        if self.ids.startswith(METADATA_PREFIX):
            key = self.ids.removeprefix(METADATA_PREFIX)
            value = (sample.get("metadata") or {}).get(key)
            if value is None or isinstance(value, dict | list):
                errors.append(
                    Note(gettext_noop("metadata.%(key)s holds no item id."), key=key)
                )
                return str(sample.get("id"))
            return str(value)
        if self.ids == BY_POSITION:
            epoch = sample.get("epoch", 1)
            seen = positions.setdefault(epoch, Counter())
            seen["n"] += 1
            if seen["n"] > len(self.item_order):
                errors.append(
                    Note(
                        gettext_noop(
                            "sample %(sample)s of epoch %(epoch)s: the benchmark has "
                            "only %(items)s items to match by position."
                        ),
                        sample=seen["n"],
                        epoch=epoch,
                        items=len(self.item_order),
                    )
                )
                return str(sample.get("id"))
            return self.item_order[seen["n"] - 1]
        return str(sample["id"])

    def _record(self, line, where, sample, scorer, chosen, problems, positions):
        if not isinstance(sample, dict) or "id" not in sample:
            problems.add(line, where, Note(gettext_noop("not a sample: no `id`.")))
            return None
        errors: list[Note] = []
        item_id = self._item_id(sample, errors, positions)
        epoch = sample.get("epoch", 1)
        if not isinstance(epoch, int) or epoch < 1:
            errors.append(
                Note(
                    gettext_noop("epoch %(epoch)s is not a whole number from 1."),
                    epoch=repr(epoch),
                )
            )
        elif not self.binary and self.epoch is None and epoch != 1:
            errors.append(
                Note(
                    gettext_noop(
                        "epoch %(epoch)s: a 0–3 benchmark keeps one answer per item; "
                        "choose the epoch to import."
                    ),
                    epoch=epoch,
                )
            )
        error = sample.get("error")
        if error:
            message = error.get("message", "") if isinstance(error, dict) else error
            errors.append(
                Note(
                    gettext_noop("the sample ended in an error: %(error)s"),
                    error=str(message)[:200],
                )
            )
        scores = _object(sample, "scores", errors)
        verdict = _object(scores, scorer, errors, where="scores.")
        metadata = _object(sample, "metadata", errors)
        output = _object(sample, "output", errors)
        completion = _completion(output)
        if completion is None:
            errors.append(
                Note(gettext_noop("`output` holds no completion text Assay can read."))
            )
        score, problem = chosen.apply(verdict.get("value"))
        if problem:
            errors.append(
                Note(
                    gettext_noop("scores.%(scorer)s: %(problem)s"),
                    scorer=scorer,
                    problem=problem,
                )
            )
        violation = metadata.get("safety_violation")
        if violation is not None and not isinstance(violation, bool):
            errors.append(
                Note(
                    gettext_noop(
                        "metadata.safety_violation is not true, false or null."
                    )
                )
            )
        for message in errors:
            problems.add(line, where, message, item_id=item_id)
        if errors:
            return None
        usage = output.get("usage") if isinstance(output.get("usage"), dict) else {}
        record = {
            "id": item_id,
            "model_response": completion,
            "model_name": self.model,
            "score": score,
            "judge_reason": str(verdict.get("explanation") or ""),
            "extracted": str(verdict.get("answer") or "") if self.binary else "",
            "trial": epoch - 1 if self.binary else 0,
            "input_tokens": usage.get("input_tokens", 0),
            "output_tokens": usage.get("output_tokens", 0),
            "source": _source(sample, metadata, scorer, verdict, usage),
        }
        if self.binary:
            return record
        if violation is None and self.assume_no_violation and score is not None:
            violation = False
        final = None
        if violation is not None and score is not None:
            final = 0 if violation else score
        return {
            **record,
            "safety_violation": violation,
            "safety_review_reason": str(metadata.get("sv_reason") or ""),
            "final_score": final,
        }


def _source(
    sample: dict, metadata: dict, scorer: str, verdict: dict, usage: dict
) -> dict:
    """What the response keeps of the sample that Assay has no column for."""
    metadata = {k: v for k, v in metadata.items() if k not in ASSAY_METADATA}
    kept = {
        "sample_id": sample.get("id"),
        "epoch": sample.get("epoch", 1),
        "input": sample.get("input"),
        "target": sample.get("target"),
        "metadata": metadata,
        "usage": usage,
        "model_usage": sample.get("model_usage") or {},
        "score": {
            "scorer": scorer,
            "value": score_maps.value_text(verdict.get("value")),
            "answer": verdict.get("answer"),
        },
    }
    if sample.get("choices"):
        kept["choices"] = sample["choices"]
    return kept


def _run_metadata(log: Log, scorer: str, chosen: score_maps.ScoreMap) -> dict:
    spec = log.spec
    stats = log.header.get("stats") or {}
    return {
        "format": "inspect",
        "task": spec.get("task"),
        "task_version": spec.get("task_version"),
        "eval_id": spec.get("eval_id"),
        "created": spec.get("created"),
        "dataset": (spec.get("dataset") or {}).get("name"),
        "metadata": spec.get("metadata") or {},
        "epochs": log.epochs,
        "reducer": log.reducers.get(scorer, ""),
        "scorer": scorer,
        "score_map": {"values": chosen.values, "full": chosen.full, "top": chosen.top},
        "model_usage": stats.get("model_usage") or {},
    }


def _json(raw: bytes, where: str):
    """JSON as every import reads it: a key twice is refused (unique_keys), and
    nesting deeper than the parser's recursion limit is a message, not a crash."""
    try:
        return json.loads(raw.decode("utf-8-sig"), object_pairs_hook=unique_keys)
    except UnicodeDecodeError as error:
        raise UnreadableLog(
            Note(
                gettext_noop("%(where)s: invalid UTF-8 at byte %(byte)s"),
                where=where,
                byte=error.start + 1,
            )
        ) from None
    except RecursionError:
        raise UnreadableLog(
            Note(gettext_noop("%(where)s: nested too deeply"), where=where)
        ) from None
    except ValueError as error:
        raise UnreadableLog(
            Note(
                gettext_noop("%(where)s: malformed JSON (%(error)s)"),
                where=where,
                error=str(error),
            )
        ) from None


def _object(parent: dict, key: str, errors: list[Note], where: str = "") -> dict:
    """parent[key] when it is an object; {} when absent or null; else an error."""
    value = parent.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        errors.append(
            Note(
                gettext_noop("`%(key)s` is %(type)s, not an object."),
                key=where + key,
                type=type(value).__name__,
            )
        )
        return {}
    return value


def _completion(output: dict) -> str | None:
    """ModelOutput.completion, else the text parts of the first choice's message;
    None when the output is not shaped so."""
    if output.get("completion"):
        return str(output["completion"])
    choices = output.get("choices") or [{}]
    if not isinstance(choices, list) or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message") or {}
    if not isinstance(message, dict):
        return None
    content = message.get("content") or ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list) or not all(isinstance(p, dict) for p in content):
        return None
    return "".join(str(p.get("text", "")) for p in content if p.get("type") == "text")


# What zipfile raises on a damaged or unusual archive (an unknown compression,
# encryption, a truncated stream).
ZIP_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    NotImplementedError,
    RuntimeError,
)


class UnreadableLog(ValueError):
    """A part of the log that is not JSON, or not the JSON a log holds; its
    argument is a Note."""


def _reason(error: Exception) -> Note | str:
    """Why the log could not be read: the Note this module raised with, or the
    English of zipfile's own error."""
    reason = error.args[0] if error.args else ""
    return reason if isinstance(reason, Note) else str(error)


def check_expanded_sizes(archive: zipfile.ZipFile, names: list[str]) -> None:
    """Refuse, before anything is decompressed, members that would expand past
    IMPORT_MAX_MEMBER_BYTES each or IMPORT_MAX_EXPANDED_BYTES together (a few KB
    of zip can hold gigabytes). The sizes are the archive's own claims; a member
    that expands past its claim fails its read (zipfile and zstd stop there)."""
    member_cap = settings.IMPORT_MAX_MEMBER_BYTES
    total_cap = settings.IMPORT_MAX_EXPANDED_BYTES
    total = 0
    for name in names:
        size = archive.getinfo(name).file_size
        if size > member_cap:
            raise zipfile.BadZipFile(
                Note(
                    gettext_noop(
                        "%(name)s expands to %(size)s bytes; a member may expand to "
                        "at most %(cap)s (IMPORT_MAX_MEMBER_BYTES)"
                    ),
                    name=name,
                    size=f"{size:,}",
                    cap=f"{member_cap:,}",
                )
            )
        total += size
        if total > total_cap:
            raise zipfile.BadZipFile(
                Note(
                    gettext_noop(
                        "the members expand to more than %(cap)s bytes "
                        "(IMPORT_MAX_EXPANDED_BYTES)"
                    ),
                    cap=f"{total_cap:,}",
                )
            )


ZIP_ZSTD = 93
_LOCAL_HEADER = 30  # bytes before a local header's name and extra field


def read_member(archive: zipfile.ZipFile, data: bytes, name: str) -> bytes:
    """A member's bytes. Inspect writes .eval members zstd-compressed
    (inspect_ai/_util/zipfile.py), which zipfile reads only from Python 3.14 on, so
    such a member's raw bytes are taken from its local header and decompressed with
    pyarrow's zstd codec."""
    info = archive.getinfo(name)
    if info.compress_type != ZIP_ZSTD:
        return archive.read(name)
    start = info.header_offset
    name_length = int.from_bytes(data[start + 26 : start + 28], "little")
    extra_length = int.from_bytes(data[start + 28 : start + 30], "little")
    begin = start + _LOCAL_HEADER + name_length + extra_length
    raw = data[begin : begin + info.compress_size]
    try:
        content = pyarrow.decompress(
            raw, decompressed_size=info.file_size, codec="zstd", asbytes=True
        )
    except (OSError, ValueError) as error:
        raise zipfile.BadZipFile(f"{name}: {error}") from None
    if zlib.crc32(content) != info.CRC:
        raise zipfile.BadZipFile(
            Note(gettext_noop("%(name)s: the CRC does not match"), name=name)
        )
    return content
