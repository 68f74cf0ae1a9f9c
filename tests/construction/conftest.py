import pytest


@pytest.fixture(autouse=True)
def local_search_services(settings, monkeypatch):
    # The tests' search services are HTTP servers on 127.0.0.1, an internal address
    # a search service may name only when SEARCH_SERVICE_HOSTS does; the other
    # hosts the tests save are under example.org. The real workers check every
    # connection against it too: they read it from the environment.
    settings.SEARCH_SERVICE_HOSTS = ["127.0.0.1", ".example.org"]
    monkeypatch.setenv("SEARCH_SERVICE_HOSTS", "127.0.0.1,.example.org")
