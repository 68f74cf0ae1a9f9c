"""Personal API tokens: made on their page or by a command, shown once, stored only
as a digest, refused once revoked, and acting in their user's roles only."""

from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from api.actions import do_create_token, do_revoke_token
from api.models import ApiToken
from tests.api.helpers import BASE, generic_item


def call(text, path="/benchmarks"):
    return Client().get(BASE + path, headers={"Authorization": f"Bearer {text}"})


def tables_holding(text: str) -> list[str]:
    """Every table with a row whose text form contains `text` (PostgreSQL)."""
    quote = connection.ops.quote_name
    found = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(
                f"SELECT 1 FROM {quote(table)} AS t WHERE t::text LIKE %s LIMIT 1",
                [f"%{text}%"],
            )
            if cursor.fetchone():
                found.append(table)
    return found


def test_the_secret_is_stored_nowhere_only_its_digest(personas):
    token, text = do_create_token(personas["expert"], "nightly export")
    assert text.startswith("assay_") and len(text) > 40
    assert tables_holding(text) == []
    assert tables_holding(text[len(token.visible) :]) == []
    assert tables_holding(token.digest) == ["api_apitoken"]
    assert call(text).status_code == 200


def test_a_revoked_token_is_refused(personas):
    token, text = do_create_token(personas["expert"], "ci")
    do_revoke_token(token)
    response = call(text)
    assert response.status_code == 401
    assert response.json() == {"detail": "Unauthorized"}


@pytest.mark.parametrize(
    "header",
    ["Bearer assay_wrong", "Bearer ", "Token assay_x", "Basic ZXhwZXJ0OnB3"],
)
def test_a_wrong_or_foreign_credential_is_a_401(personas, header):
    response = Client().get(BASE + "/benchmarks", headers={"Authorization": header})
    assert response.status_code == 401


def test_last_used_is_kept_to_the_minute(personas):
    token, text = do_create_token(personas["expert"], "ci")
    assert token.last_used_at is None
    call(text)
    token.refresh_from_db()
    first = token.last_used_at
    assert first is not None
    call(text)
    token.refresh_from_db()
    assert token.last_used_at == first
    ApiToken.objects.filter(pk=token.pk).update(
        last_used_at=first - timedelta(minutes=5)
    )
    call(text)
    token.refresh_from_db()
    assert token.last_used_at > first - timedelta(seconds=1)


def test_a_token_acts_in_its_users_roles_and_no_more(personas, benchmark):
    _, expert = do_create_token(personas["expert"], "reader")
    items = f"/benchmarks/{benchmark.slug}/items"
    assert call(expert, items).status_code == 200
    refused = Client().post(
        f"{BASE}{items}/bulk",
        {"items": [generic_item("N-1")]},
        content_type="application/json",
        headers={"Authorization": f"Bearer {expert}"},
    )
    assert refused.status_code == 403
    assert refused.json() == {"detail": "Your roles do not allow this."}
    _, outsider = do_create_token(personas["outsider"], "nothing")
    assert call(outsider, "/benchmarks").status_code == 403


def test_a_deactivated_users_tokens_stop_working(personas):
    user = personas["manager"]
    _, text = do_create_token(user, "ci")
    user.is_active = False
    user.save(update_fields=["is_active"])
    assert call(text).status_code == 401


# ------------------------------------------------------------------------- the page


def test_the_page_shows_a_new_secret_once(client_for):
    client = client_for("reviewer")
    url = reverse("api:tokens")
    created = client.post(url, {"name": "my script"})
    assert created.status_code == 302 and created.url == url
    response = client.get(url)
    text = response.context["secret"]
    assert text in response.content.decode()
    assert "no-store" in response["Cache-Control"]
    assert call(text).status_code == 200
    # Reloading the page shows the secret no more and makes no second token.
    listed = client.get(url).content.decode()
    assert "my script" in listed and text not in listed
    assert ApiToken.objects.get().visible in listed


def test_the_page_refuses_a_nameless_token(client_for):
    response = client_for("expert").post(reverse("api:tokens"), {"name": "  "})
    assert response.status_code == 400
    assert not ApiToken.objects.exists()


def test_the_page_lists_and_revokes_only_ones_own_tokens(client_for, personas):
    mine, _ = do_create_token(personas["expert"], "mine")
    theirs, _ = do_create_token(personas["reviewer"], "theirs")
    client = client_for("expert")
    listed = client.get(reverse("api:tokens")).content.decode()
    assert "mine" in listed and "theirs" not in listed
    refused = client.post(reverse("api:revoke_token", args=[theirs.pk]))
    assert refused.status_code == 404
    response = client.post(reverse("api:revoke_token", args=[mine.pk]))
    assert response.status_code == 302
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert mine.is_revoked and not theirs.is_revoked


def test_revoking_needs_a_post(client_for, personas):
    token, _ = do_create_token(personas["expert"], "mine")
    response = client_for("expert").get(reverse("api:revoke_token", args=[token.pk]))
    assert response.status_code == 405


def test_a_manager_revokes_anyones_token_in_the_admin(client_for, personas):
    token, text = do_create_token(personas["expert"], "leaked")
    response = client_for("manager").post(
        reverse("admin:api_apitoken_changelist"),
        {"action": "revoke", "_selected_action": [token.pk]},
    )
    assert response.status_code == 302
    assert call(text).status_code == 401


# --------------------------------------------------------------------- the command


def test_create_api_token_prints_a_working_token(personas):
    out = StringIO()
    call_command("create_api_token", "adjudicator", "batch job", stdout=out)
    text = out.getvalue().strip()
    assert call(text).status_code == 200
    assert ApiToken.objects.get().name == "batch job"


def test_create_api_token_warns_about_a_user_without_a_role(db):
    get_user_model().objects.create_user("nobody", password="x" * 12)
    out, err = StringIO(), StringIO()
    call_command("create_api_token", "nobody", "t", stdout=out, stderr=err)
    assert "holds no role" in err.getvalue()
    assert timezone.now() - ApiToken.objects.get().created_at < timedelta(minutes=1)
