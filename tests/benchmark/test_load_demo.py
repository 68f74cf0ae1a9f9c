import io

import pytest
from django.contrib.auth import authenticate
from django.core.management import CommandError, call_command

from benchmark.management.commands import load_demo
from benchmark.models import Benchmark, Item
from benchmark.roles import Role, has_role
from tests.benchmark.importing_helpers import DATA, generic_item, jsonl
from tests.signing_in import sign_in_request

SEEDED = []


def record_seed(benchmark):
    SEEDED.append(benchmark.slug)


def run_load_demo(items) -> str:
    stdout = io.StringIO()
    call_command(
        "load_demo", "--allow-without-debug", "--items", str(items), stdout=stdout
    )
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
        assert f"{role.value} / assay-demo" in first
        assert f"{role.value} / (unchanged)" in second
        user = authenticate(
            sign_in_request(), username=role.value, password="assay-demo"
        )
        assert user is not None and has_role(user, role.value)
    assert SEEDED == ["industrybench-demo", "industrybench-demo"]


def test_load_demo_reports_a_bad_demo_file(tmp_path, db):
    path = tmp_path / "items.jsonl"
    path.write_bytes(jsonl([generic_item("A", difficulty="impossible")]))
    with pytest.raises(CommandError, match="line 1, difficulty"):
        run_load_demo(path)
    assert not Benchmark.objects.exists()


def test_load_demo_loads_the_shipped_demo_items(db):
    call_command("load_demo", "--allow-without-debug", stdout=io.StringIO())
    call_command("load_demo", "--allow-without-debug", stdout=io.StringIO())

    benchmark = Benchmark.objects.get(slug="industrybench-demo")
    items = Item.objects.filter(benchmark=benchmark)
    assert items.count() >= 40
    for item in items.prefetch_related("renderings"):
        assert {r.language for r in item.renderings.all()} == {"zh", "en", "ru", "vi"}


def test_load_demo_refuses_without_debug(db, settings):
    settings.DEBUG = False
    with pytest.raises(CommandError, match="only with DEBUG=1"):
        call_command("load_demo", stdout=io.StringIO())
    assert not Benchmark.objects.exists()


def test_load_demo_keeps_changed_passwords(db, monkeypatch):
    from django.contrib.auth import authenticate, get_user_model

    monkeypatch.setattr(load_demo, "DEMO_SEEDERS", [])
    run_load_demo(DATA / "generic.jsonl")
    manager = get_user_model().objects.get(username="manager")
    manager.set_password("a-private-password")
    manager.save(update_fields=["password"])
    output = run_load_demo(DATA / "generic.jsonl")
    assert "manager / (unchanged)" in output
    assert authenticate(
        sign_in_request(), username="manager", password="a-private-password"
    )
