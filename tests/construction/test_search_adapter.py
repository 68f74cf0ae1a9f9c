"""The search adapter and client against a real SearxNG-protocol server: top 5
per query, dedup by URL across queries, the record per query, retries and every
failure ending as a failed record with its reason (never as "no results")."""

import socket
import threading
from urllib.parse import urlsplit

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from construction.actions import do_save_search_service
from construction.models import SearchCall, SearchService
from construction.search.adapters import (
    ADAPTERS,
    SearchError,
    merge_results,
    top_hits,
    url_key,
)
from construction.search.client import search_all
from tests.search_stub import SearchReply, SearchStub


def results(prefix, n):
    return [
        (f"https://{prefix}.example/{i}", f"{prefix} title {i}", f"{prefix} text {i}")
        for i in range(1, n + 1)
    ]


@pytest.fixture(autouse=True)
def fast_search_settings(settings):
    settings.SEARCH_BACKOFF_BASE_MS = 10
    settings.SEARCH_MAX_ATTEMPTS = 3


@pytest.fixture
def stub():
    with SearchStub(responder=lambda query: results(query.split()[0], 8)) as s:
        yield s


@pytest.fixture
def service(db, stub):
    return do_save_search_service("searx", adapter="searxng", base_url=stub.base_url)


def test_each_query_keeps_its_top_five_with_rank_and_retrieval_date(stub, service):
    found = search_all(service, ["gb2099 socket", "m8 bolt", "a2-70 steel"])
    assert stub.request_count == 3
    call = found["gb2099 socket"]
    assert call.status == SearchCall.Status.OK and call.attempts == 1
    assert [r["rank"] for r in call.results] == [1, 2, 3, 4, 5]
    assert call.results[0]["url"] == "https://gb2099.example/1"
    assert call.results[0]["title"] == "gb2099 title 1"
    assert call.results[0]["snippet"] == "gb2099 text 1"
    assert call.results[0]["retrieved_at"].startswith(
        call.retrieved_at.date().isoformat()
    )
    assert {r.headers.get("Authorization") for r in stub.requests} == {None}


def test_results_are_merged_and_deduplicated_by_url():
    first = top_hits(ADAPTERS["searxng"].parse(_payload(results("a", 7))))
    second = [
        {**first[1], "url": "HTTPS://A.example/2/#top", "rank": 1},
        {"url": "https://b.example/1", "title": "b", "snippet": "", "rank": 2},
        {**first[0], "rank": 3},
    ]
    merged = merge_results([first, second, []])
    assert len(first) == 5
    assert [(r["url"], r["query"], r["rank"]) for r in merged] == [
        *[(f"https://a.example/{i}", 1, i) for i in range(1, 6)],
        ("https://b.example/1", 2, 2),
    ]
    assert url_key("https://A.example/x/") == url_key("https://a.example/x#frag")
    three = merge_results([top_hits(ADAPTERS["searxng"].parse(_payload(
        results(p, 9)))) for p in "xyz"])  # fmt: skip
    assert len(three) == 15


def _payload(rows):
    return {"results": [{"url": u, "title": t, "content": c} for u, t, c in rows]}


def test_the_parser_refuses_what_is_not_an_answer():
    parse = ADAPTERS["searxng"].parse
    for payload in ([], {"results": "x"}, {"answers": []}):
        with pytest.raises(SearchError):
            parse(payload)
    with pytest.raises(SearchError, match="No engine answered"):
        parse({"results": [], "unresponsive_engines": [["google", "timeout"]]})
    assert parse({"results": [], "unresponsive_engines": []}) == []
    # A result without a URL cannot be cited: left out.
    assert parse({"results": [{"title": "no url"}]}) == []


def test_a_recorded_query_is_never_sent_again(stub, service):
    search_all(service, ["m8 bolt", "m8 bolt", "a2 steel"])
    again = search_all(service, ["a2 steel", "m8 bolt"])
    assert sorted(stub.queries()) == ["a2 steel", "m8 bolt"]
    assert again["m8 bolt"].status == "ok"


def test_server_errors_are_retried_then_the_query_succeeds(stub, service):
    stub.script(
        "flaky",
        SearchReply(status=503),
        SearchReply(status=429, headers={"Retry-After": "0"}),
        SearchReply(results=results("ok", 2)),
    )
    call = search_all(service, ["flaky query"])["flaky query"]
    assert (call.status, call.attempts, len(call.results)) == ("ok", 3, 2)


@pytest.mark.parametrize(
    ("reply", "reason", "tries"),
    [
        (SearchReply(status=500), "HTTP 500: Stub error (gave up after 3 tries)", 3),
        (SearchReply(raw="<html>oops</html>"), "The answer is not JSON.", 3),
        (SearchReply(unresponsive=["google", "bing"]), "No engine answered", 3),
        (SearchReply(delay=2), "Timed out after 1 s", 3),
        (SearchReply(status=404), "HTTP 404: Stub error", 1),
    ],
)
def test_failures_end_as_a_failed_record_with_the_reason(
    stub, service, settings, reply, reason, tries
):
    if reply.delay:
        # A short deadline here only: elsewhere a loaded machine's slow answer
        # would be retried, and the stub would count both tries in flight.
        settings.SEARCH_TIMEOUT_SECONDS = 1
    stub.script("broken", reply)
    call = search_all(service, ["broken query"])["broken query"]
    assert call.status == SearchCall.Status.FAILED
    assert call.results == []
    assert reason in call.error
    assert call.attempts == tries
    if not reply.delay:  # a timed-out request may still be on its way in
        assert stub.queries().count("broken query") == tries


def test_a_service_that_drops_the_connection_is_a_connection_error_retried(db):
    """Not a time-out: the client reports the dropped connection as such."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted = []

    def drop_every_connection():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return  # the listener was closed
            accepted.append(connection)
            connection.recv(65536)
            connection.close()

    threading.Thread(target=drop_every_connection, daemon=True).start()
    port = listener.getsockname()[1]
    try:
        service = do_save_search_service(
            "dropping", adapter="searxng", base_url=f"http://127.0.0.1:{port}"
        )
        call = search_all(service, ["dropped query"])["dropped query"]
    finally:
        listener.close()
    assert call.status == SearchCall.Status.FAILED
    assert call.error.startswith("Connection error: ")
    assert call.error.endswith("(gave up after 3 tries)")
    assert call.attempts == 3
    assert len(accepted) == 3


def test_a_failed_query_is_sent_again_next_time(stub, service, settings):
    stub.script("later", SearchReply(status=500), SearchReply(results=results("l", 1)))
    settings.SEARCH_MAX_ATTEMPTS = 1
    assert search_all(service, ["later"])["later"].status == "failed"
    call = search_all(service, ["later"])["later"]
    assert call.status == "ok" and call.results[0]["url"] == "https://l.example/1"
    assert SearchCall.objects.count() == 1


def test_the_api_key_is_read_on_the_worker_and_sent_as_bearer(db, monkeypatch):
    with SearchStub(responder=lambda q: results("k", 1), api_key="s3cret") as stub:
        service = do_save_search_service(
            "keyed",
            adapter="searxng",
            base_url=stub.base_url,
            api_key_env="SEARXNG_API_KEY",
        )
        missing = search_all(service, ["no key"])["no key"]
        assert missing.status == "failed"
        assert missing.error == "SEARXNG_API_KEY is not set on the worker."
        assert stub.request_count == 0
        monkeypatch.setenv("SEARXNG_API_KEY", "s3cret")
        assert search_all(service, ["no key"])["no key"].status == "ok"
        assert stub.requests[0].headers["Authorization"] == "Bearer s3cret"


def test_a_service_is_checked_before_it_is_saved(db, settings):
    with pytest.raises(ValidationError, match="not a search adapter"):
        do_save_search_service("x", adapter="altavista", base_url="http://s.local")
    with pytest.raises(ValidationError, match="variable"):
        do_save_search_service(
            "x", adapter="searxng", base_url="http://s.local", api_key_env="sk-abc"
        )
    with pytest.raises(ValidationError, match="allowed key variable"):
        do_save_search_service(
            "x", adapter="searxng", base_url="http://s.local", api_key_env="SECRET_KEY"
        )
    settings.SEARCH_SERVICE_HOSTS = [".example.org"]
    with pytest.raises(ValidationError, match="not an allowed search host"):
        do_save_search_service("x", adapter="searxng", base_url="http://10.0.0.1")
    service = do_save_search_service(
        "x", adapter="searxng", base_url="https://searx.example.org"
    )
    assert service.pk is not None


def test_a_change_of_service_is_in_the_audit_log(db, personas):
    from auditlog.context import set_actor
    from auditlog.models import LogEntry

    with set_actor(personas["manager"]):
        service = do_save_search_service(
            "audited", adapter="searxng", base_url="https://a.example.org"
        )
        do_save_search_service("audited", base_url="https://b.example.org")
    entries = LogEntry.objects.get_for_object(service).order_by("id")
    assert [e.actor.username for e in entries] == ["manager", "manager"]
    assert entries.last().changes_dict["base_url"] == [
        "https://a.example.org",
        "https://b.example.org",
    ]


def test_a_manager_adds_a_service_in_the_admin(client_for):
    client = client_for("manager")
    form = client.get(reverse("admin:construction_searchservice_add"))
    assert (
        '<option value="searxng">SearxNG (JSON API)</option>' in form.content.decode()
    )
    fields = {
        "name": "lab",
        "adapter": "searxng",
        "max_concurrency": "16",
        "is_active": "on",
    }
    refused = client.post(
        reverse("admin:construction_searchservice_add"),
        {**fields, "base_url": "https://s.example.org", "api_key_env": "SECRET_KEY"},
    )
    assert "not an allowed key variable" in refused.content.decode()
    client.post(
        reverse("admin:construction_searchservice_add"),
        {**fields, "base_url": "https://s.example.org", "api_key_env": ""},
    )
    service = SearchService.objects.get()
    assert (service.name, service.adapter, service.max_concurrency) == (
        "lab",
        "searxng",
        16,
    )


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8888",
        "http://10.1.2.3/",
        "http://169.254.169.254/",
        "http://[::1]/",
    ],
)
def test_an_internal_search_address_needs_the_allow_list(db, settings, url):
    settings.SEARCH_SERVICE_HOSTS = []
    with pytest.raises(ValidationError, match="SEARCH_SERVICE_HOSTS names"):
        do_save_search_service("internal", adapter="searxng", base_url=url)
    assert not SearchService.objects.filter(name="internal").exists()
    host = urlsplit(url).hostname
    settings.SEARCH_SERVICE_HOSTS = [host]
    assert do_save_search_service("internal", adapter="searxng", base_url=url).pk


def _slow_results(query):
    return SearchReply(results=results(query.split()[0], 1), delay=0.3)


def test_a_stream_keeps_as_many_queries_in_flight_as_the_service_takes(db):
    with SearchStub(responder=_slow_results) as stub:
        service = do_save_search_service(
            "wide", adapter="searxng", base_url=stub.base_url, max_concurrency=6
        )
        found = search_all(service, [f"q{n} wide" for n in range(12)])
        assert {(call.status, call.attempts) for call in found.values()} == {("ok", 1)}
        # The service's limit, not a number of threads per process, is the
        # ceiling: twelve queries of 0.3 s go six at a time.
        assert stub.stats()["peak_in_flight"] == 6


def test_the_service_limit_holds_over_every_worker(transactional_db):
    """Two streams, as two worker processes would run them (each its own loop
    and Redis client), share the service's three slots."""
    from django.db import connection

    with SearchStub(responder=_slow_results) as stub:
        service = do_save_search_service(
            "narrow", adapter="searxng", base_url=stub.base_url, max_concurrency=3
        )
        found = {}

        def worker(name):
            try:
                found.update(search_all(service, [f"{name}{n} x" for n in range(8)]))
            finally:
                connection.close()

        threads = [threading.Thread(target=worker, args=(n,)) for n in "ab"]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        # Each on its first try: a retried query is counted in flight twice.
        assert len(found) == 16
        assert {(c.status, c.attempts) for c in found.values()} == {("ok", 1)}
        assert stub.stats()["peak_in_flight"] == 3
