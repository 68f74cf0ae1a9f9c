import pytest


@pytest.fixture(autouse=True)
def local_search_services(settings):
    # The tests' search services are HTTP servers on 127.0.0.1, an internal address
    # a search service may name only when SEARCH_SERVICE_HOSTS does; the other
    # hosts the tests save are under example.org.
    settings.SEARCH_SERVICE_HOSTS = ["127.0.0.1", ".example.org"]
