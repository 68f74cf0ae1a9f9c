"""Malformed and oversized Inspect logs through `import_run --format inspect`: each
is refused with a message naming what is wrong, never a traceback, and nothing is
imported (docs/BAD_INPUT.md)."""

import io
import json
import zipfile

import pytest
from django.core.management import CommandError, call_command

from judging.evaluation.models import EvaluationRun
from tests.judging.factories import make_items
from tests.judging.test_inspect_log import zstd_zip

EVAL = {"task": "t", "model": "m", "created": "2025-01-01T00:00:00+00:00"}
SAMPLE = {
    "id": "item-000",
    "epoch": 1,
    "input": "q",
    "target": "a",
    "output": {"completion": "an answer"},
    "scores": {"rubric": {"value": 2, "explanation": "ok"}},
    "metadata": {"safety_violation": False},
}


def import_file(tmp_path, data: bytes, name: str) -> str:
    """The command's error, or "" when it imported."""
    path = tmp_path / name
    path.write_bytes(data)
    try:
        call_command(
            "import_run",
            str(path),
            "--benchmark",
            "test-bench",
            "--model",
            "m",
            "--format",
            "inspect",
        )
    except CommandError as error:
        return str(error)
    return ""


def json_log(sample: dict, **log) -> bytes:
    return json.dumps({"eval": EVAL, "samples": [sample], **log}).encode()


def eval_zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return out.getvalue()


def good_members() -> dict[str, bytes]:
    return {
        "header.json": json.dumps({"version": 2, "eval": EVAL}).encode(),
        "samples/item-000_epoch_1.json": json.dumps(SAMPLE).encode(),
    }


DEEP = b"[" * 100_000 + b"]" * 100_000


def malformed() -> list[tuple[str, bytes, str, str]]:
    """(case, file, name, what the message says)."""
    header_list = {**good_members(), "header.json": b"[]"}
    header_eval_text = {**good_members(), "header.json": b'{"eval": "x"}'}
    deep_sample = {**good_members(), "samples/item-000_epoch_1.json": DEEP}
    return [
        (
            "deep json",
            b'{"eval": {"task": "t"}, "samples": [' + DEEP + b"]}",
            "log.json",
            "the log: nested too deeply",
        ),
        (
            "deep member",
            eval_zip(deep_sample),
            "log.eval",
            "samples/item-000_epoch_1.json: nested too deeply",
        ),
        ("header []", eval_zip(header_list), "log.eval", "no `eval` spec"),
        ("header eval text", eval_zip(header_eval_text), "log.eval", "no `eval` spec"),
        ("eval text", json_log(SAMPLE, eval="x"), "log.json", "no `eval` spec"),
        (
            "error text",
            json_log({**SAMPLE, "error": "boom"}),
            "log.json",
            "the sample ended in an error: boom",
        ),
        (
            "output text",
            json_log({**SAMPLE, "output": "an answer"}),
            "log.json",
            "`output` is str, not an object.",
        ),
        (
            "choices text",
            json_log({**SAMPLE, "output": {"choices": "x"}}),
            "log.json",
            "`output` holds no completion text",
        ),
        (
            "metadata list",
            json_log({**SAMPLE, "metadata": ["safety_violation"]}),
            "log.json",
            "`metadata` is list, not an object.",
        ),
        (
            "rubric list",
            json_log({**SAMPLE, "scores": {"rubric": [2]}}),
            "log.json",
            "`scores.rubric` is list, not an object.",
        ),
        (
            "scores list",
            json_log({**SAMPLE, "scores": [2]}),
            "log.json",
            "`scores` is list, not an object.",
        ),
        (
            "key twice",
            b'{"eval": {"task": "t"}, "eval": {"task": "u"}, "samples": []}',
            "log.json",
            'the key "eval" appears twice in one object',
        ),
        (
            "not utf-8",
            b'{"eval": "\xff"}',
            "log.json",
            "the log: invalid UTF-8 at byte 11",
        ),
        ("not a zip", b"PK\x03\x04 broken", "log.eval", "not a readable Inspect"),
    ]


@pytest.mark.parametrize(
    ("data", "name", "message"),
    [case[1:] for case in malformed()],
    ids=[case[0] for case in malformed()],
)
def test_a_malformed_log_is_refused_with_the_reason(
    benchmark, tmp_path, data, name, message
):
    make_items(benchmark, 1, languages=("zh",))
    error = import_file(tmp_path, data, name)
    assert "was rejected; nothing was imported" in error
    assert message in error
    assert not EvaluationRun.objects.exists()


def test_a_well_formed_log_of_the_same_shape_imports(benchmark, tmp_path):
    make_items(benchmark, 1, languages=("zh",))
    assert import_file(tmp_path, eval_zip(good_members()), "log.eval") == ""
    assert import_file(tmp_path, json_log(SAMPLE), "log.json") == ""
    assert EvaluationRun.objects.count() == 2


def bomb(settings, zstd: bool) -> bytes:
    """A sample member padded with 3 MB of spaces: a few KB compressed."""
    members = good_members()
    members["samples/item-000_epoch_1.json"] = json.dumps(
        {**SAMPLE, "padding": " " * 3_000_000}
    ).encode()
    data = zstd_zip(members) if zstd else eval_zip(members)
    assert len(data) < 20_000
    return data


@pytest.mark.parametrize("zstd", [False, True], ids=["deflate", "zstd"])
def test_a_member_expanding_past_the_cap_is_refused_unread(
    benchmark, tmp_path, settings, zstd
):
    make_items(benchmark, 1, languages=("zh",))
    settings.IMPORT_MAX_MEMBER_BYTES = 2_000_000
    error = import_file(tmp_path, bomb(settings, zstd), "log.eval")
    assert "samples/item-000_epoch_1.json expands to 3,000," in error
    assert "at most 2,000,000 (IMPORT_MAX_MEMBER_BYTES)" in error
    assert not EvaluationRun.objects.exists()


def test_members_expanding_past_the_total_cap_are_refused(
    benchmark, tmp_path, settings
):
    make_items(benchmark, 2, languages=("zh",))
    settings.IMPORT_MAX_EXPANDED_BYTES = 2_000_000
    members = good_members()
    for n in range(2):
        members[f"samples/item-00{n}_epoch_1.json"] = json.dumps(
            {**SAMPLE, "id": f"item-00{n}", "padding": " " * 1_500_000}
        ).encode()
    error = import_file(tmp_path, eval_zip(members), "log.eval")
    assert "expand to more than 2,000,000 bytes (IMPORT_MAX_EXPANDED_BYTES)" in error
    assert not EvaluationRun.objects.exists()
