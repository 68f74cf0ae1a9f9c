import io
import subprocess
import sys

import pytest
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.core.management import CommandError, call_command
from django.urls import reverse

from benchmark.actions import ensure_role_groups
from benchmark.models import Item, Label, LabelDimension
from benchmark.roles import MANAGER_APPS, ROLE_PERMISSIONS, Role, has_role
from tests.signing_in import sign_in_request


def settings_import(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env={
            "PATH": "/usr/bin:/bin",
            "DJANGO_SETTINGS_MODULE": "assay.settings",
            **env,
        },
        capture_output=True,
        text=True,
    )


@pytest.mark.smoke
@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DEBUG": "0", "ALLOWED_HOSTS": "x"}, "SECRET_KEY must be set"),
        ({"DEBUG": "maybe"}, "is not a boolean"),
        ({"DEBUG": "0", "SECRET_KEY": "s"}, "ALLOWED_HOSTS must be set"),
        (
            {"DEBUG": "0", "SECRET_KEY": "s", "ALLOWED_HOSTS": "*"},
            "may not contain '*'",
        ),
        ({"DEBUG": "1", "LLM_MAX_ATTEMPTS": "many"}, "is not an integer"),
        ({"DEBUG": "1", "CELERY_BROKER_URL": "ftp://x"}, "not a supported broker"),
        ({"DEBUG": "1", "REDIS_URL": "localhost:6379"}, "must start with redis://"),
        ({"DEBUG": "1", "LOG_LEVEL": "LOUD"}, "is not one of DEBUG"),
        ({"DEBUG": "1", "LLM_API_KEY_ENV_PATTERN": "(["}, "not a valid regular"),
        ({"DEBUG": "1", "TRUSTED_PROXY_COUNT": "nginx"}, "is not an integer"),
        ({"DEBUG": "1", "TRUSTED_PROXY_COUNT": "-1"}, "must be at least 0"),
        ({"DEBUG": "1", "TRUSTED_PROXY_COUNT": "9"}, "more than 5 proxies"),
        ({"DEBUG": "1", "REDIS_NAMESPACE": "run a:*"}, "may hold only letters"),
    ],
)
def test_bad_settings_fail_loudly(env, message):
    result = settings_import(env)
    assert result.returncode != 0
    assert message in result.stderr


@pytest.mark.smoke
def test_debug_defaults_start():
    assert settings_import({"DEBUG": "1"}).returncode == 0


@pytest.mark.smoke
def test_default_taxonomy_installed(benchmark):
    dimensions = list(LabelDimension.objects.filter(benchmark=benchmark))
    assert [d.code for d in dimensions] == ["capability", "industry"]
    assert Label.objects.filter(dimension=dimensions[0]).count() == 7
    assert Label.objects.filter(dimension=dimensions[1]).count() == 10
    assert Label.objects.get(code="selection_substitution").name == (
        "Selection & Substitution"
    )


@pytest.mark.smoke
def test_roles(personas):
    assert has_role(personas["manager"], Role.EXPERT)
    assert has_role(personas["expert"], Role.EXPERT)
    assert not has_role(personas["expert"], Role.REVIEWER)
    assert not has_role(personas["outsider"], *Role.values)
    assert personas["manager"].has_perm("benchmark.manage_benchmark")
    assert not personas["expert"].has_perm("benchmark.manage_benchmark")


@pytest.mark.smoke
def test_role_groups_hold_their_permissions_and_gain_new_ones(db):
    groups = ensure_role_groups()
    expected = set(Permission.objects.filter(content_type__app_label__in=MANAGER_APPS))
    for role in Role:
        named = {
            Permission.objects.get(
                content_type__app_label=dotted.split(".")[0],
                codename=dotted.split(".")[1],
            )
            for dotted in ROLE_PERMISSIONS[role]
        }
        held = set(groups[role].permissions.all())
        assert held == (named | expected if role == Role.MANAGER else named)
    links = Group.permissions.through.objects.count()
    assert ensure_role_groups() == groups
    assert Group.permissions.through.objects.count() == links
    # A permission that appears later (a new model's) reaches the manager's group.
    later = Permission.objects.create(
        name="Can do a later thing",
        codename="later_thing",
        content_type=ContentType.objects.get_for_model(Item),
    )
    ensure_role_groups()
    assert groups[Role.MANAGER].permissions.filter(pk=later.pk).exists()
    assert not groups[Role.EXPERT].permissions.filter(pk=later.pk).exists()


@pytest.mark.smoke
def test_anonymous_is_sent_to_login(client, db):
    response = client.get(reverse("benchmark:home"))
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


@pytest.mark.smoke
def test_create_user_command_reads_password_from_stdin(db, monkeypatch):
    from django.contrib.auth import authenticate

    monkeypatch.setattr("sys.stdin", io.StringIO("a-long-password\n"))
    out = io.StringIO()
    call_command(
        "create_user", "ana", "--role", "expert", "--password-stdin", stdout=out
    )
    assert "ana is a domain expert" in out.getvalue()
    user = authenticate(sign_in_request(), username="ana", password="a-long-password")
    assert user is not None
    assert has_role(user, Role.EXPERT) and not has_role(user, Role.MANAGER)


@pytest.mark.smoke
def test_create_user_command_rejects_short_password(db, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("short\n"))
    with pytest.raises(CommandError, match="at least 8"):
        call_command("create_user", "ana", "--role", "expert", "--password-stdin")


@pytest.mark.smoke
def test_user_without_a_role_is_told_why(client_for):
    response = client_for("outsider").get(reverse("benchmark:home"))
    assert response.status_code == 403
    assert "Your account has no role yet" in response.content.decode()
