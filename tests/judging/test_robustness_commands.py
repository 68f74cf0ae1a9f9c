"""generate_variants and robustness_report on the command line: the same action
and report as the pages, bad input refused with nothing changed."""

import io

import pytest
from django.core.management import CommandError, call_command

from benchmark.models import ItemVariant
from judging.robustness.models import Resource
from tests.judging.robustness_fixtures import MC_OPTIONS, make_replies, make_seed


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_generate_then_report_on_the_command_line(benchmark, tmp_path):
    mc = make_seed(
        benchmark,
        "MC-1",
        "USB插座长100 cm？",
        options=MC_OPTIONS,
        correct_options=["A"],
    )
    glossary = tmp_path / "resources.csv"
    glossary.write_text("kind,language,key,value\nsynonym,zh,USB,U盘\n")
    out = run(
        "generate_variants",
        "--benchmark",
        benchmark.slug,
        "--relations",
        "synonym,order",
        "--formats",
        "mc",
        "--resources",
        str(glossary),
    )
    assert "Saved 1 resource entry." in out and "2 new variants." in out
    assert "0 new variants." in run(
        "generate_variants", "--benchmark", benchmark.slug, "--relations", "order"
    )
    with pytest.raises(CommandError, match="No finished runs yet"):
        run("robustness_report", "--benchmark", benchmark.slug)

    variants = {v.relation: v for v in ItemVariant.objects.select_related("item")}
    moved = "ABCD"[variants["order"].option_map.index(0)]
    make_replies(
        benchmark,
        "model-x",
        {
            mc: "答案：A",
            variants["order"].item: f"答案：{moved}",
            variants["synonym"].item: "答案：C",
        },
    )
    csv = run(
        "robustness_report",
        "--benchmark",
        benchmark.slug,
        "--table",
        "correct-by-relation",
        "--format",
        "csv",
    )
    header, row = csv.splitlines()
    cells = dict(zip(header.split(","), row.split(","), strict=True))
    assert (cells["order"], cells["synonym"]) == ("1.0", "0.0")
    assert "model-x (zh)" in run("robustness_report", "--benchmark", benchmark.slug)


def test_bad_command_input_changes_nothing(benchmark, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("kind,language,key,value\nsynonym,xx,USB,U盘\n")
    with pytest.raises(CommandError, match="line 2, language"):
        run("generate_variants", "--benchmark", benchmark.slug, "--resources", str(bad))
    assert not Resource.objects.exists()
    with pytest.raises(CommandError, match="logic is written by an LLM"):
        run("generate_variants", "--benchmark", benchmark.slug, "--relations", "logic")
    with pytest.raises(CommandError, match="Unknown format"):
        run("generate_variants", "--benchmark", benchmark.slug, "--formats", "open")
    with pytest.raises(CommandError, match="No benchmark"):
        run("robustness_report", "--benchmark", "nope")
