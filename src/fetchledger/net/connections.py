"""Connections for :mod:`fetchledger.net`: the address policy applied to the socket.

httpcore's network backends (sync and anyio) are wrapped so that a host is
resolved once, every address it resolves to is judged by the
:class:`~fetchledger.net.policy.AddressPolicy`, and the socket is opened to an
address that was judged — DNS rebinding finds no window — and the peer of the
open socket is judged again. Every socket operation gets at most the time the
request has left (:class:`Budget`, one wall-clock deadline per request, held
in a context variable so sync and async callers alike see their own).

Nothing here speaks HTTP; :mod:`fetchledger.net` does.
"""

from __future__ import annotations

import contextlib
import contextvars
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import httpcore
import httpx

from ..errors import BlockedAddress, DNSError, FetchLedgerError, RetrievalTimeout
from ..identity.addresses import IPAddress, parse_ip_host
from .policy import AddressPolicy, blocked

__all__ = [
    "AsyncGuardedBackend",
    "Budget",
    "GuardedBackend",
    "Resolver",
    "async_transport",
    "budget_scope",
    "default_resolver",
    "judge",
    "resolve",
    "resolve_async",
    "sync_transport",
    "system_resolver",
]

Resolver = Callable[[str, int], Sequence[str]]


def system_resolver(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to (the operating system's resolver)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def default_resolver(host: str, port: int) -> Sequence[str]:
    return system_resolver(host, port)  # looked up at call time: tests stub it


# --- the one deadline --------------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    """The wall-clock deadline of one request, across DNS, hops and body."""

    deadline: float
    seconds: float

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def expired(self) -> RetrievalTimeout:
        return RetrievalTimeout(
            f"no complete response within {self.seconds:g} s (the whole-request deadline)")

    def check(self) -> None:
        if self.left() <= 0:
            raise self.expired()


_BUDGET: contextvars.ContextVar[Budget | None] = contextvars.ContextVar(
    "fetchledger_budget", default=None)


@contextlib.contextmanager
def budget_scope(budget: Budget) -> Iterator[Budget]:
    """Make ``budget`` the deadline of every socket operation inside the block."""
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def _clamp(timeout: float | None) -> float | None:
    """``timeout`` cut to the time the current request has left."""
    budget = _BUDGET.get()
    if budget is None:
        return timeout
    left = budget.left()
    if left <= 0:
        raise budget.expired()
    return left if timeout is None else min(timeout, left)


# --- the guarded network backends ----------------------------------------------------------


def _addresses(host: str, names: Sequence[str]) -> list[IPAddress]:
    found: list[IPAddress] = []
    for name in names:
        try:
            found.append(ipaddress.ip_address(name.split("%", 1)[0]))
        except ValueError:
            continue
    if not found:
        raise DNSError(f"the host {host} has no address")
    return found


def judge(policy: AddressPolicy, host: str, addresses: Iterable[IPAddress]) -> list[IPAddress]:
    """The addresses the policy allows for ``host``; BlockedAddress if there is none."""
    allowed: list[IPAddress] = []
    refused: tuple[IPAddress, str] | None = None
    for ip in addresses:
        reason = policy.refusal(ip, host)
        if reason is None:
            allowed.append(ip)
        elif refused is None:
            refused = (ip, reason)
    if not allowed:
        assert refused is not None
        raise blocked(refused[0], host, refused[1])
    return allowed


def _dns_error(host: str, exc: BaseException) -> DNSError:
    reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return DNSError(f"cannot resolve the host {host}: {reason}")


def resolve(resolver: Resolver, host: str, port: int) -> list[IPAddress]:
    """The addresses ``host`` resolves to (a literal address is itself), within the
    deadline; DNSError when it does not resolve."""
    literal = parse_ip_host(host)
    if literal is not None:
        return [literal]
    timeout = _clamp(None)
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["names"] = resolver(host, port)
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc

    # getaddrinfo cannot be interrupted: a daemon thread lets the deadline win.
    worker = threading.Thread(target=run, name="fetchledger-dns", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        budget = _BUDGET.get()
        raise budget.expired() if budget else RetrievalTimeout(f"resolving {host} timed out")
    if "error" in box:
        error = box["error"]
        if isinstance(error, FetchLedgerError):
            raise error
        raise _dns_error(host, error) from error
    return _addresses(host, box["names"])


async def resolve_async(resolver: Resolver, host: str, port: int) -> list[IPAddress]:
    """:func:`resolve` off the event loop, cancelled by the deadline."""
    literal = parse_ip_host(host)
    if literal is not None:
        return [literal]
    timeout = _clamp(None)
    try:
        with anyio.fail_after(timeout):
            names = await anyio.to_thread.run_sync(resolver, host, port,
                                                   abandon_on_cancel=True)
    except TimeoutError as exc:
        budget = _BUDGET.get()
        raise (budget.expired() if budget else RetrievalTimeout(
            f"resolving {host} timed out")) from exc
    except FetchLedgerError:
        raise
    except (OSError, UnicodeError, ValueError) as exc:
        raise _dns_error(host, exc) from exc
    return _addresses(host, names)


def _peer_check(policy: AddressPolicy, host: str, peer: object) -> None:
    """Judge the address the socket is really connected to (a last line of defence)."""
    if isinstance(peer, tuple) and peer:
        try:
            ip = ipaddress.ip_address(str(peer[0]).split("%", 1)[0])
        except ValueError:
            return
        policy.check(ip, host)


class _GuardedStream(httpcore.NetworkStream):
    """A connection whose every operation gets at most the request's time left."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _clamp(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _clamp(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _GuardedStream(self._inner.start_tls(ssl_context, server_hostname,
                                                    _clamp(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class GuardedBackend(httpcore.NetworkBackend):
    """httpcore's sync backend, connecting only to addresses the policy allows."""

    def __init__(self, policy: AddressPolicy, resolver: Resolver | None = None,
                 inner: httpcore.NetworkBackend | None = None) -> None:
        self.policy = policy
        self.resolver = resolver or default_resolver
        self._inner = inner or httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        allowed = judge(self.policy, host, resolve(self.resolver, host, port))
        failure: Exception | None = None
        for ip in allowed:
            try:
                stream = self._inner.connect_tcp(str(ip), port, _clamp(timeout), local_address,
                                                 socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
                continue
            try:
                _peer_check(self.policy, host, stream.get_extra_info("server_addr"))
            except BaseException:
                stream.close()
                raise
            return _GuardedStream(stream)
        assert failure is not None
        raise failure

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None
                            ) -> httpcore.NetworkStream:
        raise BlockedAddress("refused by the address policy: unix sockets are never used")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class _AsyncGuardedStream(httpcore.AsyncNetworkStream):
    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._inner.read(max_bytes, _clamp(timeout))

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, _clamp(timeout))

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        return _AsyncGuardedStream(await self._inner.start_tls(ssl_context, server_hostname,
                                                               _clamp(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class AsyncGuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's anyio backend, connecting only to addresses the policy allows."""

    def __init__(self, policy: AddressPolicy, resolver: Resolver | None = None,
                 inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self.policy = policy
        self.resolver = resolver or default_resolver
        self._inner = inner or httpcore.AnyIOBackend()

    async def _resolve(self, host: str, port: int) -> list[IPAddress]:
        return await resolve_async(self.resolver, host, port)

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None
                          ) -> httpcore.AsyncNetworkStream:
        allowed = judge(self.policy, host, await self._resolve(host, port))
        failure: Exception | None = None
        for ip in allowed:
            try:
                stream = await self._inner.connect_tcp(str(ip), port, _clamp(timeout),
                                                       local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
                continue
            try:
                _peer_check(self.policy, host, stream.get_extra_info("server_addr"))
            except BaseException:
                await stream.aclose()
                raise
            return _AsyncGuardedStream(stream)
        assert failure is not None
        raise failure

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None
                                  ) -> httpcore.AsyncNetworkStream:
        raise BlockedAddress("refused by the address policy: unix sockets are never used")

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)


def sync_transport(policy: AddressPolicy, resolver: Resolver | None) -> httpx.HTTPTransport:
    # trust_env=False: a proxy from the environment would hide the address connected to.
    transport = httpx.HTTPTransport(trust_env=False)
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(), max_connections=100,
        max_keepalive_connections=20, keepalive_expiry=5.0,
        network_backend=GuardedBackend(policy, resolver))
    return transport


def async_transport(policy: AddressPolicy, resolver: Resolver | None, *,
                    max_connections: int = 100, max_keepalive: int = 20,
                    ssl_context: ssl.SSLContext | None = None) -> httpx.AsyncHTTPTransport:
    """The async transport. Batch makes one per host (a small pool each) sharing one
    TLS context: building a context loads the CA bundle, about 20 ms."""
    context = ssl_context or httpx.create_ssl_context()
    transport = httpx.AsyncHTTPTransport(verify=context, trust_env=False)
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=context, max_connections=max_connections,
        max_keepalive_connections=max_keepalive, keepalive_expiry=5.0,
        network_backend=AsyncGuardedBackend(policy, resolver))
    return transport
