"""The "Check a summary table" page: managers paste a table and see its findings, or
the problems that kept it from being read; nobody else may use it."""

import pytest
from django.test import Client
from django.urls import reverse

from judging.leaderboard.forms import MAX_TABLE_CHARS

URL = reverse("judging:check_table")
CONSISTENT = (
    "model,n,raw,final,delta,perfect,pass,rank,raw_rank,Δrank\n"
    "alpha,7,2.43,2.29,-0.14,57.1%,85.7%,1,1,0\n"
    "beta,8,1.50,1.50,0.00,25.0%,50.0%,2,2,0\n"
)


def post(client, table, **fields):
    data = {"table": table, "rates": "auto", "rates_after_sv": "1", **fields}
    return client.post(URL, data)


@pytest.mark.parametrize("persona", ["expert", "adjudicator", "reviewer", "outsider"])
def test_only_managers_may_check(client_for, persona):
    assert client_for(persona).get(URL).status_code == 403
    assert post(client_for(persona), CONSISTENT).status_code == 403


def test_anonymous_visitors_are_sent_to_sign_in(db):
    response = Client().get(URL)
    assert response.status_code == 302 and "login" in response.url


def test_the_form_starts_empty(client_for):
    page = client_for("manager").get(URL)
    assert page.status_code == 200
    assert page.context["result"] is None
    assert "Check the table" in page.content.decode()


def test_a_consistent_table_says_so_and_names_the_checks_run(client_for):
    page = post(client_for("manager"), CONSISTENT)
    html = page.content.decode()
    assert page.status_code == 200
    assert "No inconsistency found in 2 rows" in html
    assert "Attainable with n items (GRIM)" in html
    assert "Not run" not in html


def test_an_inconsistent_row_is_named_with_its_line(client_for):
    table = CONSISTENT + "gamma,7,1.35,1.35,0.00,14.3%,42.9%,3,3,0\n"
    page = post(client_for("manager"), table)
    assert page.status_code == 200
    findings = page.context["result"].findings
    assert {(f.where, f.model) for f in findings} == {("line 4", "gamma")}
    html = page.content.decode()
    assert "inconsistencies in 1 of 3 rows" in html
    assert "9/7 = 1.2857, 10/7 = 1.4286" in html


def test_rates_counted_before_sv_bound_raw(client_for):
    table = "model,raw,final,perfect,pass\nm,2.60,1.00,60.0%,100.0%\n"
    client = client_for("manager")
    after = post(client, table, rates_after_sv="1").context["result"]
    before = post(client, table, rates_after_sv="0").context["result"]
    assert [f.check for f in after.findings] == ["bounds"]
    assert before.findings == []


def test_checks_without_their_columns_are_listed_as_not_run(client_for):
    page = post(client_for("manager"), "model,raw,final,Notes\na,2.5,2.4,x\n")
    html = page.content.decode()
    assert "Not run" in html
    assert "needs n." in html
    assert "Columns not read: Notes." in html


@pytest.mark.parametrize(
    ("table", "fields", "message"),
    [
        ("", {}, "This field is required."),
        ("model,raw\na,2.5\nb,x\n", {}, "line 3, raw: “x” is not a decimal number."),
        ("model,raw\na,2.5,1\n", {}, "line 2: 3 cells where the header has 2"),
        ("model,score\na,2\n", {}, "line 1: no column the checks read"),
        ("x" * (MAX_TABLE_CHARS + 1), {}, "at most 300000 characters"),
        (CONSISTENT, {"rates": "thousandths"}, "Select a valid choice."),
        (CONSISTENT, {"rates_after_sv": "maybe"}, "Select a valid choice."),
    ],
)
def test_bad_input_is_the_form_again_with_the_problem(
    client_for, table, fields, message
):
    page = post(client_for("manager"), table, **fields)
    assert page.status_code == 400
    assert page.context["result"] is None
    assert message in page.content.decode()


def test_an_unreadable_table_keeps_what_was_pasted(client_for):
    page = post(client_for("manager"), "model,raw\na,2.5\nb,x\n")
    html = page.content.decode()
    assert "The table could not be read." in html
    assert "model,raw\na,2.5\nb,x\n" in html


def test_model_names_are_escaped(client_for):
    table = "model,raw,final\n<script>alert(1)</script>,2.0,2.5\n"
    html = post(client_for("manager"), table).content.decode()
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_the_leaderboard_links_to_the_check(client_for, benchmark):
    page = client_for("manager").get(
        reverse("judging:leaderboard", args=[benchmark.slug])
    )
    assert f'href="{URL}"' in page.content.decode()
