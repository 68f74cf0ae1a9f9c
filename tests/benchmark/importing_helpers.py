"""Small builders for import files, shared by the import/export/page tests."""

import csv
import io
import json
from pathlib import Path

from benchmark.models import Benchmark, FinalLabel, Item, ItemEvent, Rendering

DATA = Path(__file__).parent / "data"

COLUMNS = [
    "id",
    "question",
    "answer",
    "question_en",
    "answer_en",
    "question_ru",
    "answer_ru",
    "question_vi",
    "answer_vi",
    "difficulty",
    "_format",
    "industry_primary",
    "capability",
    "knowledge_text",
    "domain",
]


def industrybench_row(external_id: str, **overrides) -> dict:
    row = {
        "id": external_id,
        "question": f"{external_id} 的公称压力是多少？",
        "answer": "PN16，即 1.6 MPa。",
        "question_en": f"What is the nominal pressure of {external_id}?",
        "answer_en": "PN16, i.e. 1.6 MPa.",
        "question_ru": f"Каково номинальное давление {external_id}?",
        "answer_ru": "PN16, т. е. 1,6 МПа.",
        "question_vi": f"Áp suất danh định của {external_id} là bao nhiêu?",
        "answer_vi": "PN16, tức 1,6 MPa.",
        "difficulty": "medium",
        "_format": "standard_qa",
        "industry_primary": "Machinery & Hardware",
        "capability": "Standards & Terminology",
        "knowledge_text": "GB/T 1048-2019 管道元件 公称压力的定义和选用。",
        "domain": "管道",
    }
    row.update(overrides)
    return row


def industrybench_csv(rows: list[dict], columns=COLUMNS) -> bytes:
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


def generic_item(external_id: str, **overrides) -> dict:
    item = {
        "id": external_id,
        "source_kind": "standard",
        "source_reference": "GB/T 3098.1-2010",
        "knowledge_text": "性能等级 8.8：公称抗拉强度 800 MPa。",
        "domain": "紧固件",
        "difficulty": "easy",
        "status": "active",
        "labels": {
            "capability": "standards_terminology",
            "industry": "machinery_hardware",
        },
        "renderings": {
            "zh": {"question": "8.8 级螺栓的抗拉强度？", "answer": "800 MPa。"},
            "en": {"question": "Tensile strength of class 8.8?", "answer": "800 MPa."},
            "ru": {"question": "Прочность класса 8.8?", "answer": "800 МПа."},
            "vi": {"question": "Độ bền kéo cấp 8.8?", "answer": "800 MPa."},
        },
    }
    item.update(overrides)
    return item


def jsonl(objects: list[dict]) -> bytes:
    return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objects).encode()


def table_counts() -> dict[str, int]:
    return {
        "benchmarks": Benchmark.objects.count(),
        "items": Item.objects.count(),
        "renderings": Rendering.objects.count(),
        "labels": FinalLabel.objects.count(),
        "events": ItemEvent.objects.count(),
    }
