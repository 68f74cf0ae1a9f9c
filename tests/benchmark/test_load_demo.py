import io

import pytest
from django.contrib.auth import authenticate
from django.core.management import CommandError, call_command

from benchmark.management.commands import load_demo
from benchmark.models import Benchmark, Item
from benchmark.roles import Role, has_role
from tests.benchmark.importing_helpers import DATA, generic_item, jsonl

SEEDED = []


def record_seed(benchmark):
    SEEDED.append(benchmark.slug)


def run_load_demo(items) -> str:
    stdout = io.StringIO()
    call_command("load_demo", "--items", str(items), stdout=stdout)
    return stdout.getvalue()


@pytest.mark.smoke
def test_load_demo_is_idempotent(db, monkeypatch):
    monkeypatch.setattr(
        load_demo, "DEMO_SEEDERS", ["tests.benchmark.test_load_demo.record_seed"]
    )
    SEEDED.clear()

    first = run_load_demo(DATA / "generic.jsonl")
    second = run_load_demo(DATA / "generic.jsonl")

    benchmark = Benchmark.objects.get(slug="industrybench-demo")
    assert benchmark.is_demo
    assert benchmark.name == "IndustryBench demo"
    assert Item.objects.filter(benchmark=benchmark).count() == 3
    assert "Loaded 3 demo items" in first
    assert "already loaded" in second
    for role in Role:
        assert f"{role.value} / assay-demo" in second
        user = authenticate(username=role.value, password="assay-demo")
        assert user is not None and has_role(user, role.value)
    assert SEEDED == ["industrybench-demo", "industrybench-demo"]


def test_load_demo_reports_a_bad_demo_file(tmp_path, db):
    path = tmp_path / "items.jsonl"
    path.write_bytes(jsonl([generic_item("A", difficulty="impossible")]))
    with pytest.raises(CommandError, match="line 1, difficulty"):
        run_load_demo(path)
    assert not Benchmark.objects.exists()


def test_load_demo_loads_the_shipped_demo_items(db):
    call_command("load_demo", stdout=io.StringIO())
    call_command("load_demo", stdout=io.StringIO())

    benchmark = Benchmark.objects.get(slug="industrybench-demo")
    items = Item.objects.filter(benchmark=benchmark)
    assert items.count() >= 40
    for item in items.prefetch_related("renderings"):
        assert {r.language for r in item.renderings.all()} == {"zh", "en", "ru", "vi"}
