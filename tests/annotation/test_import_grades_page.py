"""The campaign's grade import page: a Label Studio Export-button file whose
annotators are numeric ids goes through the mapping step; bad input changes
nothing."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from playwright.sync_api import expect

from annotation.models import GradingLabel
from tests.annotation.interop_helpers import (
    FIXTURES,
    LABEL_STUDIO_GRADES,
    campaign_for_fixtures,
    fixture,
    latest,
)


@pytest.fixture
def campaign(benchmark, personas):
    return campaign_for_fixtures(benchmark, personas)


def url(campaign) -> str:
    return f"/annotation/campaigns/{campaign.pk}/import/"


def upload(campaign, name="export-JSON.json"):
    return SimpleUploadedFile(name, fixture(campaign, f"label-studio/{name}"))


def test_ids_are_mapped_on_the_second_step(campaign, client_for):
    client = client_for("manager")

    first = client.post(
        url(campaign), {"tool": "label-studio", "file": upload(campaign)}
    )

    assert first.status_code == 200
    page = first.content.decode()
    assert "Label Studio user 1" in page and "Label Studio user 2" in page
    assert GradingLabel.objects.count() == 0
    token = first.context["token"]
    keys = [a["key"] for a in first.context["annotators"]]

    second = client.post(
        url(campaign),
        {"token": token, "key": keys, "user-0": "expert", "user-1": "reviewer"}
        | {"import": "1"},
    )

    assert second.status_code == 302
    assert latest(campaign) == LABEL_STUDIO_GRADES


def test_the_users_list_needs_no_mapping_step(campaign, client_for):
    users = SimpleUploadedFile(
        "users.json", (FIXTURES / "label-studio/users.json").read_bytes()
    )

    answer = client_for("manager").post(
        url(campaign),
        {
            "tool": "label-studio",
            "file": upload(campaign, "export-JSON_MIN.json"),
            "users_file": users,
        },
    )

    assert answer.status_code == 302
    assert latest(campaign) == LABEL_STUDIO_GRADES


def test_a_mapping_left_blank_is_refused_and_the_choices_stay(campaign, client_for):
    client = client_for("manager")
    first = client.post(
        url(campaign), {"tool": "label-studio", "file": upload(campaign)}
    )
    keys = [a["key"] for a in first.context["annotators"]]

    second = client.post(
        url(campaign),
        {"token": first.context["token"], "key": keys, "user-0": "expert"}
        | {"import": "1"},
    )

    assert second.status_code == 400
    assert "unknown annotator &#x27;Label Studio user 2&#x27;" in (
        second.content.decode()
    )
    assert [a["chosen"] for a in second.context["annotators"]] == ["expert", ""]
    assert GradingLabel.objects.count() == 0


def test_bad_input_changes_nothing(campaign, client_for):
    client = client_for("manager")

    no_file = client.post(url(campaign), {"tool": "label-studio"})
    not_json = client.post(
        url(campaign),
        {"tool": "argilla", "file": SimpleUploadedFile("r.json", b"{oops")},
    )
    expired = client.post(url(campaign), {"token": "gone", "import": "1"})

    assert no_file.status_code == 400
    assert not_json.status_code == 400 and "malformed JSON" in not_json.content.decode()
    assert expired.status_code == 302
    assert GradingLabel.objects.count() == 0
    assert client_for("expert").get(url(campaign)).status_code == 403


def test_a_rejected_file_is_explained_in_the_readers_language(campaign, client_for):
    """A Label Studio annotation naming no annotator, and a JSON file that is no
    list: the problems in Chinese for a Chinese reader, nothing written."""
    client = client_for("manager")
    no_annotator = (
        b'[{"id": 1, "data": {"assay_response_id": 1}, "annotations": [{"id": 1, '
        b'"result": [{"from_name": "score", "type": "choices", '
        b'"value": {"choices": ["3"]}}]}]}]'
    )
    pages = {
        language: [
            client.post(
                url(campaign),
                {"tool": tool, "file": SimpleUploadedFile("r.json", body)},
                HTTP_ACCEPT_LANGUAGE=language,
            ).content.decode()
            for tool, body in (("label-studio", no_annotator), ("argilla", b"{}"))
        ]
        for language in ("zh-hans", "en")
    }

    assert "没有用户 ID、电子邮件或用户名" in pages["zh-hans"][0]
    assert "no user id, e-mail or username" in pages["en"][0]
    assert "应为由任务或记录组成的 JSON 数组" in pages["zh-hans"][1]
    assert "expected a JSON array of tasks or records" in pages["en"][1]
    assert "no user id" not in pages["zh-hans"][0]
    assert GradingLabel.objects.count() == 0


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_manager_imports_a_label_studio_export_mapping_its_users(
    campaign, login, tmp_path
):
    export = tmp_path / "project-1-at-2026-11-27.json"
    export.write_bytes(fixture(campaign, "label-studio/export-JSON.json"))
    page = login("manager")
    page.goto(f"/annotation/campaigns/{campaign.pk}/")
    page.get_by_text("Label Studio…").click()
    expect(page.get_by_label("predictions only", exact=False)).to_be_visible()
    page.screenshot(path="/tmp/campaign_label_studio_export.png")
    page.get_by_role("link", name="Import grades…").click()

    page.get_by_label("Tool").select_option(label="Label Studio")
    page.get_by_label("Export file").set_input_files(str(export))
    page.get_by_role("button", name="Read the file").click()

    mapping = page.get_by_test_id("annotator-mapping")
    expect(mapping).to_contain_text("Label Studio user 1")
    page.get_by_label("Assay user for Label Studio user 1").select_option("expert")
    page.get_by_label("Assay user for Label Studio user 2").select_option("reviewer")
    page.screenshot(path="/tmp/import_grades_mapping.png", full_page=True)
    page.get_by_role("button", name="Import with this mapping").click()

    expect(
        page.get_by_text("5 grade(s) added, 0 corrected, 0 unchanged.")
    ).to_be_visible()
    page.screenshot(path="/tmp/import_grades_done.png", full_page=True)
    assert latest(campaign) == LABEL_STUDIO_GRADES
