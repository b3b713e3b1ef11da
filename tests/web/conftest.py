"""Fixtures of the web tests (tests/web/).

- ``loopback_only`` (autouse): any socket connect to an
  address outside 127.0.0.0/8 or ::1 fails the test before a packet leaves.
- ``web``: the loopback test server (one per test module), replies reset per test.
- ``dns``: a stub resolver, ``dns["intranet.test"] = ["10.0.0.5"]``; unknown
  names fail as the system resolver would (``socket.gaierror``).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from .webserver import LoopbackServer


def _is_loopback(address: Any) -> bool:
    if not isinstance(address, tuple):
        return True  # unix sockets never leave the machine
    try:
        ip = ipaddress.ip_address(str(address[0]).split("%", 1)[0])
    except ValueError:
        return False  # a host name: fetchledger always connects to a judged address
    mapped = getattr(ip, "ipv4_mapped", None)
    return bool((mapped or ip).is_loopback)


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail the test if anything tries to connect outside loopback (checked again at
    teardown, in case a library swallowed the error)."""
    connect, connect_ex = socket.socket.connect, socket.socket.connect_ex
    violations: list[Any] = []

    def refuse(address: Any) -> None:
        violations.append(address)
        raise AssertionError(f"a test tried to connect to {address!r}")

    def guarded(self: socket.socket, address: Any) -> Any:
        if not _is_loopback(address):
            refuse(address)
        return connect(self, address)

    def guarded_ex(self: socket.socket, address: Any) -> Any:
        if not _is_loopback(address):
            refuse(address)
        return connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_ex)
    yield
    assert not violations, f"connections outside loopback were attempted: {violations}"


@pytest.fixture(scope="module")
def web_server() -> Iterator[LoopbackServer]:
    server = LoopbackServer().start()
    yield server
    server.stop()


@pytest.fixture
def web(web_server: LoopbackServer) -> LoopbackServer:
    web_server.reset_replies()
    return web_server


class StubDNS(dict[str, list[str]]):
    """Host name -> addresses; records every lookup in ``calls``."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def resolve(self, host: str, port: int) -> list[str]:
        self.calls.append(host)
        key = host.lower().rstrip(".")
        if key not in self:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return list(self[key])


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> StubDNS:
    stub = StubDNS()
    stub["localhost"] = ["127.0.0.1"]
    monkeypatch.setattr("fetchledger.net.connections.system_resolver", stub.resolve)
    return stub
