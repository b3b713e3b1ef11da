"""The policy proxy the browser goes through (net/proxy.py), spoken to directly.

Each request is judged by the HTTP client's own guarded connect: a refused host
hears nothing, the refusal is logged, every plain request gets a connection of
its own (so the next one, for any host, is judged anew), tunnels are judged once
for their one destination, and the deadline and byte cap end everything.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from fetchledger.net.connections import Budget
from fetchledger.net.policy import AddressPolicy
from fetchledger.net.proxy import PolicyProxy

from .conftest import StubDNS
from .webserver import LoopbackServer


def _proxy(policy: AddressPolicy, *, seconds: float = 10.0, max_bytes: int = 10**7,
           internal: frozenset[str] = frozenset()) -> PolicyProxy:
    return PolicyProxy(policy, budget=Budget(time.monotonic() + seconds, seconds),
                       connect_timeout=5.0, max_bytes=max_bytes, internal_hosts=internal)


def _exchange(proxy: PolicyProxy, request: bytes, *, then: bytes = b"") -> bytes:
    """Send ``request`` to the proxy, then ``then`` once its first answer arrived;
    everything read until the proxy closes the connection."""
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
        sock.sendall(request)
        received = sock.recv(65536)
        if then:
            sock.sendall(then)
        while chunk := sock.recv(65536):
            received += chunk
    return received


@pytest.fixture
def other() -> Iterator[LoopbackServer]:
    """A second host (127.0.0.2) that the policy does not allow."""
    server = LoopbackServer("127.0.0.2").start()
    yield server
    server.stop()


def _allow_web() -> AddressPolicy:
    return AddressPolicy.of(False, ["127.0.0.1"])


def test_a_plain_request_is_forwarded_and_its_connection_closed(web: LoopbackServer) -> None:
    with _proxy(_allow_web()) as proxy:
        answer = _exchange(proxy, f"GET {web.url('/pages/notes')} HTTP/1.1\r\nHost: "
                           f"{web.host}:{web.port}\r\nProxy-Connection: keep-alive\r\n"
                           f"Connection: keep-alive\r\n\r\n".encode())
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    assert b"Connection: close" in head.split(b"\r\n")
    assert b"tidal pools" in body
    assert web.hits[-1].path == "/pages/notes"  # origin form upstream
    assert web.hits[-1].headers.get("Connection") == "close"
    assert "Proxy-Connection" not in web.hits[-1].headers
    assert (proxy.log.requests, proxy.log.refused) == (1, [])


def test_a_second_request_on_the_same_connection_is_not_forwarded(
        web: LoopbackServer, other: LoopbackServer) -> None:
    """After one response the connection ends: a request for a refused host sent on it
    reaches neither that host nor the first one."""
    policy = AddressPolicy.of(False, ["127.0.0.1"])
    before = len(web.hits)
    with _proxy(policy) as proxy:
        answer = _exchange(
            proxy, f"GET {web.url('/pages/notes')} HTTP/1.1\r\nHost: x\r\n\r\n".encode(),
            then=f"GET {other.url('/pages/notes')} HTTP/1.1\r\nHost: y\r\n\r\n".encode())
    assert answer.count(b"HTTP/1.1 ") == 1
    assert [h.path for h in web.hits[before:]] == ["/pages/notes"] and other.connections == 0


@pytest.mark.parametrize("form", ["absolute", "connect"])
def test_a_refused_host_hears_nothing_and_the_refusal_is_logged(
        other: LoopbackServer, form: str) -> None:
    with _proxy(_allow_web()) as proxy:
        request = (f"GET {other.url('/pages/notes')} HTTP/1.1\r\nHost: x\r\n\r\n"
                   if form == "absolute" else
                   f"CONNECT 127.0.0.2:{other.port} HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = _exchange(proxy, request.encode())
    assert answer.startswith(b"HTTP/1.1 403")
    assert b"address policy" in answer
    assert other.connections == 0
    [refusal] = proxy.log.refused
    assert "127.0.0.2" in refusal.target and "loopback" in refusal.reason
    assert "--allow-host 127.0.0.2" in refusal.reason


def test_a_name_is_resolved_once_and_judged(web: LoopbackServer, dns: StubDNS) -> None:
    dns["intranet.test"] = ["10.0.0.5"]
    dns["app.test"] = ["127.0.0.1"]
    with _proxy(AddressPolicy.of(False, ["app.test"])) as proxy:
        refused = _exchange(proxy, b"GET http://intranet.test/ HTTP/1.1\r\nHost: x\r\n\r\n")
        allowed = _exchange(proxy, f"GET http://app.test:{web.port}/pages/notes HTTP/1.1\r\n"
                                   f"Host: app.test\r\n\r\n".encode())
    assert refused.startswith(b"HTTP/1.1 403") and b"private" in refused
    assert allowed.startswith(b"HTTP/1.1 200")
    assert dns.calls == ["intranet.test", "app.test"]


def test_a_tunnel_carries_bytes_to_its_one_judged_destination(web: LoopbackServer) -> None:
    with _proxy(_allow_web()) as proxy, \
            socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
        sock.sendall(f"CONNECT 127.0.0.1:{web.port} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /pages/notes HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    assert b"tidal pools" in received and proxy.log.tunnels == 1


@pytest.mark.parametrize("target", ["ftp://127.0.0.1/file", "file:///etc/passwd",
                                    "/relative/path"])
def test_other_schemes_and_forms_are_refused(web: LoopbackServer, target: str) -> None:
    before = web.connections
    with _proxy(AddressPolicy.of(True)) as proxy:
        answer = _exchange(proxy, f"GET {target} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 400")
    assert web.connections == before


def test_internal_hosts_are_answered_without_a_lookup(dns: StubDNS) -> None:
    with _proxy(AddressPolicy.of(True), internal=frozenset({"services.invalid"})) as proxy:
        answer = _exchange(proxy, b"GET http://services.invalid/cu?x=1 HTTP/1.1\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 404")
    assert dns.calls == [] and proxy.log.internal == 1 and proxy.log.refused == []


def test_the_byte_cap_closes_every_connection(web: LoopbackServer) -> None:
    with _proxy(_allow_web(), max_bytes=50_000) as proxy:
        answer = _exchange(proxy, f"GET {web.url('/huge?bytes=5000000')} HTTP/1.1\r\n"
                                  f"Host: x\r\n\r\n".encode())
    assert proxy.log.over_cap and len(answer) < 200_000


def test_the_deadline_ends_a_stalled_response(web: LoopbackServer) -> None:
    started = time.monotonic()
    with _proxy(_allow_web(), seconds=1.0) as proxy:
        _exchange(proxy, f"GET {web.url('/stall')} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert time.monotonic() - started < 3.0


def test_close_ends_open_connections(web: LoopbackServer) -> None:
    proxy = _proxy(_allow_web()).start()
    done = threading.Event()

    def stalled() -> None:
        _exchange(proxy, f"GET {web.url('/stall')} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        done.set()

    threading.Thread(target=stalled, daemon=True).start()
    time.sleep(0.3)
    proxy.close()
    assert done.wait(3.0)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", proxy.port), timeout=1).close()


def test_a_request_body_is_forwarded_by_its_length_and_a_chunked_one_refused(
        web: LoopbackServer) -> None:
    with _proxy(_allow_web()) as proxy:
        sent = _exchange(proxy, f"POST {web.url('/echo')} HTTP/1.1\r\nHost: x\r\n"
                                f"Content-Length: 11\r\n\r\nhello world".encode())
        chunked = _exchange(proxy, f"POST {web.url('/echo')} HTTP/1.1\r\nHost: x\r\n"
                                   f"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
                                   .encode())
    assert sent.startswith(b"HTTP/1.1 200") and b'"body": "hello world"' in sent
    assert chunked.startswith(b"HTTP/1.1 411")
    assert proxy.log.requests == 1
