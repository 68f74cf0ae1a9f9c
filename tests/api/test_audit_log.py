"""The audit log (#16): who changed endpoints, prompt templates, campaigns, the
taxonomy, roles and API tokens, before → after; sign-ins and failed sign-ins (axes'
records); API token use at most once a minute; the managers' page and its CSV."""

from datetime import timedelta

import pytest
from auditlog.context import set_actor
from auditlog.models import LogEntry
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Campaign
from api.actions import do_create_token, do_use_token
from api.audit_log import AuditFilter, entry_keys, load_entries
from api.models import ApiToken
from benchmark.models import Label
from benchmark.roles import Role
from judging.llm.models import Endpoint, PromptTemplate
from tests.api.helpers import BASE
from tests.conftest import PASSWORD


def entries(**filters):
    return load_entries(entry_keys(AuditFilter(**filters)))


def latest(model, action=LogEntry.Action.UPDATE) -> LogEntry:
    return LogEntry.objects.get_for_model(model).filter(action=action).latest("pk")


def test_changes_to_each_audited_model_keep_actor_and_before_after(personas, benchmark):
    manager = personas["manager"]
    with set_actor(manager):
        endpoint = Endpoint.objects.create(
            name="deepseek",
            base_url="https://api.example.com/v1",
            model="m-1",
            api_key_env="DEEPSEEK_API_KEY",
        )
        endpoint.model = "m-2"
        endpoint.save()
        template = PromptTemplate.objects.create(
            name="label", purpose=PromptTemplate.Purpose.LABELLING, text="old"
        )
        template.text = "new"
        template.save()
        campaign = Campaign.objects.create(
            benchmark=benchmark, name="Round 1", kind=Campaign.Kind.GRADING
        )
        campaign.name = "Round 2"
        campaign.save()
        campaign.assignees.add(personas["expert"])
        label = Label.objects.filter(dimension__benchmark=benchmark).first()
        old_name = label.name
        label.name = "Renamed"
        label.save()

    for model, field, before, after in [
        (Endpoint, "model", "m-1", "m-2"),
        (PromptTemplate, "text", "old", "new"),
        (Label, "name", old_name, "Renamed"),
    ]:
        entry = latest(model)
        assert entry.actor == manager
        assert entry.changes_dict[field] == [before, after]
    renamed, assigned = LogEntry.objects.get_for_object(campaign).order_by("-pk")[:2]
    assert assigned.changes_dict["name"] == ["Round 1", "Round 2"]
    assert renamed.changes_dict["assignees"]["objects"] == ["expert"]
    assert renamed.actor == manager


def test_a_role_change_is_recorded_and_the_password_never(personas):
    expert = personas["expert"]
    with set_actor(personas["manager"]):
        expert.groups.add(personas["manager"].groups.get(name=Role.MANAGER))
        expert.set_password("another-password-9")
        expert.save()
    [row] = [e for e in entries(kind="auth.user") if e.what == "expert"][:1]
    assert row.who == "manager"
    assert row.changes == ["groups: + manager"]
    logged = " ".join(str(e.changes) for e in LogEntry.objects.all())
    assert "password" not in logged and expert.password not in logged


def test_tokens_made_and_revoked_are_recorded_without_their_digest(client_for):
    client = client_for("expert")
    client.post(reverse("api:tokens"), {"name": "nightly"})
    token = ApiToken.objects.get(name="nightly")
    client.post(reverse("api:revoke_token", args=[token.pk]))
    created = latest(ApiToken, LogEntry.Action.CREATE)
    revoked = latest(ApiToken)
    assert created.actor.username == revoked.actor.username == "expert"
    assert revoked.changes_dict["revoked_at"][0] == "None"
    assert "digest" not in created.changes_dict
    assert token.digest not in str(
        LogEntry.objects.values_list("changes", "serialized_data")
    )


def test_token_use_is_logged_at_most_once_a_minute(personas):
    user = personas["expert"]
    token, text = do_create_token(user, "script")
    client = Client(headers={"Authorization": f"Bearer {text}"})
    for _ in range(5):
        assert client.get(f"{BASE}/endpoints").status_code in (200, 403)
    used = LogEntry.objects.get_for_object(token).filter(action=LogEntry.Action.ACCESS)
    assert used.count() == 1
    assert used.get().actor == user
    ApiToken.objects.filter(pk=token.pk).update(
        last_used_at=timezone.now() - timedelta(minutes=1, seconds=1)
    )
    do_use_token(text)
    do_use_token(text)
    assert used.count() == 2
    assert [e.action for e in entries(kind="api.apitoken")][:2] == ["used", "used"]


def test_sign_ins_and_failed_sign_ins_appear(personas):
    client = Client()
    client.post(reverse("login"), {"username": "expert", "password": "wrong"})
    client.post(reverse("login"), {"username": "expert", "password": PASSWORD})
    client.post(reverse("login"), {"username": "expert", "password": "wrong-again"})
    rows = entries(actor="EXPERT")
    assert [(r.kind, r.action) for r in rows] == [
        ("Failed sign-in", "failed"),
        ("Sign-in", "signed in"),
        ("Failed sign-in", "failed"),
    ]
    assert {r.who for r in rows} == {"expert"}
    assert [r.kind for r in entries(kind="login")] == ["Sign-in"]


@pytest.fixture
def many_entries(personas):
    with set_actor(personas["manager"]):
        for n in range(60):
            PromptTemplate.objects.create(
                name=f"t-{n}", purpose=PromptTemplate.Purpose.LABELLING, text="x"
            )
    with set_actor(personas["expert"]):
        PromptTemplate.objects.create(
            name="by-expert", purpose=PromptTemplate.Purpose.LABELLING, text="y"
        )


def test_the_page_filters_and_pages(
    client_for, many_entries, django_assert_max_num_queries
):
    client = client_for("manager")
    url = reverse("api:audit_log")
    with django_assert_max_num_queries(12):
        first = client.get(url, {"kind": "judging.prompttemplate"})
    assert first.status_code == 200
    assert first.context["page"].paginator.count == 61
    assert len(first.context["entries"]) == 50
    assert first.context["entries"][0].what.startswith("by-expert")
    second = client.get(url, {"kind": "judging.prompttemplate", "page": 2})
    assert len(second.context["entries"]) == 11
    assert "kind=judging.prompttemplate&amp;page=1" in second.content.decode()
    by_expert = client.get(url, {"actor": "expert"})
    assert [e.what for e in by_expert.context["entries"]][0].startswith("by-expert")
    assert all(e.who == "expert" for e in by_expert.context["entries"])
    today = timezone.localdate()
    later = client.get(url, {"since": (today + timedelta(days=1)).isoformat()})
    assert later.context["page"].paginator.count == 0
    within = client.get(url, {"since": today.isoformat(), "until": today.isoformat()})
    assert within.context["page"].paginator.count >= 61
    bad = client.get(url, {"since": "not-a-date"})
    assert bad.status_code == 200 and bad.context["form"].errors


def test_the_csv_export_keeps_the_filters(client_for, many_entries):
    response = client_for("manager").get(
        reverse("api:audit_log_csv"), {"actor": "expert"}
    )
    assert response["Content-Type"].startswith("text/csv")
    lines = b"".join(response.streaming_content).decode("utf-8-sig").splitlines()
    assert lines[0] == "when,who,kind,object,action,changes,address"
    assert len(lines) == 2
    assert ",expert,Prompt template,by-expert" in lines[1]
    assert "text: — → y" in lines[1]
