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


# Item formats. The examples are GB/T 3098.1-2010 and GB/T 4208-2017 facts, as in the
# rows above; en carries options and key points, ru and vi are left untranslated.
OPTIONS = {
    "zh": ["4.6 级", "8.8 级", "10.9 级", "12.9 级"],
    "en": ["Class 4.6", "Class 8.8", "Class 10.9", "Class 12.9"],
}
KEY_POINTS = {
    "zh": ["公称抗拉强度 800 MPa", "公称屈服强度 640 MPa"],
    "en": ["800 MPa nominal tensile strength", "640 MPa nominal yield strength"],
}
FORMAT_COLUMNS = [
    *COLUMNS,
    "item_format",
    "correct_options",
    "multiple_answers",
    "correct_answer",
    *(f"option_{letter}" for letter in "abcdefg"),
    *(f"key_point_{n}" for n in range(1, 6)),
    *(f"option_{letter}_en" for letter in "abcdefg"),
    *(f"key_point_{n}_en" for n in range(1, 6)),
]


def format_row(external_id: str, item_format: str, **overrides) -> dict:
    """An IndustryBench row of `item_format` with its answer key, options or key
    points in zh and en; ru and vi empty."""
    row = industrybench_row(
        external_id,
        question_ru="",
        answer_ru="",
        question_vi="",
        answer_vi="",
        item_format=item_format,
    )
    if item_format == "multiple_choice":
        row |= {
            "question": "公称抗拉强度 800 MPa、屈强比 0.8 的螺栓是哪一性能等级？",
            "answer": "",
            "question_en": "Which property class has 800 MPa and a yield ratio of 0.8?",
            "answer_en": "",
            "correct_options": "B",
            "multiple_answers": "false",
        }
        for language, suffix in (("zh", ""), ("en", "_en")):
            for letter, text in zip("abcd", OPTIONS[language], strict=True):
                row[f"option_{letter}{suffix}"] = text
    elif item_format == "true_false":
        row |= {
            "question": "IP67 中的第一位数字 6 表示尘密。",
            "answer": "",
            "question_en": "In IP67, the first digit 6 means dust-tight.",
            "answer_en": "",
            "correct_answer": "true",
        }
    elif item_format == "short_answer":
        row |= {
            "question": "8.8 级螺栓的公称抗拉强度和公称屈服强度是多少？",
            "answer": "800 MPa 和 640 MPa。",
            "question_en": "What are the nominal strengths of a class 8.8 bolt?",
            "answer_en": "800 MPa and 640 MPa.",
        }
        for language, suffix in (("zh", ""), ("en", "_en")):
            for n, text in enumerate(KEY_POINTS[language], start=1):
                row[f"key_point_{n}{suffix}"] = text
    row.update(overrides)
    return row


def format_item(external_id: str, item_format: str, **overrides) -> dict:
    """The generic JSONL counterpart of `format_row`."""
    row = format_row(external_id, item_format)
    item = generic_item(external_id, item_format=item_format)
    item["renderings"] = {
        "zh": {"question": row["question"], "answer": row["answer"]},
        "en": {"question": row["question_en"], "answer": row["answer_en"]},
    }
    if item_format == "multiple_choice":
        item |= {"correct_options": ["B"], "multiple_answers": False}
        for language in ("zh", "en"):
            item["renderings"][language]["options"] = OPTIONS[language]
    elif item_format == "true_false":
        item["correct_answer"] = True
    elif item_format == "short_answer":
        for language in ("zh", "en"):
            item["renderings"][language]["key_points"] = KEY_POINTS[language]
    item.update(overrides)
    return item
