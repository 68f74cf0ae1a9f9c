"""README's "Scripting Assay" examples run as written against a live server: the
curl loop pages through every item, the Python script counts items per difficulty
and reads the leaderboard."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from api.actions import do_create_token
from tests.judging.factories import make_items, make_run


def examples() -> dict[str, str]:
    readme = (Path(settings.BASE_DIR) / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Scripting Assay", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(sh|python)\n(.*?)```", section, flags=re.S)
    return dict(blocks)


@pytest.fixture
def served(live_server, transactional_db, benchmark, personas):
    items = make_items(benchmark, 7)
    for item, difficulty in zip(items, ["easy"] * 3 + ["hard"] * 4, strict=True):
        item.difficulty = difficulty
        item.save(update_fields=["difficulty"])
    make_run(benchmark, items, [3] * 7, [False] * 7, model="scripted-model")
    _, token = do_create_token(personas["manager"], "readme")
    return {
        **os.environ,
        "ASSAY_URL": live_server.url,
        "ASSAY_TOKEN": token,
        "ASSAY_BENCHMARK": benchmark.slug,
    }, items


def test_the_readme_has_both_examples():
    assert set(examples()) == {"sh", "python"}


def test_the_curl_example_lists_every_item(served):
    env, items = served
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", examples()["sh"]],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [item.external_id for item in items]


def test_the_python_example_counts_and_reads_the_leaderboard(served):
    env, _ = served
    result = subprocess.run(
        [sys.executable, "-c", examples()["python"]],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "items per difficulty: {'easy': 3, 'hard': 4}" in result.stdout
    assert "top run: scripted-model" in result.stdout
