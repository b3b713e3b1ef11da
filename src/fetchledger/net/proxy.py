"""A local HTTP proxy that puts a browser behind the address policy (DESIGN §8).

The browser (:mod:`fetchledger.adapters.browser`) is started with
``--proxy-server`` pointing here, loopback not bypassed and its own host
resolver turned off, so every request a page makes — the document, scripts,
XHR/fetch, images, redirects, WebSockets — arrives here first, and this
proxy opens the upstream connection with the HTTP client's own guarded
connect (:class:`~fetchledger.net.connections.GuardedBackend`: the host
resolved once, every address judged, the socket opened to a judged address
and its peer judged again):

- ``GET http://host/path`` (absolute form): one request per browser
  connection. The request goes upstream with ``Connection: close`` and the
  response head comes back with ``Connection: close``, so the browser's next
  request — perhaps for another host — arrives on a new connection and is
  judged anew.
- ``CONNECT host:port`` (https, wss, ws): judged the same way, then a blind
  tunnel to the judged address.

Hosts named in ``internal_hosts`` (where the browser's own services are
pointed) are answered ``404`` here, without a connection or a DNS lookup.
A refused request is answered ``403`` and recorded in :attr:`PolicyProxy.log`
(nothing is sent to its host); a host that cannot be reached is answered
``502``. One deadline (:class:`~fetchledger.net.connections.Budget`) bounds
every socket operation, and a byte cap bounds what a page may pull through.
The proxy listens on 127.0.0.1 on an ephemeral port; :meth:`PolicyProxy.close`
ends every connection.
"""

from __future__ import annotations

import contextlib
import http
import selectors
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpcore

from ..errors import BlockedAddress, FetchLedgerError, RetrievalTimeout
from ..identity.urls import redact_url
from .connections import Budget, GuardedBackend, Resolver, budget_scope
from .policy import AddressPolicy

__all__ = ["PolicyProxy", "ProxyLog", "Refusal"]

_MAX_HEAD = 64 * 1024
_CHUNK = 64 * 1024
# Headers that describe one hop (RFC 9110 §7.6.1), never passed on.
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "proxy-authorization",
                         "proxy-authenticate", "te", "trailer", "upgrade"})


@dataclass(frozen=True)
class Refusal:
    """A request the proxy refused: its target (a redacted URL, or ``host:port`` of a
    tunnel) and why."""

    target: str
    reason: str


@dataclass
class ProxyLog:
    """What passed through: requests and tunnels opened, refusals, failures, bytes."""

    requests: int = 0  # plain-http requests forwarded
    tunnels: int = 0  # CONNECT tunnels opened (https, wss)
    refused: list[Refusal] = field(default_factory=list)
    unreachable: list[str] = field(default_factory=list)  # DNS, refused or timed out
    internal: int = 0  # requests for internal hosts, answered here
    received: int = 0  # bytes from upstream hosts to the browser
    over_cap: bool = False  # the byte cap was reached and every connection closed

    def to_json(self) -> dict[str, object]:
        return {"requests": self.requests, "tunnels": self.tunnels,
                "refused": [{"target": r.target, "reason": r.reason} for r in self.refused],
                "unreachable": len(self.unreachable), "bytes_received": self.received,
                "over_byte_cap": self.over_cap}


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


class PolicyProxy:
    """An HTTP/CONNECT proxy on 127.0.0.1 whose every upstream connection obeys
    ``policy``; use as a context manager (it serves on daemon threads)."""

    def __init__(self, policy: AddressPolicy, resolver: Resolver | None = None, *,
                 budget: Budget, connect_timeout: float, max_bytes: int,
                 max_connections: int = 64, internal_hosts: frozenset[str] = frozenset()
                 ) -> None:
        self.policy = policy
        self.internal_hosts = internal_hosts
        self.budget = budget
        self.connect_timeout = connect_timeout
        self.max_bytes = max_bytes
        self.max_connections = max_connections
        self.log = ProxyLog()
        self._backend = GuardedBackend(policy, resolver)
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=128)
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._closed = threading.Event()
        self._acceptor = threading.Thread(target=self._accept, name="fetchledger-proxy",
                                          daemon=True)

    @property
    def port(self) -> int:
        return int(self._listener.getsockname()[1])

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> PolicyProxy:
        self._acceptor.start()
        return self

    def close(self) -> None:
        """Stop listening and end every open connection."""
        self._closed.set()
        with self._lock:
            sockets = list(self._open)
            self._open.clear()
        for sock in sockets:
            _close(sock)
        self._acceptor.join(timeout=1.0)
        _close(self._listener)

    def __enter__(self) -> PolicyProxy:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- bookkeeping ---

    def _accept(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self._listener, selectors.EVENT_READ)
            while not self._closed.is_set():
                if not selector.select(0.1):
                    continue
                try:
                    client, _ = self._listener.accept()
                except OSError:
                    continue
                if not self._track(client):
                    _send_refusal(client, 503, "too many connections at once")
                    _close(client)
                    continue
                threading.Thread(target=self._serve, args=(client,), daemon=True,
                                 name="fetchledger-proxy-connection").start()

    def _track(self, sock: socket.socket) -> bool:
        with self._lock:
            if self._closed.is_set() or len(self._open) >= 2 * self.max_connections:
                return False
            self._open.add(sock)
            return True

    def _untrack(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.discard(sock)
        _close(sock)

    @contextlib.contextmanager
    def _upstream(self, host: str, port: int, shown: str) -> Iterator[socket.socket]:
        """A connection to ``host:port`` opened by the guarded connect, or _Refused."""
        if host.lower() in self.internal_hosts:
            with self._lock:
                self.log.internal += 1
            raise _Refused(404, "not served")
        try:
            stream = self._backend.connect_tcp(host, port, timeout=self.connect_timeout)
        except BlockedAddress as exc:
            with self._lock:
                self.log.refused.append(Refusal(shown, exc.message))
            raise _Refused(403, exc.message) from exc
        except (FetchLedgerError, httpcore.ConnectError, httpcore.ConnectTimeout,
                OSError) as exc:
            with self._lock:
                self.log.unreachable.append(shown)
            timed_out = isinstance(exc, (RetrievalTimeout, httpcore.ConnectTimeout))
            raise _Refused(504 if timed_out else 502, f"cannot reach {shown}") from exc
        sock: socket.socket = stream.get_extra_info("socket")
        if not self._track(sock):
            _close(sock)
            raise _Refused(503, "the proxy is closing")
        try:
            yield sock
        finally:
            self._untrack(sock)

    # --- one browser connection ---

    def _serve(self, client: socket.socket) -> None:
        try:
            with budget_scope(self.budget):
                head, rest = _read_head(client, self.budget)
                if head is None:
                    return
                method, target, headers = _parse_request(head)
                try:
                    if method == "CONNECT":
                        self._tunnel(client, target)
                    else:
                        self._forward(client, method, target, headers, rest)
                except _Refused as refused:
                    _send_refusal(client, refused.status, refused.message)
        except (OSError, ValueError, FetchLedgerError):
            pass  # the browser sees the connection close; the log holds the refusals
        finally:
            self._untrack(client)

    def _tunnel(self, client: socket.socket, target: str) -> None:
        host, port = _authority(target)
        with self._upstream(host, port, target) as upstream:
            with self._lock:
                self.log.tunnels += 1
            client.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            self._relay(client, upstream, None)

    def _forward(self, client: socket.socket, method: str, target: str,
                 headers: list[tuple[str, str]], rest: bytes) -> None:
        parts = urlsplit(target)
        if parts.scheme.lower() != "http" or not parts.hostname:
            raise _Refused(400, f"the proxy forwards only http:// URLs, not {target[:80]!r}")
        shown = redact_url(target)
        port = parts.port or 80
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        named = {v.strip().lower() for n, v in headers if n.lower() == "connection"
                 for v in v.split(",")}
        kept = [(n, v) for n, v in headers if n.lower() not in _HOP_BY_HOP | named]
        upstream_head = "".join(
            [f"{method} {path} HTTP/1.1\r\n", *(f"{n}: {v}\r\n" for n, v in kept),
             "Connection: close\r\n\r\n"]).encode("latin-1")
        body = _request_body(client, headers, rest, self.budget)
        with self._upstream(parts.hostname, port, shown) as upstream:
            with self._lock:
                self.log.requests += 1
            upstream.sendall(upstream_head + body)
            self._relay(client, upstream, _ResponseHead())

    def _relay(self, client: socket.socket, upstream: socket.socket,
               head: _ResponseHead | None) -> None:
        """Copy bytes until either side closes, the deadline passes or the byte cap is
        reached. With ``head`` (one forwarded request) only the response flows,
        through ``head`` first, and anything more from the browser ends the exchange;
        without it (a tunnel) bytes flow both ways."""
        with selectors.DefaultSelector() as selector:
            selector.register(client, selectors.EVENT_READ, upstream)
            selector.register(upstream, selectors.EVENT_READ, client)
            while True:
                left = self.budget.left()
                if left <= 0 or self._closed.is_set():
                    return
                for key, _ in selector.select(min(left, 0.5)):
                    source: socket.socket = key.fileobj  # type: ignore[assignment]
                    data = source.recv(_CHUNK)
                    if not data:
                        return
                    if source is upstream:
                        if not self._count(len(data)):
                            return
                        if head is not None:
                            data = head.feed(data)
                    elif head is not None:
                        return  # a second request on this connection: never forwarded
                    if data:
                        key.data.sendall(data)

    def _count(self, size: int) -> bool:
        with self._lock:
            self.log.received += size
            if self.log.received <= self.max_bytes:
                return True
            self.log.over_cap = True
        self._closed.set()  # the page pulled too much: every connection ends
        return False


class _ResponseHead:
    """Rewrites the response head so the browser's connection closes after it (the
    next request is then judged on a connection of its own)."""

    def __init__(self) -> None:
        self._buffer = b""
        self._done = False

    def feed(self, data: bytes) -> bytes:
        if self._done:
            return data
        self._buffer += data
        out = b""
        while not self._done:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buffer) > _MAX_HEAD:
                    raise ValueError("the response head is too large")
                return out
            head, self._buffer = self._buffer[:end], self._buffer[end + 4 :]
            lines = head.split(b"\r\n")
            status = lines[0].split(b" ", 2)
            code = int(status[1]) if len(status) > 1 and status[1].isdigit() else 0
            if code == 101:  # switching protocols: the rest is not HTTP
                out += head + b"\r\n\r\n"
                self._done = True
            elif 100 <= code < 200:  # an interim response: the real head follows
                out += head + b"\r\n\r\n"
            else:
                kept = [line for line in lines[1:]
                        if line.split(b":", 1)[0].strip().lower().decode("latin-1")
                        not in _HOP_BY_HOP]
                out += b"\r\n".join([lines[0], *kept, b"Connection: close"]) + b"\r\n\r\n"
                self._done = True
        out += self._buffer
        self._buffer = b""
        return out


def _read_head(sock: socket.socket, budget: Budget) -> tuple[bytes | None, bytes]:
    """The request head (without its blank line) and the bytes read past it."""
    buffer = b""
    while b"\r\n\r\n" not in buffer:
        left = budget.left()
        if left <= 0 or len(buffer) > _MAX_HEAD:
            return None, b""
        sock.settimeout(left)
        data = sock.recv(_CHUNK)
        if not data:
            return None, b""
        buffer += data
    sock.settimeout(None)
    head, _, rest = buffer.partition(b"\r\n\r\n")
    return head, rest


def _request_body(sock: socket.socket, headers: list[tuple[str, str]], rest: bytes,
                  budget: Budget) -> bytes:
    """The request body announced by Content-Length (a chunked upload is refused)."""
    named = {n.lower(): v for n, v in headers}
    if "chunked" in named.get("transfer-encoding", "").lower():
        raise _Refused(411, "the proxy does not forward chunked uploads")
    length = named.get("content-length", "0").strip()
    if not length.isdigit():
        raise _Refused(400, "a malformed Content-Length")
    size = int(length)
    body = rest
    while len(body) < size:
        left = budget.left()
        if left <= 0:
            raise _Refused(504, "the request body did not arrive in time")
        sock.settimeout(left)
        data = sock.recv(min(_CHUNK, size - len(body)))
        if not data:
            raise _Refused(400, "the request body was cut short")
        body += data
    sock.settimeout(None)
    return body[:size]


def _parse_request(head: bytes) -> tuple[str, str, list[tuple[str, str]]]:
    lines = head.decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            raise ValueError(f"malformed header line {line[:80]!r}")
        headers.append((name.strip(), value.strip()))
    return method.upper(), target, headers


def _authority(target: str) -> tuple[str, int]:
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536 or not host:
        raise _Refused(400, f"not host:port: {target[:80]!r}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


def _send_refusal(sock: socket.socket, status: int, message: str) -> None:
    body = (message + "\n").encode("utf-8", "replace")
    reason = http.HTTPStatus(status).phrase
    head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    with contextlib.suppress(OSError):
        sock.sendall(head + body)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
