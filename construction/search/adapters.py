"""Search adapters: how one search service is asked and how its answer is read
(pure: no ORM, no network). The worker side (`construction.search.client`) sends
the request an adapter builds, with time-outs and retries, and hands the decoded
JSON body back to the adapter.

Adding a service is one class here, registered under its name:

    @register
    class BraveAdapter(Adapter):
        name = "brave"
        label = "Brave Search API"

        def request(self, base_url, query, api_key):
            return SearchRequest(
                url=f"{base_url.rstrip('/')}/res/v1/web/search",
                params={"q": query},
                headers={"X-Subscription-Token": api_key} if api_key else {},
            )

        def parse(self, payload):
            web = payload.get("web") if isinstance(payload, dict) else None
            return [
                Hit(url=r["url"], title=r.get("title", ""),
                    snippet=r.get("description", ""))
                for r in (web or {}).get("results", [])
            ]

A `SearchService` row then names it (`adapter="brave"`); no migration is needed.
`parse` raises `SearchError` for a body that is not the service's answer (retried
like a 5xx): never read a malformed answer as "no results".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

TOP_RESULTS = 5  # per query (IndustryBench §3.2)
QUERIES = 3  # per candidate


class SearchError(Exception):
    """The service's answer is unusable; the message says why."""


@dataclass(frozen=True)
class SearchRequest:
    url: str
    params: dict = field(default_factory=dict)
    headers: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Hit:
    url: str
    title: str
    snippet: str


class Adapter:
    name: str = ""
    label: str = ""

    def request(self, base_url: str, query: str, api_key: str) -> SearchRequest:
        raise NotImplementedError

    def parse(self, payload) -> list[Hit]:
        raise NotImplementedError


ADAPTERS: dict[str, Adapter] = {}


def register(adapter_class: type[Adapter]) -> type[Adapter]:
    ADAPTERS[adapter_class.name] = adapter_class()
    return adapter_class


def adapter_choices() -> list[tuple[str, str]]:
    return [(name, adapter.label) for name, adapter in sorted(ADAPTERS.items())]


@register
class SearxngAdapter(Adapter):
    """SearxNG's JSON API: GET /search?q=…&format=json (the instance must list
    `json` under `search.formats` in its settings.yml, else it answers 403).
    SearxNG itself has no API key; one configured is sent as a bearer token, for
    the proxy that usually guards a shared instance."""

    name = "searxng"
    label = "SearxNG (JSON API)"

    def request(self, base_url: str, query: str, api_key: str) -> SearchRequest:
        return SearchRequest(
            url=f"{base_url.rstrip('/')}/search",
            params={"q": query, "format": "json"},
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
        )

    def parse(self, payload) -> list[Hit]:
        if not isinstance(payload, dict) or not isinstance(
            payload.get("results"), list
        ):
            raise SearchError("The answer has no results list.")
        results = payload["results"]
        unresponsive = payload.get("unresponsive_engines") or []
        if not results and unresponsive:
            # Every engine failed: an outage, not an answer that nothing matched.
            names = ", ".join(str(engine[0]) for engine in unresponsive[:5])
            raise SearchError(f"No engine answered ({names}).")
        hits = []
        for result in results:
            if not isinstance(result, dict) or not isinstance(result.get("url"), str):
                continue
            hits.append(
                Hit(
                    url=result["url"],
                    title=str(result.get("title") or ""),
                    snippet=str(result.get("content") or ""),
                )
            )
        return hits


def url_key(url: str) -> str:
    """Two URLs naming the same page: scheme and host case, a fragment and a
    trailing slash do not count."""
    parts = urlsplit(url.strip())
    return urlunsplit(
        (
            parts.scheme.lower(),
            parts.netloc.lower(),
            parts.path.rstrip("/"),
            parts.query,
            "",
        )
    )


def top_hits(hits: list[Hit], limit: int = TOP_RESULTS) -> list[dict]:
    """The first `limit` hits of one query as stored results, ranked from 1."""
    return [
        {"url": hit.url, "title": hit.title, "snippet": hit.snippet, "rank": rank}
        for rank, hit in enumerate(hits[:limit], start=1)
    ]


def merge_results(per_query: list[list[dict]]) -> list[dict]:
    """The candidate's evidence: each query's results in query order, a URL seen
    under an earlier query (or earlier in the same one) left out; each result
    keeps its rank and gains the number of its query (1-based)."""
    seen, merged = set(), []
    for number, results in enumerate(per_query, start=1):
        for result in results:
            key = url_key(result["url"])
            if key in seen:
                continue
            seen.add(key)
            merged.append({**result, "query": number})
    return merged
