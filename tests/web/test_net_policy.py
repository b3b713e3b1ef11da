"""The address policy in the client: every hop, the address actually connected to.

No packet leaves loopback: non-loopback names resolve through a stub resolver
(``dns``), and ``loopback_only`` fails any attempt to connect elsewhere.
Loopback spellings target the test server, which must receive nothing when
the policy refuses.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpcore
import pytest

from fetchledger import Ledger
from fetchledger.errors import BlockedAddress, DNSError, HTTPStatusError
from fetchledger.net.client import AsyncHTTPClient, HTTPClient, HTTPRequest
from fetchledger.net.connections import GuardedBackend
from fetchledger.net.policy import AddressPolicy

from .conftest import StubDNS
from .webserver import LoopbackServer

SPELLINGS = ["127.0.0.1", "127.1", "0x7f.1", "0x7F000001", "2130706433", "0177.0.0.1",
             "127.0.0.1.", "[::ffff:127.0.0.1]", "localhost", "LOCALHOST"]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_loopback_spellings_are_refused_and_the_server_hears_nothing(
        web: LoopbackServer, dns: StubDNS, spelling: str) -> None:
    before = web.connections
    with HTTPClient() as client, pytest.raises(BlockedAddress) as caught:
        client.get(f"http://{spelling}:{web.port}/pages/article")
    assert "loopback" in caught.value.message and "--allow-private" in caught.value.message
    assert web.connections == before


@pytest.mark.parametrize("spelling", ["127.1", "0x7f.1", "2130706433", "[::ffff:127.0.0.1]"])
def test_allow_private_reaches_the_server_by_any_spelling(web: LoopbackServer,
                                                         spelling: str) -> None:
    with HTTPClient(allow_private=True) as client:
        response = client.get(f"http://{spelling}:{web.port}/pages/article")
    assert response.status == 200 and b"honeybee" in response.content


def test_allow_host_opens_one_host_name_only(web: LoopbackServer, dns: StubDNS) -> None:
    with HTTPClient(allow_hosts=["LocalHost"]) as client:
        assert client.get(f"http://localhost:{web.port}/pages/news").status == 200
        before = web.connections
        with pytest.raises(BlockedAddress):
            client.get(f"http://127.0.0.1:{web.port}/pages/news")
    assert web.connections == before


@pytest.mark.parametrize(("name", "address", "reason"), [
    ("intranet.test", "10.0.0.5", "private"),
    ("router.test", "192.168.1.1", "private"),
    ("metadata.test", "169.254.169.254", "cloud-metadata"),
    ("cgnat.test", "100.64.0.7", "carrier-grade NAT"),
    ("v6.test", "fd00::5", "private"),
    ("nat64.test", "64:ff9b::a00:5", "private"),
    ("mapped.test", "::ffff:10.0.0.5", "private"),
    ("multicast.test", "224.0.0.251", "multicast"),
])
def test_names_resolving_to_refused_addresses_are_blocked_before_connecting(
        dns: StubDNS, name: str, address: str, reason: str) -> None:
    dns[name] = [address]
    with HTTPClient() as client, pytest.raises(BlockedAddress) as caught:
        client.get(f"https://{name}/")
    assert reason in caught.value.message
    assert dns.calls == [name]


def test_cloud_metadata_stays_closed_under_allow_private(dns: StubDNS) -> None:
    dns["metadata.google.internal"] = ["169.254.169.254"]
    with HTTPClient(allow_private=True) as client, pytest.raises(BlockedAddress) as caught:
        client.get("http://metadata.google.internal/computeMetadata/v1/")
    assert "cloud-metadata" in caught.value.message
    assert "--allow-host metadata.google.internal" in caught.value.message
    with HTTPClient(allow_private=True) as client, pytest.raises(BlockedAddress):
        client.get("http://169.254.169.254/latest/meta-data/")


def test_literal_addresses_are_judged_before_any_lookup(dns: StubDNS) -> None:
    with HTTPClient() as client:
        for url in ("http://10.0.0.5/", "http://[fe80::1]/", "http://0xa9fea9fe/",
                    "http://[::ffff:169.254.169.254]/"):
            with pytest.raises(BlockedAddress):
                client.get(url)
    assert dns.calls == []


class RecordingBackend(httpcore.NetworkBackend):
    """Stands in for the socket layer: records where it was asked to connect."""

    def __init__(self, peer: str | None = None) -> None:
        self.connected: list[str] = []
        self.peer = peer

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None, socket_options: Any = None
                    ) -> httpcore.NetworkStream:
        self.connected.append(host)
        peer = self.peer or host
        return httpcore.MockStream([]) if self.peer is None else _PeerStream(peer)


class _PeerStream(httpcore.MockStream):
    def __init__(self, peer: str) -> None:
        super().__init__([])
        self.peer = peer
        self.closed = False

    def get_extra_info(self, info: str) -> Any:
        return (self.peer, 80) if info == "server_addr" else None

    def close(self) -> None:
        self.closed = True


def test_it_connects_to_the_very_address_it_judged() -> None:
    """DNS rebinding: the name is resolved once, and the judged address is connected to."""
    answers = iter([["93.184.216.34"], ["127.0.0.1"], ["127.0.0.1"]])
    calls: list[str] = []

    def rebinding(host: str, port: int) -> list[str]:
        calls.append(host)
        return next(answers)

    inner = RecordingBackend()
    backend = GuardedBackend(AddressPolicy(), rebinding, inner)
    backend.connect_tcp("rebind.test", 80)
    assert inner.connected == ["93.184.216.34"] and calls == ["rebind.test"]
    with pytest.raises(BlockedAddress):
        backend.connect_tcp("rebind.test", 80)  # the next lookup answers loopback
    assert inner.connected == ["93.184.216.34"]


def test_the_connected_peer_is_judged_too() -> None:
    inner = RecordingBackend(peer="127.0.0.1")  # the socket ended up on loopback
    backend = GuardedBackend(AddressPolicy(), lambda h, p: ["93.184.216.34"], inner)
    with pytest.raises(BlockedAddress):
        backend.connect_tcp("sneaky.test", 80)


def test_a_name_with_public_and_private_answers_uses_only_the_public_one() -> None:
    inner = RecordingBackend()
    backend = GuardedBackend(AddressPolicy(), lambda h, p: ["10.0.0.5", "93.184.216.34"], inner)
    backend.connect_tcp("mixed.test", 443)
    assert inner.connected == ["93.184.216.34"]


def test_every_redirect_hop_is_judged(web: LoopbackServer, dns: StubDNS) -> None:
    dns["intranet.test"] = ["10.0.0.5"]
    port = web.port
    with HTTPClient(allow_hosts=["127.0.0.1"]) as client:
        for target in (f"http://localhost:{port}/pages/article", "http://intranet.test/admin",
                       "http://169.254.169.254/latest/", "http://[::1]/",
                       f"http://2130706434:{port}/", f"http://0x7f.2:{port}/",
                       f"http://127.0.0.2:{port}/"):
            hits = len(web.hits)
            with pytest.raises(BlockedAddress) as caught:
                client.get(web.url(f"/redirect-to?url={target}"))
            assert "address policy" in caught.value.message
            assert len(web.hits) == hits + 1  # the first hop only


def test_redirects_to_other_schemes_are_blocked(web: LoopbackServer) -> None:
    with HTTPClient(allow_private=True) as client:
        for target in ("file:///etc/passwd", "ftp://files.example/x", "gopher://x/"):
            with pytest.raises(BlockedAddress, match=r"only http and https"):
                client.get(web.url(f"/redirect-to?url={target}"))


def test_unfollowed_redirect_to_a_refused_address_is_blocked(web: LoopbackServer,
                                                             dns: StubDNS) -> None:
    """curl without -L: a 3xx is an http_error naming the Location, unless it points
    at a refused address (blocked_address) — judged without connecting."""
    dns["intranet.test"] = ["10.0.0.5"]
    with HTTPClient(allow_hosts=["127.0.0.1"]) as client:
        with pytest.raises(BlockedAddress, match=r"private"):
            client.send(HTTPRequest(web.url("/redirect-to?url=http://intranet.test/x"),
                                    follow_redirects=False))
        dns["public.test"] = ["93.184.216.34"]
        with pytest.raises(HTTPStatusError, match=r"redirects to http://public.test/x") as err:
            client.send(HTTPRequest(web.url("/redirect-to?url=http://public.test/x"),
                                    follow_redirects=False))
        assert err.value.http_status == 302


def test_dns_failure_is_a_dns_error(dns: StubDNS) -> None:
    with HTTPClient() as client, pytest.raises(DNSError, match=r"no-such-host.test"):
        client.get("https://no-such-host.test/")


def test_the_ledger_honours_the_environment_switch(web: LoopbackServer, ledger_path: Any,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    with Ledger(ledger_path) as ledger, pytest.raises(BlockedAddress):
        ledger.fetch(web.url("/pages/article"))
    monkeypatch.setenv("FETCHLEDGER_ALLOW_PRIVATE", "1")
    with Ledger(ledger_path) as ledger:
        assert ledger.fetch(web.url("/pages/article")).source.id == 1
        assert [a.status for a in ledger.attempts()] == ["blocked_address", "ok"]


def test_the_async_client_applies_the_same_policy(web: LoopbackServer, dns: StubDNS) -> None:
    dns["intranet.test"] = ["10.0.0.5"]

    async def scenario() -> list[str]:
        outcomes = []
        async with AsyncHTTPClient(allow_hosts=["127.0.0.1"]) as client:
            for url in (f"http://localhost:{web.port}/", "http://intranet.test/",
                        web.url("/redirect-to?url=http://0x7f.2/"), "http://[::ffff:10.0.0.5]/"):
                try:
                    await client.get(url)
                    outcomes.append("ok")
                except BlockedAddress:
                    outcomes.append("blocked")
            response = await client.get(web.url("/pages/article"))
            outcomes.append(str(response.status))
        return outcomes

    before = web.connections
    assert asyncio.run(scenario()) == ["blocked", "blocked", "blocked", "blocked", "200"]
    assert web.connections - before <= 2  # the redirecting hop and the allowed page
