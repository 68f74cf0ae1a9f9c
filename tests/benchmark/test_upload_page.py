import csv
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from playwright.sync_api import expect

from benchmark.models import Benchmark, Item
from tests.benchmark.importing_helpers import (
    DATA,
    industrybench_csv,
    industrybench_row,
    table_counts,
)

IMPORT_URL = reverse("benchmark:import_items")


def upload(client, content: bytes, name="items.csv", **fields):
    data = {"file": SimpleUploadedFile(name, content), "layout": "auto", **fields}
    return client.post(IMPORT_URL, data)


@pytest.mark.smoke
def test_manager_imports_a_file_and_sees_a_summary(client_for, benchmark):
    response = upload(
        client_for("manager"),
        (DATA / "industrybench.csv").read_bytes(),
        benchmark="test-bench",
    )

    assert response.status_code == 200
    content = response.content.decode()
    assert "Imported items.csv" in content
    assert "Benchmark test-bench: 3 created, 0 updated, 0 unchanged" in content
    assert Item.objects.filter(benchmark=benchmark).count() == 3
    rendering = Item.objects.get(external_id="IB-0001").renderings.get(language="en")
    assert rendering.created_by.username == "manager"


def test_upload_creates_a_new_benchmark(client_for, db):
    response = upload(
        client_for("manager"),
        (DATA / "generic.jsonl").read_bytes(),
        name="demo.jsonl",
        new_slug="pipes",
        new_name="Pipe fittings",
    )

    assert response.status_code == 200
    assert Benchmark.objects.get(slug="pipes").name == "Pipe fittings"
    assert Item.objects.filter(benchmark__slug="pipes").count() == 3


@pytest.mark.smoke
def test_rejected_upload_lists_every_problem_and_writes_nothing(client_for, benchmark):
    rows = [
        industrybench_row("A"),
        industrybench_row("B", difficulty="extreme"),
        industrybench_row("A", capability="Telepathy"),
    ]
    before = table_counts()

    response = upload(
        client_for("manager"), industrybench_csv(rows), benchmark="test-bench"
    )

    assert response.status_code == 400
    content = response.content.decode()
    assert "items.csv was rejected — nothing was imported" in content
    assert "3 problems" in content
    for text in [
        "&#x27;extreme&#x27; is not one of easy, hard, medium",
        "duplicate id &#x27;A&#x27; (first on line 2)",
        "unknown capability label &#x27;Telepathy&#x27;",
    ]:
        assert text in content
    assert table_counts() == before


def test_update_checkbox_updates_existing_items(client_for, benchmark):
    client = client_for("manager")
    upload(client, industrybench_csv([industrybench_row("A")]), benchmark="test-bench")
    changed = industrybench_csv([industrybench_row("A", answer="PN16。")])

    refused = upload(client, changed, benchmark="test-bench")
    accepted = upload(client, changed, benchmark="test-bench", update="on")

    assert refused.status_code == 400
    assert "“Update items whose id already exists” ticked" in (refused.content.decode())
    assert accepted.status_code == 200
    assert "1 new rendering version." in accepted.content.decode()
    zh = Item.objects.get().renderings.get(language="zh", is_current=True)
    assert (zh.version, zh.answer) == (2, "PN16。")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "Give a slug for the new benchmark."),
        ({"new_slug": "test-bench"}, "A benchmark with this slug exists; pick it."),
        (
            {"benchmark": "test-bench", "new_slug": "other"},
            "Choose an existing benchmark or give a new slug, not both.",
        ),
    ],
)
def test_form_problems_are_shown(client_for, benchmark, fields, message):
    response = upload(
        client_for("manager"), industrybench_csv([industrybench_row("A")]), **fields
    )
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Item.objects.exists()


@pytest.mark.parametrize("persona", ["expert", "adjudicator", "reviewer", "outsider"])
def test_other_roles_get_403(client_for, benchmark, persona):
    client = client_for(persona)
    assert client.get(IMPORT_URL).status_code == 403
    response = upload(client, industrybench_csv([industrybench_row("A")]))
    assert response.status_code == 403
    assert client.get(reverse("benchmark:export_items")).status_code == 403
    download = reverse("benchmark:export_download", args=["test-bench", "csv"])
    assert client.get(download).status_code == 403
    assert not Item.objects.exists()


def test_nav_links_only_for_managers(client_for, benchmark):
    manager = client_for("manager").get(reverse("benchmark:home")).content.decode()
    expert = client_for("expert").get(reverse("benchmark:home")).content.decode()
    assert IMPORT_URL in manager and IMPORT_URL not in expert


def test_export_page_and_downloads(client_for, benchmark):
    client = client_for("manager")
    upload(
        client,
        industrybench_csv([industrybench_row("A"), industrybench_row("B")]),
        benchmark="test-bench",
    )
    Item.objects.get(external_id="B").renderings.filter(language="vi").update(
        review_status="pending"
    )

    page = client.get(reverse("benchmark:export_items")).content.decode()
    assert "vi: 1" in page and "en: 0" in page

    csv_response = client.get(
        reverse("benchmark:export_download", args=["test-bench", "csv"])
    )
    assert (
        csv_response["Content-Disposition"] == 'attachment; filename="test-bench.csv"'
    )
    content = b"".join(csv_response.streaming_content)
    assert content.startswith("\ufeff".encode())  # Excel reads it as UTF-8
    text = content.decode("utf-8-sig")
    assert [row["id"] for row in csv.DictReader(io.StringIO(text))] == ["A", "B"]

    release = client.get(
        reverse("benchmark:export_download", args=["test-bench", "jsonl"]),
        {"release": "1"},
    )
    assert release["Content-Disposition"] == (
        'attachment; filename="test-bench-release.jsonl"'
    )
    lines = [
        json.loads(line) for line in b"".join(release.streaming_content).splitlines()
    ]
    assert [list(line["renderings"]) for line in lines] == [
        ["zh", "en", "ru", "vi"],
        ["zh", "en", "ru"],
    ]
    missing = client.get(reverse("benchmark:export_download", args=["nope", "csv"]))
    assert missing.status_code == 404
    bad_format = reverse("benchmark:export_download", args=["test-bench", "xml"])
    assert client.get(bad_format).status_code == 404


@pytest.mark.browser
def test_manager_uploads_in_the_browser(
    transactional_db, benchmark, personas, login, page, tmp_path
):
    bad = tmp_path / "bad.csv"
    bad.write_bytes(
        industrybench_csv(
            [
                industrybench_row("A"),
                industrybench_row("B", difficulty="extreme", capability="Telepathy"),
                industrybench_row("A", question=""),
            ]
        )
    )
    login("manager")
    page.get_by_role("link", name="Import", exact=True).click()
    page.get_by_label("File").set_input_files(str(bad))
    page.get_by_label("Benchmark", exact=True).select_option("test-bench")
    page.get_by_role("button", name="Import").click()

    problems = page.locator("#import-problems")
    expect(problems).to_contain_text("bad.csv was rejected — nothing was imported")
    expect(problems.locator("tbody tr")).to_have_count(4)
    expect(problems).to_contain_text("unknown capability label 'Telepathy'")
    page.screenshot(path="/tmp/import_rejected.png", full_page=True)
    assert not Item.objects.exists()

    page.get_by_label("File").set_input_files(str(DATA / "industrybench.csv"))
    page.get_by_label("Benchmark", exact=True).select_option("test-bench")
    page.get_by_role("button", name="Import").click()
    expect(page.locator("#import-summary")).to_contain_text("3 created")
    page.screenshot(path="/tmp/import_summary.png", full_page=True)

    page.get_by_role("link", name="Export", exact=True).click()
    row = page.locator("tr[data-benchmark=test-bench]")
    expect(row).to_contain_text("en: 1")
    with page.expect_download() as download_info:
        row.get_by_role("link", name="Release JSONL").click()
    download = download_info.value
    assert download.suggested_filename == "test-bench-release.jsonl"
    lines = open(download.path(), encoding="utf-8").read().splitlines()
    assert [json.loads(line)["id"] for line in lines] == [
        "IB-0001",
        "IB-0002",
        "IB-0003",
    ]
    page.screenshot(path="/tmp/export_page.png", full_page=True)
