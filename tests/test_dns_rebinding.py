"""A webhook's or a search service's host is checked, and then the connection goes
to the address that was checked (assay/outbound.py, assay/targets.py): a name that
answers a public address to the check and 127.0.0.1 a moment later (DNS rebinding)
never reaches the internal server. The resolver is a stub (socket.getaddrinfo, for
the test's names only); the servers are real, on 127.0.0.1 and 127.0.0.2."""

import socket

from api import events
from api.models import WebhookDelivery
from api.webhooks.actions import do_create_webhook
from api.webhooks.sending import deliver
from construction.actions import do_save_search_service
from construction.models import SearchCall
from construction.search.client import search_all
from tests.api.webhook_receiver import Receiver
from tests.search_stub import SearchStub

PUBLIC = "93.184.215.14"
EVENT = "run.complete"


class Resolver:
    """socket.getaddrinfo for the names in `answers`; other names (and IP
    literals) go to the system's resolver. A name's answers are taken in turn,
    the last one repeating; or, by `for_sockets`, its answer when the socket
    library looks it up itself to connect (a lookup with a port) instead."""

    def __init__(self, monkeypatch):
        self.answers: dict[str, list[str]] = {}
        self.for_sockets: dict[str, str] = {}
        self.real = socket.getaddrinfo
        monkeypatch.setattr(socket, "getaddrinfo", self.getaddrinfo)

    def getaddrinfo(self, host, port, family=0, type=0, proto=0, flags=0):
        if host in self.for_sockets and port is not None:
            address = self.for_sockets[host]
        elif host in self.answers:
            queue = self.answers[host]
            address = queue.pop(0) if len(queue) > 1 else queue[0]
        else:
            return self.real(host, port, family, type, proto, flags)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, int(port or 0)))]


def test_a_webhook_name_that_rebinds_to_loopback_after_the_check_reaches_nothing(
    personas, settings, monkeypatch
):
    settings.WEBHOOK_HOSTS = []
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    resolver = Resolver(monkeypatch)
    with Receiver() as internal:
        port = internal.server.server_port
        url = f"http://hooks.rebind.test:{port}/hook"
        resolver.answers["hooks.rebind.test"] = [PUBLIC]
        do_create_webhook(personas["manager"], url, [EVENT])
        (delivery,) = events.emit(EVENT, {"run": 1}, "run-1")
        # The check before the POST is answered the public address; every later
        # lookup of the name, 127.0.0.1, where the internal server listens.
        resolver.answers["hooks.rebind.test"] = [PUBLIC, "127.0.0.1"]
        assert deliver(delivery.pk) == WebhookDelivery.Status.FAILED
    assert internal.received == []
    delivery.refresh_from_db()
    assert delivery.last_status_code is None
    assert delivery.last_error.startswith(
        "hooks.rebind.test is a loopback address (127.0.0.1)"
    )


def test_a_search_query_goes_to_the_address_that_was_checked(db, settings, monkeypatch):
    """The name is allow-listed, so any address it stands for may be used, but only
    the one checked: the socket library's own lookup of the name would answer
    127.0.0.2, where another server listens on the same port."""
    settings.SEARCH_SERVICE_HOSTS = ["search.rebind.test"]
    settings.SEARCH_MAX_ATTEMPTS = 1
    resolver = Resolver(monkeypatch)
    with SearchStub() as checked:
        port = int(checked.base_url.rsplit(":", 1)[1])
        other = SearchStub().start("127.0.0.2", port)
        try:
            resolver.answers["search.rebind.test"] = ["127.0.0.1"]
            resolver.for_sockets["search.rebind.test"] = "127.0.0.2"
            service = do_save_search_service(
                "rebinding",
                adapter="searxng",
                base_url=f"http://search.rebind.test:{port}",
            )
            records = search_all(service, ["torque of an M12 bolt"])
        finally:
            other.stop()
    assert records["torque of an M12 bolt"].status == SearchCall.Status.OK
    assert checked.queries() == ["torque of an M12 bolt"]
    assert other.requests == []
    # The request still names the host it was aimed at.
    assert checked.requests[0].headers["Host"] == f"search.rebind.test:{port}"


def test_a_search_name_that_rebinds_inside_is_refused_without_a_retry(
    db, settings, monkeypatch
):
    settings.SEARCH_SERVICE_HOSTS = []
    settings.SEARCH_MAX_ATTEMPTS = 3
    resolver = Resolver(monkeypatch)
    with SearchStub() as internal:
        port = int(internal.base_url.rsplit(":", 1)[1])
        resolver.answers["search.rebind.test"] = [PUBLIC, "127.0.0.1"]
        service = do_save_search_service(
            "rebinding", adapter="searxng", base_url=f"http://search.rebind.test:{port}"
        )
        records = search_all(service, ["hardness of 42CrMo4"])
    assert internal.requests == []
    record = records["hardness of 42CrMo4"]
    assert (record.status, record.attempts) == (SearchCall.Status.FAILED, 1)
    assert record.error.startswith("search.rebind.test is a loopback address")
