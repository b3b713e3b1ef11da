"""The address policy under attack, table by table (DESIGN §8, §2.4).

Every spelling of a refused address, names that resolve to one, DNS answers that
change between check and connect, redirects into one (the robots.txt request
included), and schemes other than http(s). Each row says what must happen:

- ``blocked_address``: refused by the policy; a failed attempt is recorded, no id.
- ``invalid_url``: not a URL fetchledger accepts (bad input, exit 2): nothing recorded.

No packet leaves loopback: loopback spellings target the test server on
127.0.0.1, which must receive nothing; other addresses are only ever *answers*
of the stub resolver (``dns``), judged before any socket opens (the
``loopback_only`` fixture fails a test that tries), or real servers inside a
network namespace with no route out (``unshare -n``, at the end of this file).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from fetchledger import Ledger
from fetchledger.errors import BlockedAddress, FetchLedgerError, InvalidURL
from fetchledger.net.client import AsyncHTTPClient

from .conftest import StubDNS
from .webserver import LoopbackServer, Reply
from conftest import rows, table_counts

BLOCKED, INVALID = "blocked_address", "invalid_url"

# --- every spelling of the test server's own address (127.0.0.1) -----------------------
# (spelling of the authority, {port} filled in; expected status; what the trick is)
LOOPBACK_SPELLINGS: list[tuple[str, str, str]] = [
    ("127.0.0.1:{port}", BLOCKED, "dotted quad"),
    ("2130706433:{port}", BLOCKED, "decimal"),
    ("0177.0.0.1:{port}", BLOCKED, "octal"),
    ("0177.0.0.01:{port}", BLOCKED, "octal, every part"),
    ("017700000001:{port}", BLOCKED, "octal, one number"),
    ("0x7f.0.0.1:{port}", BLOCKED, "hex first part"),
    ("0x7f.0x0.0x0.0x1:{port}", BLOCKED, "hex parts"),
    ("0x7F000001:{port}", BLOCKED, "hex, one number"),
    ("127.1:{port}", BLOCKED, "short form a.d"),
    ("127.0.1:{port}", BLOCKED, "short form a.b.d"),
    ("0x7f.1:{port}", BLOCKED, "short hex"),
    ("127.000.000.001:{port}", BLOCKED, "zero-padded"),
    ("127.0.0.1.:{port}", BLOCKED, "trailing dot"),
    ("127.0.0.2:{port}", BLOCKED, "another loopback address"),
    ("127.255.255.254:{port}", BLOCKED, "the top of 127/8"),
    ("[::ffff:127.0.0.1]:{port}", BLOCKED, "IPv4-mapped IPv6"),
    ("[::ffff:7f00:1]:{port}", BLOCKED, "IPv4-mapped, hex"),
    ("[0:0:0:0:0:ffff:127.0.0.1]:{port}", BLOCKED, "IPv4-mapped, long"),
    ("[::127.0.0.1]:{port}", BLOCKED, "IPv4-compatible IPv6"),
    ("[64:ff9b::127.0.0.1]:{port}", BLOCKED, "NAT64"),
    ("[64:ff9b::7f00:1]:{port}", BLOCKED, "NAT64, hex"),
    ("[::1]:{port}", BLOCKED, "IPv6 loopback"),
    ("[::ffff:127.0.0.1%25lo]:{port}", INVALID, "zone id (refused as a URL)"),
    ("localhost:{port}", BLOCKED, "a name for it"),
    ("LOCALHOST:{port}", BLOCKED, "a name, upper case"),
    ("localhost.:{port}", BLOCKED, "a name, trailing dot"),
    ("127\u30020\u30020\u30021:{port}", BLOCKED, "ideographic full stops (IDNA maps them)"),
    ("a@127.0.0.1:{port}", BLOCKED, "user-info before the host"),
    ("user:pass@127.0.0.1:{port}", BLOCKED, "user and password"),
    # a backslash ends the authority (WHATWG): the host is evil.example, which the stub
    # DNS of these tests resolves to loopback (session 11; RFC 3986 read 127.0.0.1)
    ("evil.example\\@127.0.0.1:{port}", BLOCKED, "backslash in the user-info"),
    ("1.1.1.1 &@127.0.0.1:{port}# @3.3.3.3", BLOCKED, "parser-confusion (the host is "
                                                      "127.0.0.1, as WHATWG reads it)"),
    ("\uff11\uff12\uff17\uff0e\uff10\uff0e\uff10\uff0e\uff11:{port}", INVALID,
     "fullwidth digits and dots"),
    ("\uff11\uff12\uff17.0.0.1:{port}", INVALID, "fullwidth digits"),
    ("%31%32%37.0.0.1:{port}", INVALID, "percent-encoded digits"),
    ("127%2e0%2e0%2e1:{port}", INVALID, "percent-encoded dots"),
    ("\u24db\u24de\u24d2\u24d0\u24db\u24d7\u24de\u24e2\u24e3:{port}", INVALID,
     "circled letters (ⓛⓞⓒⓐⓛⓗⓞⓢⓣ)"),
    ("evil.example%40127.0.0.1:{port}", INVALID, "percent-encoded @"),
    ("evil.example\\.127.0.0.1:{port}", BLOCKED, "backslash in the host"),
    ("1.2.3.4.127.0.0.1:{port}", INVALID, "five numeric parts"),
    ("0x7f.0.0.256:{port}", INVALID, "a part out of range"),
]


@pytest.mark.parametrize(("authority", "status", "trick"), LOOPBACK_SPELLINGS,
                         ids=[row[2] for row in LOOPBACK_SPELLINGS])
def test_every_spelling_of_loopback_is_refused_and_the_server_hears_nothing(
        web: LoopbackServer, dns: StubDNS, ledger_path: Path, authority: str, status: str,
        trick: str) -> None:
    dns["evil.example"] = ["127.0.0.1"]
    url = f"http://{authority.format(port=web.port)}/pages/article"
    before = web.connections
    with Ledger(ledger_path) as ledger, pytest.raises(FetchLedgerError) as caught:
        ledger.fetch(url)
    assert caught.value.status == status, caught.value.message
    assert web.connections == before, f"{trick}: the server was reached"
    counts = table_counts(ledger_path)
    assert counts["source"] == 0
    if status == BLOCKED:
        assert "address policy" in caught.value.message
        assert rows(ledger_path, "SELECT status FROM attempt") == [(BLOCKED,)]
    else:  # bad input records nothing, not even an attempt
        assert counts["attempt"] == 0


def test_the_same_spellings_through_the_async_client_and_the_cli(
        web: LoopbackServer, dns: StubDNS, run_cli: Any, ledger_path: Path) -> None:
    dns["evil.example"] = ["127.0.0.1"]
    blocked = [f"http://{a.format(port=web.port)}/" for a, s, _ in LOOPBACK_SPELLINGS
               if s == BLOCKED]

    async def scenario() -> list[str]:
        outcomes = []
        async with AsyncHTTPClient() as client:
            for url in blocked:
                try:
                    await client.get(url)
                    outcomes.append("fetched")
                except FetchLedgerError as error:
                    outcomes.append(error.status)
        return outcomes

    before = web.connections
    assert asyncio.run(scenario()) == [BLOCKED] * len(blocked)
    result = run_cli("--json", "fetch", *blocked[:8])
    assert result.exit_code == 3
    assert [item["error"]["status"] for item in json.loads(result.stdout)] == [BLOCKED] * 8
    assert "Traceback" not in result.stderr
    assert web.connections == before
    assert rows(ledger_path, "SELECT count(*) FROM source") == [(0,)]


# --- literal addresses of every refused class (judged before any lookup or socket) --------
LITERALS: list[tuple[str, str]] = [
    ("http://10.0.0.5/", "private"), ("http://172.16.0.1/", "private"),
    ("http://172.31.255.254/", "private"), ("http://192.168.1.1/", "private"),
    ("http://012.0.0.5/", "private"), ("http://0xc0a80101/", "private"),
    ("http://3232235777/", "private"), ("http://[fc00::1]/", "private"),
    ("http://[fd12:3456::1]/", "private"), ("http://169.254.1.1/", "link-local"),
    ("http://[fe80::1]/", "link-local"),
    ("http://100.64.0.1/", "carrier-grade NAT"), ("http://100.127.255.254/", "carrier-grade NAT"),
    ("http://224.0.0.1/", "multicast"), ("http://239.255.255.250/", "multicast"),
    ("http://[ff02::1]/", "multicast"), ("http://240.0.0.1/", "reserved"),
    ("http://255.255.255.255/", "reserved"), ("http://0.0.0.0/", "unspecified"),
    ("http://0/", "unspecified"), ("http://[::]/", "unspecified"),
    ("http://192.0.2.1/", "private"), ("http://198.18.0.1/", "private"),
    ("http://[fec0::1]/", "site-local"),
    ("http://169.254.169.254/latest/meta-data/", "cloud-metadata"),
    ("http://169.254.169.254./", "cloud-metadata"), ("http://2852039166/", "cloud-metadata"),
    ("http://0xA9FEA9FE/", "cloud-metadata"), ("http://0251.0376.0251.0376/", "cloud-metadata"),
    ("http://0xa9.0xfe.0xa9.0xfe/", "cloud-metadata"), ("http://169.254.43518/", "cloud-metadata"),
    ("http://[::ffff:169.254.169.254]/", "cloud-metadata"),
    ("http://[::ffff:a9fe:a9fe]/", "cloud-metadata"),
    ("http://[64:ff9b::169.254.169.254]/", "cloud-metadata"),
    ("http://[fd00:ec2::254]/", "cloud-metadata"), ("http://169.254.170.2/v2/", "cloud-metadata"),
    ("http://100.100.100.200/", "cloud-metadata"), ("http://168.63.129.16/", "cloud-metadata"),
    ("http://192.0.0.192/", "cloud-metadata"),
    ("http://[::ffff:10.0.0.1]/", "private (10.0.0.1 inside IPv4-mapped)"),
    ("http://[64:ff9b::a00:1]/", "private (10.0.0.1 inside NAT64)"),
    ("http://[64:ff9b:1::a00:1]/", "private (10.0.0.1 inside NAT64)"),
    ("http://[2002:c0a8:101::1]/", "private (192.168.1.1 inside 6to4)"),
    ("http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
     "loopback (127.0.0.1 inside Teredo client)"),
    ("http://user@10.0.0.5/", "private"), ("http://10.0.0.5:8080/", "private"),
    ("https://10.0.0.5/", "private"),
]


@pytest.mark.parametrize(("url", "reason"), LITERALS, ids=[u for u, _ in LITERALS])
def test_literal_addresses_of_every_class_are_refused_before_any_lookup(
        dns: StubDNS, ledger_path: Path, url: str, reason: str) -> None:
    with Ledger(ledger_path) as ledger, pytest.raises(BlockedAddress) as caught:
        ledger.fetch(url)
    assert f"is a {reason}" in caught.value.message
    assert dns.calls == []  # judged as written: nothing looked up, nothing connected
    assert rows(ledger_path, "SELECT status FROM attempt") == [(BLOCKED,)]


def test_allow_private_opens_all_but_metadata_and_allow_host_opens_one(dns: StubDNS) -> None:
    """The switches, judged on the same literals without connecting (the policy alone)."""
    import ipaddress

    from fetchledger.identity.addresses import parse_ip_host
    from fetchledger.identity.urls import parse_http_url
    from fetchledger.net.policy import AddressPolicy

    opened = AddressPolicy.of(allow_private=True)
    for url, reason in LITERALS:
        host = parse_http_url(url).host
        ip = parse_ip_host(host)
        assert ip is not None
        still = opened.refusal(ip, host)
        assert (still is not None) == reason.startswith("cloud-metadata"), url
        assert AddressPolicy.of(allow_hosts=[host]).refusal(ip, host) is None
    metadata = ipaddress.ip_address("169.254.169.254")
    assert AddressPolicy.of(allow_hosts=["other"]).refusal(metadata, "x") == "cloud-metadata"


# --- names that resolve to refused addresses ------------------------------------------------
RESOLVED: list[tuple[list[str], str]] = [
    (["127.0.0.1"], "loopback"), (["::1"], "loopback"), (["127.0.0.53"], "loopback"),
    (["10.1.2.3"], "private"), (["172.20.0.9"], "private"), (["192.168.0.10"], "private"),
    (["fd00::5"], "private"), (["169.254.7.7"], "link-local"), (["fe80::7"], "link-local"),
    (["100.64.0.7"], "carrier-grade NAT"), (["224.0.0.251"], "multicast"),
    (["ff02::fb"], "multicast"), (["240.1.2.3"], "reserved"), (["0.0.0.0"], "unspecified"),
    (["169.254.169.254"], "cloud-metadata"), (["fd00:ec2::254"], "cloud-metadata"),
    (["100.100.100.200"], "cloud-metadata"), (["::ffff:10.0.0.5"], "private"),
    (["64:ff9b::a9fe:a9fe"], "cloud-metadata"), (["2002:a00:5::1"], "private"),
    (["10.0.0.5", "127.0.0.1", "169.254.169.254"], "private"),  # several, all refused
    (["fe80::1%eth0"], "link-local"),  # a zone id in the answer
]


@pytest.mark.parametrize(("answers", "reason"), RESOLVED, ids=[",".join(a) for a, _ in RESOLVED])
def test_names_resolving_to_refused_addresses_never_connect(
        web: LoopbackServer, dns: StubDNS, ledger_path: Path, answers: list[str],
        reason: str) -> None:
    dns["target.test"] = answers
    before = web.connections
    with Ledger(ledger_path) as ledger, pytest.raises(BlockedAddress) as caught:
        ledger.fetch(f"http://target.test:{web.port}/pages/article")
    assert f"is a {reason}" in caught.value.message
    assert "target.test" in caught.value.message
    assert dns.calls == ["target.test"]
    assert web.connections == before  # loopback answers would have reached the server


@pytest.mark.parametrize(("url", "looked_up"), [
    ("http://127.0.0.1@evil.example/", "evil.example"),  # the host is evil.example
    ("http://127.0.0.1:80@evil.example/", "evil.example"),
    ("http://127.0.0.1%2f@evil.example/", "evil.example"),
    ("http://evil.example#@127.0.0.1/", "evil.example"),
    ("http://evil.example?@127.0.0.1/", "evil.example"),
])
def test_user_info_tricks_are_read_as_the_connection_reads_them(
        web: LoopbackServer, dns: StubDNS, ledger_path: Path, url: str, looked_up: str) -> None:
    """What stands before ``@`` (or after ``#``/``?``) is never the host: the name that is
    resolved is the one connected to and judged."""
    dns[looked_up] = ["10.9.8.7"]
    with Ledger(ledger_path) as ledger, pytest.raises(BlockedAddress, match=r"10\.9\.8\.7"):
        ledger.fetch(url)
    assert dns.calls == [looked_up]


# --- DNS rebinding: the address judged is the address connected to ----------------------


class FlippingDNS:
    """Answers ``first`` once per name, then ``then`` for ever (a rebinding attacker)."""

    def __init__(self, first: list[str], then: list[str]) -> None:
        self.first, self.then = first, then
        self.calls: list[str] = []

    def resolve(self, host: str, port: int) -> list[str]:
        self.calls.append(host)
        return self.first if len(self.calls) == 1 else self.then


def test_rebinding_between_check_and_connect_finds_no_window(
        web: LoopbackServer, monkeypatch: pytest.MonkeyPatch, ledger_path: Path) -> None:
    """The policy never resolves on its own: a second lookup (where an attacker answers
    loopback) never happens between judging and connecting. A refused first answer is
    refused; a public one is connected to exactly (no packet leaves: the stub backend
    below stands in for the socket)."""
    import httpcore

    from fetchledger.net.connections import GuardedBackend
    from fetchledger.net.policy import AddressPolicy

    flipping = FlippingDNS(["127.0.0.1"], ["93.184.216.34"])
    monkeypatch.setattr("fetchledger.net.connections.system_resolver", flipping.resolve)
    before = web.connections
    with Ledger(ledger_path) as ledger, pytest.raises(BlockedAddress):
        ledger.fetch(f"http://rebind.test:{web.port}/pages/article", robots=True)
    assert flipping.calls == ["rebind.test"]  # one lookup for robots.txt, then refused
    assert web.connections == before

    connected: list[str] = []

    class Recording(httpcore.NetworkBackend):
        def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                        local_address: str | None = None, socket_options: Any = None
                        ) -> httpcore.NetworkStream:
            connected.append(host)
            return httpcore.MockStream([])

    rebinding = FlippingDNS(["93.184.216.34"], ["127.0.0.1"])
    backend = GuardedBackend(AddressPolicy(), rebinding.resolve, Recording())
    backend.connect_tcp("rebind.test", 80)
    assert connected == ["93.184.216.34"]
    with pytest.raises(BlockedAddress):
        backend.connect_tcp("rebind.test", 80)
    assert connected == ["93.184.216.34"]


# --- redirects into refused addresses, the robots.txt request included --------------------

REDIRECT_TARGETS = [
    "http://localhost:{port}/pages/article", "http://127.0.0.2:{port}/",
    "http://0x7f.2:{port}/", "http://2130706434:{port}/", "http://[::1]:{port}/",
    "http://[::ffff:127.0.0.2]:{port}/", "http://[64:ff9b::7f00:2]/",
    "//127.0.0.2:{port}/scheme-relative", "http://a@127.0.0.2:{port}/",
    "http://evil.example\\@127.0.0.2:{port}/", "http://intranet.test/",
    "http://10.0.0.5/", "http://169.254.169.254/latest/meta-data/", "http://2852039166/",
    "http://[::ffff:169.254.169.254]/", "http://metadata.test/", "http://100.64.0.1/",
]


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_redirects_into_refused_addresses_are_blocked_at_the_hop(
        web: LoopbackServer, dns: StubDNS, ledger_path: Path, status: int) -> None:
    dns["intranet.test"] = ["10.0.0.5"]
    dns["metadata.test"] = ["169.254.169.254"]
    dns["evil.example"] = ["127.0.0.2"]  # `evil.example\\@127.0.0.2` is host evil.example
    with Ledger(ledger_path, allow_hosts=["127.0.0.1"]) as ledger:
        for target in REDIRECT_TARGETS:
            location = target.format(port=web.port)
            hits = len(web.hits)
            with pytest.raises(BlockedAddress) as caught:
                ledger.fetch(web.url(f"/redirect-to?status={status}&url={location}"))
            assert "address policy" in caught.value.message, location
            assert len(web.hits) == hits + 1, location  # the redirecting hop only
    assert table_counts(ledger_path)["source"] == 0
    statuses = rows(ledger_path, "SELECT DISTINCT status FROM attempt")
    assert statuses == [(BLOCKED,)]


@pytest.mark.parametrize("target", [
    "http://169.254.169.254/robots.txt", "http://10.0.0.5/robots.txt",
    "http://metadata.test/robots.txt", "http://127.0.0.2:{port}/robots.txt",
    "http://[::ffff:a9fe:a9fe]/robots.txt", "file:///etc/passwd",
])
def test_a_robots_txt_redirect_into_a_refused_address_is_not_followed(
        web: LoopbackServer, dns: StubDNS, ledger_path: Path, target: str) -> None:
    """fetch --robots asks for /robots.txt first; a redirect from there into a refused
    address is judged like any hop: the refused address hears nothing, and the
    retrieval is recorded as blocked_address (nothing registered)."""
    dns["metadata.test"] = ["169.254.169.254"]
    web.replies["robots"] = Reply(302, {"Location": target.format(port=web.port)})
    before = len(web.hits)
    with Ledger(ledger_path, allow_hosts=["127.0.0.1"]) as ledger, \
            pytest.raises(BlockedAddress) as caught:
        ledger.fetch(web.url("/pages/article"), robots=True)
    assert "address policy" in caught.value.message
    assert [hit.path for hit in web.hits[before:]] == ["/robots.txt"]  # not even the page
    assert rows(ledger_path, "SELECT status FROM attempt") == [(BLOCKED,)]
    assert table_counts(ledger_path)["source"] == 0


# --- schemes other than http and https ----------------------------------------------------

SCHEMES = ["file:///etc/passwd", "file://localhost/etc/passwd", "FILE:///etc/passwd",
           "ftp://files.example/x", "gopher://127.0.0.1:70/_GET", "data:text/html,<p>hi</p>",
           "javascript:alert(1)", "dict://127.0.0.1:11211/stat", "ldap://127.0.0.1/",
           "ws://127.0.0.1/", "jar:http://x.example/a.jar!/", "mailto:a@example.com",
           "view-source:http://127.0.0.1/", "localhost:8080/admin", "//127.0.0.1/"]


@pytest.mark.parametrize("url", SCHEMES)
def test_other_schemes_are_bad_input_and_record_nothing(dns: StubDNS, ledger_path: Path,
                                                        url: str) -> None:
    with Ledger(ledger_path) as ledger, pytest.raises(InvalidURL):
        ledger.fetch(url)
    assert table_counts(ledger_path)["attempt"] == 0
    assert dns.calls == []


@pytest.mark.parametrize("url", [u for u in SCHEMES if ":" in u.split("/")[0]])
def test_redirects_to_other_schemes_are_blocked(web: LoopbackServer, ledger_path: Path,
                                                url: str) -> None:
    from urllib.parse import quote

    with Ledger(ledger_path, allow_private=True) as ledger, \
            pytest.raises(BlockedAddress, match=r"only http and https"):
        ledger.fetch(web.url(f"/redirect-to?url={quote(url, safe='')}"))


def test_curl_refuses_other_schemes_and_tricks(dns: StubDNS, run_cli: Any,
                                               ledger_path: Path) -> None:
    for args in (["file:///etc/passwd"], ["gopher://127.0.0.1:70/"],
                 ["--url", "dict://127.0.0.1:11211/"]):
        result = run_cli("curl", *args)
        assert result.exit_code == 2, (args, result.stderr)
        assert result.stderr.startswith("fetchledger: error: ")
    for args in (["--resolve", "x.test:80:127.0.0.1", "http://x.test/"],
                 ["-x", "http://127.0.0.1:8080", "http://x.test/"],
                 ["--unix-socket", "/var/run/docker.sock", "http://x.test/"],
                 ["--connect-to", "::127.0.0.1:", "http://x.test/"]):
        result = run_cli("curl", *args)
        assert result.exit_code == 2 and "address policy" in result.stderr, args
    assert dns.calls == []
    assert table_counts(ledger_path).get("attempt", 0) == 0


# --- real private addresses, inside a network namespace with no route out --------------------


def _can_unshare_net() -> bool:
    probe = subprocess.run(["unshare", "-n", "ip", "link", "set", "lo", "up"],
                           capture_output=True, check=False)
    return probe.returncode == 0


needs_net_namespace = pytest.mark.skipif(
    not _can_unshare_net(), reason="needs `unshare -n` and `ip` (root in a sandbox)")

# Runs inside `unshare -n`: only `lo` exists there, so these addresses are servers of
# this test and nothing can leave. 192.88.99.1 stands for a public host (a retired
# anycast prefix that the policy judges global).
IN_NAMESPACE = textwrap.dedent("""
    import json, subprocess, sys
    sys.path.insert(0, sys.argv[1])
    from web.webserver import LoopbackServer, Reply
    from fetchledger import Ledger
    from fetchledger.errors import FetchLedgerError
    import fetchledger.net.connections as connections

    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    hosts = ["10.0.0.5", "169.254.169.254", "100.64.0.7", "192.168.7.1", "192.88.99.1"]
    for host in hosts:
        subprocess.run(["ip", "addr", "add", host + "/32", "dev", "lo"], check=True)
    servers = {host: LoopbackServer(host).start() for host in hosts}
    port = {host: server.port for host, server in servers.items()}
    answers = {"public.test": ["192.88.99.1"], "intranet.test": ["10.0.0.5"],
               "metadata.test": ["169.254.169.254"]}
    flips = {"n": 0}

    def resolve(host, port_):
        if host == "rebind.test":  # public on the first lookup, private afterwards
            flips["n"] += 1
            return ["192.88.99.1"] if flips["n"] == 1 else ["10.0.0.5"]
        return answers[host]

    connections.system_resolver = resolve
    results = {}

    def attempt(name, url, **options):
        robots = options.pop("robots", False)
        with Ledger(sys.argv[2] + "/" + name + ".db", **options) as ledger:
            try:
                got = ledger.fetch(url, robots=robots)
                results[name] = {"status": "ok", "id": got.source.id}
            except FetchLedgerError as error:
                results[name] = {"status": error.status, "message": error.message}
        results[name]["hits"] = {h: len(s.hits) for h, s in servers.items()}

    def url(host, path="/pages/article", name=None):
        return f"http://{name or host}:{port[host]}{path}"

    attempt("private", url("10.0.0.5"))
    attempt("metadata", url("169.254.169.254"))
    attempt("cgnat", url("100.64.0.7"))
    attempt("name-to-private", url("10.0.0.5", name="intranet.test"))
    attempt("private-allowed", url("192.168.7.1"), allow_private=True)
    attempt("metadata-under-allow-private", url("169.254.169.254"), allow_private=True)
    attempt("metadata-allow-host", url("169.254.169.254"), allow_hosts=["169.254.169.254"])
    attempt("public", url("192.88.99.1", name="public.test"))
    attempt("public-redirect-to-private", url(
        "192.88.99.1", "/redirect-to?url=" + url("10.0.0.5"), name="public.test"))
    attempt("public-redirect-to-metadata-name", url(
        "192.88.99.1", "/redirect-to?url=" + url("169.254.169.254", name="metadata.test"),
        name="public.test"))
    servers["192.88.99.1"].replies["robots"] = Reply(
        302, {"Location": url("169.254.169.254", "/latest/meta-data/")})
    attempt("robots-redirect-to-metadata", url("192.88.99.1", name="public.test"),
            robots=True)
    servers["192.88.99.1"].replies["robots"] = Reply(404, {}, b"")
    flips["n"] = 0
    attempt("rebind-first", url("192.88.99.1", name="rebind.test"))
    attempt("rebind-second", url("10.0.0.5", name="rebind.test"))
    print(json.dumps(results))
""")


@needs_net_namespace
def test_real_private_and_metadata_servers_in_a_network_namespace(tmp_path: Path) -> None:
    done = subprocess.run(["unshare", "-n", sys.executable, "-c", IN_NAMESPACE,
                           str(Path(__file__).parent.parent), str(tmp_path)],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    zero = {"10.0.0.5": 0, "169.254.169.254": 0, "100.64.0.7": 0, "192.168.7.1": 0,
            "192.88.99.1": 0}

    def hits(**changed: int) -> dict[str, int]:
        return {**zero, **{k.replace("_", "."): v for k, v in changed.items()}}

    def outcome(name: str) -> tuple[str, dict[str, int]]:
        return results[name]["status"], results[name]["hits"]

    # refused: the server on that address hears nothing
    assert outcome("private") == (BLOCKED, zero)
    assert outcome("metadata") == (BLOCKED, zero)
    assert outcome("cgnat") == (BLOCKED, zero)
    assert outcome("name-to-private") == (BLOCKED, zero)
    # the switches open the door to a server that really is there
    assert outcome("private-allowed") == ("ok", hits(**{"192_168_7_1": 1}))
    assert outcome("metadata-under-allow-private") == (BLOCKED, hits(**{"192_168_7_1": 1}))
    assert outcome("metadata-allow-host")[0] == "ok"
    # a public host is fetched; its redirects into private land are refused at the hop
    base = results["metadata-allow-host"]["hits"]
    assert outcome("public") == ("ok", {**base, "192.88.99.1": 1})
    assert results["public-redirect-to-private"]["status"] == BLOCKED
    assert results["public-redirect-to-private"]["hits"]["10.0.0.5"] == 0
    assert results["public-redirect-to-metadata-name"]["status"] == BLOCKED
    metadata_before = base["169.254.169.254"]
    assert results["public-redirect-to-metadata-name"]["hits"]["169.254.169.254"] == \
        metadata_before
    # robots.txt redirecting into the metadata service: not followed
    robots = results["robots-redirect-to-metadata"]
    assert robots["status"] == BLOCKED
    assert robots["hits"]["169.254.169.254"] == metadata_before
    # rebinding: the second lookup answers a private address, which is refused
    assert results["rebind-first"]["status"] == "ok"
    second = results["rebind-second"]
    assert second["status"] == BLOCKED and second["hits"]["10.0.0.5"] == 0
