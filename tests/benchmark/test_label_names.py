"""The paper's label names import (issue 13); labels match by code, name or alias,
forgivingly, and a value naming two labels is refused."""

import io
from importlib import import_module

import pytest
from django.apps import apps as django_apps

from benchmark.importing import do_import_items
from benchmark.models import FinalLabel, Item, Label
from benchmark.taxonomy import DEFAULT_TAXONOMY, fold_label
from benchmark.validation import ImportRejected
from tests.benchmark.importing_helpers import industrybench_csv, industrybench_row

PAPER_CAPABILITIES = [
    "Selection & Substitution",
    "Standards & Terminology",
    "Process Principles",
    "Safety & Compliance",
    "Quality & Metrology",
    "Fault Diagnosis",
    "Engineering Calculation",
]
PAPER_INDUSTRIES = [
    "Machinery & Hardware",
    "Chemical & Coatings",
    "Electronics & Sensors",
    "Electrical & Power",
    "Cross-Industry",
    "Metallurgy & Mining",
    "Energy & Storage",
    "Security & Fire Safety",
    "Packaging & Printing",
    "Textile & Leather",
]


def run(content: bytes):
    return do_import_items(io.BytesIO(content), slug="test-bench")


def final(external_id: str, dimension: str) -> str:
    return FinalLabel.objects.get(
        item__external_id=external_id, dimension__code=dimension
    ).label.code


def test_the_default_taxonomy_uses_the_papers_names():
    capability, industry = DEFAULT_TAXONOMY
    assert [label.name for label in capability.labels] == PAPER_CAPABILITIES
    assert [label.name for label in industry.labels] == PAPER_INDUSTRIES


@pytest.mark.smoke
def test_a_file_with_every_paper_label_imports(benchmark):
    rows = [
        industrybench_row(
            f"IB-{n:03d}",
            capability=PAPER_CAPABILITIES[n % 7],
            industry_primary=PAPER_INDUSTRIES[n % 10],
        )
        for n in range(70)
    ]
    assert run(industrybench_csv(rows)).created == 70
    assert final("IB-002", "capability") == "process_principles"
    assert final("IB-001", "industry") == "chemical_coatings"
    assert final("IB-004", "industry") == "cross_industry"
    assert final("IB-006", "industry") == "energy_storage"


@pytest.mark.parametrize(
    ("capability", "industry"),
    [
        ("process_principles", "energy_storage"),  # codes
        ("Process & Principles", "Energy Storage"),  # Assay's earlier names
        ("process and principles", "ENERGY  &  STORAGE"),  # case, spacing, and/&
        ("工艺原理", "能源与储能"),  # Chinese aliases
        ("  Process_Principles ", "energy&storage"),
        ("Ｐｒｏｃｅｓｓ Ｐｒｉｎｃｉｐｌｅｓ", "Energy and Storage"),  # full-width
    ],
)
def test_labels_match_forgivingly(benchmark, capability, industry):
    row = industrybench_row("IB-1", capability=capability, industry_primary=industry)
    run(industrybench_csv([row]))
    assert final("IB-1", "capability") == "process_principles"
    assert final("IB-1", "industry") == "energy_storage"


def test_chemicals_is_an_alias_not_a_fold(benchmark):
    assert fold_label("Chemicals & Coatings") != fold_label("Chemical & Coatings")
    row = industrybench_row("IB-1", industry_primary="Chemicals and Coatings")
    run(industrybench_csv([row]))
    assert final("IB-1", "industry") == "chemical_coatings"


def test_a_value_naming_two_labels_is_refused_and_nothing_written(benchmark):
    label = Label.objects.get(dimension__benchmark=benchmark, code="fault_diagnosis")
    label.aliases = ["Process Principles"]
    label.save(update_fields=["aliases"])
    rows = [
        industrybench_row("IB-1"),
        industrybench_row("IB-2", capability="process principles"),
    ]
    with pytest.raises(ImportRejected) as caught:
        run(industrybench_csv(rows))
    [problem] = caught.value.problems
    assert (problem.line, problem.field) == (3, "capability")
    assert "ambiguous" in problem.message
    assert "Fault Diagnosis (fault_diagnosis)" in problem.message
    assert "Process Principles (process_principles)" in problem.message
    assert not Item.objects.exists()


def test_the_migration_renames_earlier_default_names_only(benchmark):
    migration = import_module("benchmark.migrations.0007_paper_label_names")
    labels = Label.objects.filter(dimension__benchmark=benchmark)
    labels.filter(code="process_principles").update(
        name="Process & Principles", aliases=[]
    )
    labels.filter(code="energy_storage").update(name="Batteries (ours)", aliases=[])
    migration.to_paper_names(django_apps, None)
    process = labels.get(code="process_principles")
    assert process.name == "Process Principles"
    assert "工艺原理" in process.aliases
    assert labels.get(code="energy_storage").name == "Batteries (ours)"
    migration.to_earlier_names(django_apps, None)
    assert labels.get(code="process_principles").name == "Process & Principles"
