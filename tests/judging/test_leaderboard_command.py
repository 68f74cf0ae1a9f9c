"""manage.py leaderboard prints every table as text, CSV, LaTeX or JSON."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from judging.leaderboard.building import TABLE_ORDER
from tests.judging.factories import make_items, make_run


@pytest.fixture
def runs(benchmark):
    items = make_items(benchmark, 30)
    return [
        make_run(benchmark, items, [3] * 30, [False] * 30, model="alpha"),
        make_run(benchmark, items, [2] * 30, [True] + [False] * 29, model="beta"),
        make_run(benchmark, items, [1] * 30, [False] * 30, model="beta", language="en"),
    ]


def run(*args) -> str:
    out = io.StringIO()
    call_command("leaderboard", *args, "--resamples", "500", stdout=out)
    return out.getvalue()


def test_text_lists_every_table(benchmark, runs):
    text = run("--benchmark", benchmark.slug)
    for title in (
        "Leaderboard (zh)",
        "Final (SV) by capability",
        "Final (SV) by industry",
        "by difficulty tercile",
        "Thinking vs non-thinking",
        "Final (SV) across languages",
        "Bootstrap 95% confidence intervals",
        "Paired differences",
    ):
        assert title in text
    leaderboard = text.split("Final (SV) by capability")[0]
    assert leaderboard.index("alpha") < leaderboard.index("beta")


def test_json_includes_slices_and_cis(benchmark, runs):
    data = json.loads(run("--benchmark", benchmark.slug, "--format", "json"))
    assert data["language"] == "zh" and data["languages"] == ["zh", "en"]
    assert set(data["tables"]) >= {
        "capability",
        "industry",
        "difficulty",
        "ci",
        "pairs",
    }
    beta = next(r for r in data["runs"] if r["model"] == "beta")
    assert beta["metrics"]["final_mean"] == pytest.approx((29 * 2) / 30)
    assert beta["metrics"]["sv_rate"] == pytest.approx(1 / 30)
    ci = data["tables"]["ci"]
    assert ci["columns"][-1] == "Half-width" and len(ci["rows"]) == 2
    assert data["bootstrap"] == {
        "resamples": 500,
        "seed": 0,
        "items": 30,
        "excluded_items": 0,
    }
    (multilingual,) = data["tables"]["multilingual"]["rows"]
    assert multilingual[0] == "beta"
    assert multilingual[1:] == pytest.approx([58 / 30, 1.0, 58 / 30 - 1], abs=1e-6)


def test_csv_latex_and_errors(benchmark, runs):
    csv_text = run(
        "--benchmark", benchmark.slug, "--format", "csv", "--table", "leaderboard"
    )
    assert csv_text.splitlines()[1].startswith("Rank,Model,Category,Final (SV)")
    latex = run("--benchmark", benchmark.slug, "--format", "latex", "--language", "en")
    assert latex.count("\\begin{table}") == len(TABLE_ORDER)
    # One file, one header naming its packages, and pdflatex-safe throughout.
    assert latex.count("% Needs") == 1 and latex.isascii()
    with pytest.raises(CommandError, match="No benchmark"):
        run("--benchmark", "nope")
    with pytest.raises(CommandError, match="No runs in language 'vi'"):
        run("--benchmark", benchmark.slug, "--language", "vi")
