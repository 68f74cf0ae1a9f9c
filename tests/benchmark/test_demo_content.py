"""The hand-written demo files: shape, coverage and language checks.

Read with plain json so the file is checked independently of the importer.
"""

import json
import re
from collections import Counter
from pathlib import Path

import pytest

DEMO_DIR = Path(__file__).resolve().parents[2] / "benchmark" / "demo"
ITEMS_FILE = DEMO_DIR / "items.jsonl"
FLAWED_FILE = DEMO_DIR / "flawed_translations.jsonl"

LANGUAGES = ("zh", "en", "ru", "vi")
CAPABILITIES = {
    "selection_substitution",
    "standards_terminology",
    "process_principles",
    "safety_compliance",
    "quality_metrology",
    "fault_diagnosis",
    "engineering_calculation",
}
INDUSTRIES = {
    "machinery_hardware",
    "chemical_coatings",
    "electronics_sensors",
    "electrical_power",
    "cross_industry",
    "metallurgy_mining",
    "energy_storage",
    "security_fire_safety",
    "packaging_printing",
    "textile_leather",
}
ITEM_KEYS = {
    "id",
    "source_kind",
    "source_reference",
    "knowledge_text",
    "domain",
    "difficulty",
    "status",
    "labels",
    "renderings",
}
HAN = re.compile(r"[\u4e00-\u9fff]")
CYRILLIC = re.compile(r"[\u0400-\u04ff]")
# Letters only Vietnamese uses among these four languages (ơ, ư, đ and tone marks).
VIETNAMESE = re.compile(r"[ơưđĐƠƯạảấầẩẫậắằẳẵặẹẻẽếềểễệịỉọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]")


def read_jsonl(path: Path) -> list[dict]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def items() -> list[dict]:
    return read_jsonl(ITEMS_FILE)


@pytest.mark.smoke
def test_every_line_is_a_json_object_with_the_agreed_keys():
    lines = ITEMS_FILE.read_text(encoding="utf-8").splitlines()
    assert len(lines) >= 48
    for number, line in enumerate(lines, start=1):
        item = json.loads(line)
        assert set(item) == ITEM_KEYS, f"line {number}"


@pytest.mark.smoke
def test_ids_are_unique(items):
    ids = [item["id"] for item in items]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"IBD-\d{3}", item_id) for item_id in ids)


@pytest.mark.smoke
def test_fields_have_allowed_values(items):
    for item in items:
        assert item["source_kind"] in {"standard", "product", "other"}, item["id"]
        assert item["difficulty"] in {"easy", "medium", "hard"}, item["id"]
        assert item["status"] == "active", item["id"]
        assert item["source_reference"].strip(), item["id"]
        assert item["domain"].strip(), item["id"]
        assert HAN.search(item["knowledge_text"]), item["id"]
        assert set(item["labels"]) == {"capability", "industry"}, item["id"]
        assert item["labels"]["capability"] in CAPABILITIES, item["id"]
        assert item["labels"]["industry"] in INDUSTRIES, item["id"]


@pytest.mark.smoke
def test_all_four_languages_are_present_and_in_their_script(items):
    scripts = {"zh": HAN, "ru": CYRILLIC, "vi": VIETNAMESE}
    for item in items:
        assert set(item["renderings"]) == set(LANGUAGES), item["id"]
        for language in LANGUAGES:
            rendering = item["renderings"][language]
            for field in ("question", "answer"):
                text = rendering[field]
                assert text.strip(), (item["id"], language, field)
                if language in scripts:
                    assert scripts[language].search(text), (item["id"], language)
                else:
                    assert not HAN.search(text), (item["id"], language)


@pytest.mark.smoke
def test_coverage_of_capabilities_industries_difficulties(items):
    capabilities = Counter(item["labels"]["capability"] for item in items)
    industries = Counter(item["labels"]["industry"] for item in items)
    difficulties = Counter(item["difficulty"] for item in items)
    kinds = Counter(item["source_kind"] for item in items)
    assert set(capabilities) == CAPABILITIES
    assert min(capabilities.values()) >= 4, capabilities
    assert set(industries) == INDUSTRIES
    assert min(industries.values()) >= 3, industries
    assert set(difficulties) == {"easy", "medium", "hard"}
    assert kinds["standard"] > kinds["product"] > 0, kinds


FLAWED_KEYS = {
    "id",
    "language",
    "question",
    "answer",
    "flaw",
    "faithfulness_score",
    "reason",
}


@pytest.mark.smoke
def test_flawed_translations_are_altered_renderings_of_existing_items(items):
    by_id = {item["id"]: item for item in items}
    flawed = read_jsonl(FLAWED_FILE)
    assert len(flawed) >= 6
    assert len({(entry["id"], entry["language"]) for entry in flawed}) == len(flawed)
    for entry in flawed:
        assert set(entry) == FLAWED_KEYS, entry["id"]
        assert entry["id"] in by_id, entry["id"]
        assert entry["language"] in {"en", "ru", "vi"}, entry["id"]
        assert entry["question"].strip() and entry["answer"].strip(), entry["id"]
        assert entry["flaw"].strip() and entry["reason"].strip(), entry["id"]
        assert entry["faithfulness_score"] in {2, 3, 4}, entry["id"]
        faithful = by_id[entry["id"]]["renderings"][entry["language"]]
        flawed_pair = (entry["question"], entry["answer"])
        assert flawed_pair != (faithful["question"], faithful["answer"]), entry["id"]
