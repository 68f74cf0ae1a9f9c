"""The Hugging Face release read by `datasets` itself, and the round trip back into
Assay: what the card declares and what the import restores."""

import io

import datasets
import pyarrow.parquet as pq
import pytest
import yaml

from benchmark.actions import do_create_benchmark
from benchmark.hf_release import (
    CARD_PATH,
    DATA_PATH,
    LICENSE_PATH,
    do_import_release,
    release_files,
    release_table,
    write_release_folder,
)
from benchmark.importing import do_import_items
from benchmark.models import Benchmark
from tests.benchmark.importing_helpers import format_item, jsonl


@pytest.fixture
def bilingual(db):
    """A zh/en benchmark with a description: the default would be four languages."""
    benchmark = do_create_benchmark(
        name="Fasteners: a bilingual set",
        slug="fasteners",
        version="2.1",
        target_languages=("en",),
        description="Bolt grades and standards, asked in Chinese and English.",
    )
    lines = [
        format_item(f"F-{n}", fmt)
        for n, fmt in enumerate(["open", "multiple_choice", "true_false"])
    ]
    for line in lines:
        line["renderings"] = {
            language: rendering
            for language, rendering in line["renderings"].items()
            if language in ("zh", "en")
        }
    do_import_items(io.BytesIO(jsonl(lines)), slug="fasteners")
    return benchmark


def card_header(files) -> dict:
    return yaml.safe_load(files[CARD_PATH].decode().split("---")[1])


def test_card_declares_features_and_the_license_hub_fields(bilingual):
    files, _report = release_files(bilingual)
    header = card_header(files)
    schema = pq.read_schema(io.BytesIO(files[DATA_PATH]))

    assert header["pretty_name"] == "Fasteners: a bilingual set"
    assert header["language"] == ["zh", "en"]
    assert header["license"] == "other"
    assert header["license_name"] == "unstated"
    assert header["license_link"] == LICENSE_PATH
    assert b"No license was stated" in files[LICENSE_PATH]
    features = datasets.Features.from_arrow_schema(schema)
    assert header["dataset_info"]["features"] == features._to_yaml_list()
    assert header["dataset_info"]["splits"] == [{"name": "train", "num_examples": 3}]
    assert "Bolt grades and standards" in files[CARD_PATH].decode()

    chosen, _report = release_files(bilingual, "cc-by-4.0")
    assert "license_name" not in card_header(chosen)
    assert LICENSE_PATH not in chosen


def test_import_restores_name_version_description_and_languages(bilingual, tmp_path):
    files, _report = release_files(bilingual)
    path = tmp_path / "release.parquet"
    path.write_bytes(files[DATA_PATH])

    do_import_release(path, slug="copy")

    copy = Benchmark.objects.get(slug="copy")
    assert (copy.name, copy.version, copy.description) == (
        bilingual.name,
        "2.1",
        bilingual.description,
    )
    assert copy.languages == ["zh", "en"]
    table, _stats = release_table(copy)
    assert table.equals(pq.read_table(path))


def test_datasets_loads_the_repository_as_the_card_declares(
    bilingual, tmp_path, monkeypatch
):
    """Round trip through `datasets` (load the repository, save it as Parquet,
    import that): the rows and every column come back. `datasets` writes its own
    schema metadata, so Assay's (name, version, description) is lost; the import
    reads the languages from the columns instead."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    files, _report = release_files(bilingual)
    repository = tmp_path / "repository"
    write_release_folder(files, repository)

    loaded = datasets.load_dataset(
        str(repository), split="train", cache_dir=str(tmp_path / "cache")
    )

    schema = pq.read_schema(io.BytesIO(files[DATA_PATH]))
    assert loaded.features == datasets.Features.from_arrow_schema(schema)
    assert loaded.num_rows == 3
    assert sorted(loaded["id"]) == ["F-0", "F-1", "F-2"]

    saved = tmp_path / "from-datasets.parquet"
    loaded.to_parquet(str(saved))
    do_import_release(saved, slug="via-datasets", name="Via datasets")

    copy = Benchmark.objects.get(slug="via-datasets")
    assert copy.languages == ["zh", "en"]
    assert (copy.name, copy.description) == ("Via datasets", "")
    table, _stats = release_table(copy)
    original = pq.read_table(io.BytesIO(files[DATA_PATH]))
    assert table.sort_by("id").equals(original.sort_by("id"))
