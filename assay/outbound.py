"""The bounds of every outbound HTTP exchange: one deadline for the whole request
and a cap on the bytes read of its answer. LLM calls (judging/llm/engine.py),
search queries (construction/search/client.py) and webhook POSTs
(api/webhooks/sending.py) all go through it.

    client = outbound.client(seconds=5, max_bytes=4_000_000)        # httpx2.Client
    client = outbound.async_client(seconds=5, max_bytes=…, addresses=…)  # AsyncClient
    transport = outbound.AsyncBoundedTransport(inner, seconds=120, max_bytes=…)
    with outbound.deadline(time.monotonic() + 30):   # narrows it for this block
        ...

An HTTP library's time-out applies to each read: a server that sends one byte
every few seconds, streams for ever, or sends SSE comments alone is never timed
out by it. Here the deadline covers connecting, sending, and every read of the
headers and of the body: past it the exchange ends with `DeadlineExceeded` (an
`httpx2.TimeoutException`, so callers retry it like any time-out). A body longer
than `max_bytes` ends with `BodyTooLarge` (an `httpx2.TransportError`) as soon as
the cap is passed, never read whole.

A client made with `addresses` (webhooks and search services, whose URLs a manager
aims: assay/targets.py) connects only to an address that function returned for the
host, checked, and never lets the socket library resolve the name again: a name that
resolves to a public address for the check and to 127.0.0.1 a moment later (DNS
rebinding) would otherwise reach inside. The request still names the host (the
Host header, TLS's SNI and certificate check), so nothing else changes.

    client = outbound.client(seconds=5, max_bytes=2048, addresses=checked)
    # checked(host) -> ["93.184.215.14"], or raises outbound.TargetRefused

The async client sends through aiohttp (its C parser costs a fraction of the CPU of
the pure-Python pool per exchange) with a resolver that answers only the checked
addresses; aiohttp still names the host in the Host header and TLS's SNI.

Async transports are bounded with `asyncio.timeout_at`. A blocking socket cannot be
cancelled, so the sync client's network backend gives every socket operation (the
TCP connect, the TLS handshake, each send and receive) at most the time left until
the deadline, which a context variable carries into the connection pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import ipaddress
import math
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterator

import aiohttp
import httpcore2
import httpx2
from aiohttp.abc import AbstractResolver
from openai._vendor.httpx_aiohttp import AiohttpTransport


class DeadlineExceeded(httpx2.ReadTimeout):
    """The whole exchange took longer than its deadline: its own seconds, or
    (`narrowed`) the caller's `deadline()`."""

    narrowed = False


class BodyTooLarge(httpx2.ReadError):
    """The answer's body is longer than the cap; reading stopped there."""


class TargetRefused(httpx2.ConnectError):
    """The host stands for no address the client may connect to (its message says
    why); nothing was sent."""


_narrowed: contextvars.ContextVar[float] = contextvars.ContextVar(
    "outbound_deadline", default=math.inf
)
# The deadline of the sync exchange running in this thread, read by the network
# backend at every socket operation.
_current: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "outbound_current", default=None
)


@contextlib.contextmanager
def deadline(at: float) -> Iterator[None]:
    """Exchanges started inside the block end by `at` (time.monotonic()) at the
    latest, whatever their own seconds (a call's deadline over its attempts)."""
    token = _narrowed.set(min(at, _narrowed.get()))
    try:
        yield
    finally:
        _narrowed.reset(token)


def bound_error(error: BaseException) -> DeadlineExceeded | BodyTooLarge | None:
    """The DeadlineExceeded or BodyTooLarge that `error` stands for (a client
    library wraps it), if any."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, DeadlineExceeded | BodyTooLarge):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


class _Bounds:
    def __init__(self, seconds: float, max_bytes: int):
        self.seconds = seconds
        self.max_bytes = max_bytes

    def deadline(self) -> float:
        return min(time.monotonic() + self.seconds, _narrowed.get())

    def late(self, at: float) -> DeadlineExceeded:
        if at < _narrowed.get():
            return DeadlineExceeded(f"No complete answer within {self.seconds:g} s")
        error = DeadlineExceeded("No complete answer by the caller's deadline")
        error.narrowed = True
        return error

    def too_large(self) -> BodyTooLarge:
        return BodyTooLarge(
            f"The answer is over {self.max_bytes:,} bytes; reading stopped there"
        )


# -- async: asyncio.timeout_at around the request and every read of the body -------


class AsyncBoundedTransport(httpx2.AsyncBaseTransport):
    def __init__(self, inner: httpx2.AsyncBaseTransport, *, seconds, max_bytes):
        self.inner = inner
        self.bounds = _Bounds(seconds, max_bytes)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        at = self.bounds.deadline()
        try:
            async with asyncio.timeout_at(_loop_time(at)):
                response = await self.inner.handle_async_request(request)
        except TimeoutError as error:
            raise self.bounds.late(at) from error
        response.stream = _AsyncBoundedStream(response.stream, self.bounds, at)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


class _AsyncBoundedStream(httpx2.AsyncByteStream):
    def __init__(self, inner, bounds: _Bounds, at: float):
        self.inner = inner
        self.bounds = bounds
        self.at = at

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks = self.inner.__aiter__()
        received = 0
        while True:
            try:
                async with asyncio.timeout_at(_loop_time(self.at)):
                    chunk = await anext(chunks)
            except StopAsyncIteration:
                return
            except TimeoutError as error:
                await self.aclose()
                raise self.bounds.late(self.at) from error
            received += len(chunk)
            if received > self.bounds.max_bytes:
                # What fits under the cap is handed on first (a log shows it).
                yield chunk[: len(chunk) - (received - self.bounds.max_bytes)]
                await self.aclose()
                raise self.bounds.too_large()
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


def _loop_time(at: float) -> float:
    return asyncio.get_running_loop().time() + (at - time.monotonic())


def async_client(
    *,
    seconds: float,
    max_bytes: int,
    connections: int,
    addresses: Callable[[str], list[str]] | None = None,
    **kwargs,
) -> httpx2.AsyncClient:
    """An httpx2.AsyncClient through aiohttp, at most `connections` open, whose every
    request is bounded (kwargs go to the client: follow_redirects, headers…); with
    `addresses`, whose every connection goes to an address it returned for the host.
    Made on the loop that uses it (aiohttp's session belongs to one loop)."""

    def session() -> aiohttp.ClientSession:
        resolver = None if addresses is None else _PinnedResolver(addresses)
        session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(
                limit=connections,
                ssl=httpx2.create_ssl_context(),
                resolver=resolver,
                # Each new connection asks `addresses` again, as the sync client's.
                use_dns_cache=False,
            )
        )
        # aiohttp sends a GET again, unseen, when the connection drops before the
        # answer (it has no argument for it): the caller counts and spaces its own
        # tries, and a request must reach the service once per try.
        session._retry_connection = False
        return session

    return httpx2.AsyncClient(
        transport=AsyncBoundedTransport(
            AiohttpTransport(client=session), seconds=seconds, max_bytes=max_bytes
        ),
        timeout=seconds,
        **kwargs,
    )


class _PinnedResolver(AbstractResolver):
    """aiohttp's resolver answering only what `addresses` returned for the host
    (resolved on a thread: it blocks), so the socket library never looks the name up
    again; TargetRefused goes through to the caller."""

    def __init__(self, addresses: Callable[[str], list[str]]):
        self.addresses = addresses

    async def resolve(self, host: str, port: int = 0, family=socket.AF_INET):
        return [
            {
                "hostname": host,
                "host": address,
                "port": port,
                "family": socket.AF_INET6
                if ipaddress.ip_address(address).version == 6
                else socket.AF_INET,
                "proto": 0,
                "flags": socket.AI_NUMERICHOST,
            }
            for address in await asyncio.to_thread(self.addresses, host)
        ]

    async def close(self) -> None:
        pass


# -- sync: every socket operation gets at most the time left -----------------------


def client(
    *,
    seconds: float,
    max_bytes: int,
    addresses: Callable[[str], list[str]] | None = None,
    **kwargs,
) -> httpx2.Client:
    """An httpx2.Client whose every request is bounded (kwargs go to the client:
    follow_redirects, headers…); with `addresses`, whose every connection goes to
    an address it returned for the host (see the module's docstring)."""
    return httpx2.Client(
        transport=BoundedTransport(
            seconds=seconds, max_bytes=max_bytes, addresses=addresses
        ),
        timeout=seconds,
        **kwargs,
    )


def peer_address(response: httpx2.Response) -> str:
    """The IP address `response` came from: the connection's own, not the name's
    resolution now."""
    stream = response.extensions["network_stream"]
    return stream.get_extra_info("server_addr")[0]


class BoundedTransport(httpx2.BaseTransport):
    def __init__(self, *, seconds: float, max_bytes: int, addresses=None):
        self.inner = httpx2.HTTPTransport()
        # The pool opens its connections through this backend (httpx2 builds the
        # pool itself and has no argument for it).
        pool = self.inner._pool
        pool._network_backend = _DeadlineBackend(pool._network_backend, addresses)
        self.bounds = _Bounds(seconds, max_bytes)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        at = self.bounds.deadline()
        token = _current.set(at)
        try:
            response = self.inner.handle_request(request)
        except httpx2.TimeoutException as error:
            if time.monotonic() >= at:
                raise self.bounds.late(at) from error
            raise
        finally:
            _current.reset(token)
        response.stream = _BoundedStream(response.stream, self.bounds, at)
        return response

    def close(self) -> None:
        self.inner.close()


class _BoundedStream(httpx2.SyncByteStream):
    def __init__(self, inner, bounds: _Bounds, at: float):
        self.inner = inner
        self.bounds = bounds
        self.at = at

    def __iter__(self) -> Iterator[bytes]:
        chunks = iter(self.inner)
        received = 0
        while True:
            token = _current.set(self.at)
            try:
                chunk = next(chunks)
            except StopIteration:
                return
            except httpx2.TimeoutException as error:
                if time.monotonic() >= self.at:
                    self.close()
                    raise self.bounds.late(self.at) from error
                raise
            finally:
                _current.reset(token)
            received += len(chunk)
            if received > self.bounds.max_bytes:
                yield chunk[: len(chunk) - (received - self.bounds.max_bytes)]
                self.close()
                raise self.bounds.too_large()
            yield chunk

    def close(self) -> None:
        self.inner.close()


def _left(timeout: float | None) -> float | None:
    at = _current.get()
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise TimeoutError("the exchange's deadline has passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore2.NetworkStream):
    def __init__(self, inner: httpcore2.NetworkStream):
        self.inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        with _as_timeout(httpcore2.ReadTimeout):
            return self.inner.read(max_bytes, _left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        with _as_timeout(httpcore2.WriteTimeout):
            self.inner.write(buffer, _left(timeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None):
        with _as_timeout(httpcore2.ConnectTimeout):
            stream = self.inner.start_tls(ssl_context, server_hostname, _left(timeout))
        return _DeadlineStream(stream)

    def get_extra_info(self, info: str):
        return self.inner.get_extra_info(info)


class _DeadlineBackend(httpcore2.NetworkBackend):
    def __init__(self, inner: httpcore2.NetworkBackend, addresses=None):
        self.inner = inner
        self.addresses = addresses

    def connect_tcp(
        self, host, port, timeout=None, local_address=None, socket_options=None
    ):
        with _as_timeout(httpcore2.ConnectTimeout):
            stream = self._connect_pinned(
                host, port, timeout, local_address, socket_options
            )
        return _DeadlineStream(stream)

    def _connect_pinned(self, host, port, timeout, local_address, socket_options):
        """A connection to one of the checked addresses of `host`, tried in turn
        (as the socket library tries a name's); to `host` itself when the client
        checks none."""
        if self.addresses is None:
            return self.inner.connect_tcp(
                host, port, _left(timeout), local_address, socket_options
            )
        failed = None
        for address in self.addresses(host):
            try:
                return self.inner.connect_tcp(
                    address, port, _left(timeout), local_address, socket_options
                )
            except httpcore2.ConnectError as error:
                failed = error
        raise failed or TargetRefused(f"{host} does not resolve to an address.")

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        with _as_timeout(httpcore2.ConnectTimeout):
            stream = self.inner.connect_unix_socket(
                path, _left(timeout), socket_options
            )
        return _DeadlineStream(stream)

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


@contextlib.contextmanager
def _as_timeout(kind: type[Exception]) -> Iterator[None]:
    # Only the deadline's own TimeoutError: the inner backend raises httpcore2's
    # exceptions already, which pass through untouched.
    try:
        yield
    except TimeoutError as error:
        if isinstance(error, httpcore2.TimeoutException):
            raise
        raise kind(str(error)) from error
