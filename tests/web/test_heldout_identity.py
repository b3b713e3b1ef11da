"""Issue 13, session 11 (branch redteam11): held-out variants of "one resource, one id —
two resources, two ids" (DESIGN §4).

WHATWG-like spellings (urltestdata's backslashes, odd ports, dot segments, hosts), the
characters no URI may hold raw, tracking and redacted parameters, a redirect's
``Location``; a property that the URL a request actually sends has the identity of the
URL given. Against main's code, 22 of the 74 cases failed (the rest are controls).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fetchledger import Document, Ledger
from fetchledger.errors import InvalidURL
from fetchledger.identity.urls import normalize_url, parse_http_url, url_identity

from .webserver import LoopbackServer
from conftest import LedgerLocation, rows

KEY = b"\x02" * 32

# (a spelling, the canonical URL of the same resource)
ONE_RESOURCE = [
    # WHATWG: a backslash before the query is a slash in http(s) URLs
    ("http://example.com/a\\b", "http://example.com/a/b"),
    ("http://example.com\\a", "http://example.com/a"),
    ("http:\\\\example.com\\a", "http://example.com/a"),
    ("http:/\\example.com/", "http://example.com/"),
    ("http://example.com/a\\..\\b", "http://example.com/b"),
    ("http://example.com/a/%2e%2e\\b", "http://example.com/b"),
    # characters no URI holds raw, which the HTTP stack sends as they are: their escape
    ("http://example.com/a|b", "http://example.com/a%7Cb"),
    ("http://example.com/a%7cb", "http://example.com/a%7Cb"),
    ("http://example.com/a^b", "http://example.com/a%5Eb"),
    ("http://example.com/?q=a\\b", "http://example.com/?q=a%5Cb"),
    ("http://example.com/?q=a|b^c", "http://example.com/?q=a%7Cb%5Ec"),
    ("http://example.com/?token=a|b", "http://example.com/?token=a%7Cb"),
    # controls (held before)
    ("http://example.com/%7Efoo", "http://example.com/~foo"),
    ("http://example.com/%2E%2E/x", "http://example.com/x"),
    ("http://example.com/a/.%2e/x", "http://example.com/x"),
    ("http://example.com/a/%2e./x", "http://example.com/x"),
    ("http://example.com/a/%2E", "http://example.com/a/"),
    ("http://example.com//a/../b", "http://example.com//b"),
    ("http://example.com/?", "http://example.com/"),
    ("http://example.com/#", "http://example.com/"),
    ("http://example.com/?#", "http://example.com/"),
    ("http://example.com:080/", "http://example.com/"),
    ("https://example.com:0443/", "https://example.com/"),
    ("http://example.com:/", "http://example.com/"),
    ("http://example.com./", "http://example.com/"),
    ("http://BÜCHER.de/", "http://xn--bcher-kva.de/"),
    ("http://XN--BCHER-KVA.de/", "http://xn--bcher-kva.de/"),
    ("http://0x7f.0x0.0x0.0x1/", "http://127.0.0.1/"),
    ("http://127.0.0.0x1/", "http://127.0.0.1/"),
    ("http://017700000001/", "http://127.0.0.1/"),
    ("http://127.1/", "http://127.0.0.1/"),
    ("http://[0:0:0:0:0:ffff:102:304]/", "http://[::ffff:1.2.3.4]/"),
    ("http://[2001:DB8:0:0:0:0:0:1]:80/", "http://[2001:db8::1]/"),
    ("http://example.com/?UTM_Source=x&a=1", "http://example.com/?a=1"),
    ("http://example.com/?utm_source=&a=1", "http://example.com/?a=1"),
    ("http://example.com/?utm_source&a=1&", "http://example.com/?a=1"),
    ("http://example.com/?%75tm_source=x&a=1", "http://example.com/?a=1"),
    ("http://example.com/?a=%2d%7E", "http://example.com/?a=-~"),
    ("http://example.com/?token=%41B", "http://example.com/?token=AB"),
    ("http://u:p@example.com/", "http://example.com/"),
]

# (two URLs of two resources)
TWO_RESOURCES = [
    ("http://example.com/a\\b", "http://example.com/a%5Cb"),  # an escaped \ is no slash
    ("http://example.com/a|b", "http://example.com/a/b"),
    ("http://example.com/a%2Fb", "http://example.com/a/b"),
    ("http://example.com/a%3Fb", "http://example.com/a?b"),
    ("http://example.com/?a=%26", "http://example.com/?a=&"),
    ("http://example.com/?q=a+b", "http://example.com/?q=a%20b"),
    ("http://example.com/?q=a%2Bb", "http://example.com/?q=a+b"),
    ("http://example.com/?a=1&b=2", "http://example.com/?b=2&a=1"),
    ("http://example.com/?a=1&a=2", "http://example.com/?a=2&a=1"),
    ("http://example.com/?a=1&a=1", "http://example.com/?a=1"),
    ("http://example.com/?a", "http://example.com/?a="),
    ("http://example.com/a", "http://example.com/a/"),
    ("http://example.com//a", "http://example.com/a"),
    ("http://example.com/%252e", "http://example.com/."),
    ("http://example.com:443/", "http://example.com/"),
    ("http://1.2.3.4/", "http://[::ffff:1.2.3.4]/"),
    ("http://example.com/?token=A", "http://example.com/?token=B"),
    ("http://example.com/?token=A&token=B", "http://example.com/?token=B&token=A"),
    ("http://example.com/?token=", "http://example.com/?token"),
    ("http://example.com/?token=a%2Bb", "http://example.com/?token=a+b"),
    ("http://example.com/?token=a|b", "http://example.com/?token=a/b"),
    ("http://example.com/?TOKEN=A", "http://example.com/?token=A"),
    ("http://example.com/;jsessionid=A", "http://example.com/;jsessionid=B"),
]


@pytest.mark.parametrize(("spelling", "canonical"), ONE_RESOURCE)
def test_one_resource_is_one_identity(spelling: str, canonical: str) -> None:
    identity = url_identity(spelling, KEY)
    assert identity == url_identity(canonical, KEY), (spelling, canonical)
    assert url_identity(identity, KEY) == identity
    assert normalize_url(normalize_url(spelling)) == normalize_url(spelling)


@pytest.mark.parametrize(("one", "two"), TWO_RESOURCES)
def test_two_resources_are_two_identities(one: str, two: str) -> None:
    assert url_identity(one, KEY) != url_identity(two, KEY), (one, two)
    for url in (one, two):
        assert url_identity(url_identity(url, KEY), KEY) == url_identity(url, KEY)


@pytest.mark.parametrize(("url", "host", "path"), [
    ("http://example.com\\@evil.example/", "example.com", "/@evil.example/"),
    ("http://a\\b@evil.example/", "a", "/b@evil.example/"),
    ("https://example.com\\\\evil.example/x", "example.com", "//evil.example/x"),
    ("http://u:p\\@evil.example@example.com/", "u", None),  # WHATWG: port "p" is invalid
])
def test_the_host_is_the_one_a_browser_reads(url: str, host: str, path: str | None) -> None:
    """WHATWG ends the authority at a backslash: ``http://example.com\\@evil/`` is host
    ``example.com``; read as RFC 3986, the policy, the request and the identity named
    host ``evil`` (user-info ``example.com\\``)."""
    if path is None:
        with pytest.raises(InvalidURL):
            parse_http_url(url)
        return
    parsed = parse_http_url(url)
    assert (parsed.host, parsed.path) == (host, path)
    assert url_identity(url, KEY).startswith(f"{parsed.scheme}://{host}/")


# A URL drawn from pieces the standards treat specially; the request made of it (what
# httpx puts on the wire: the path and query it sends) must have the URL's identity.
_PIECES = st.lists(st.sampled_from(
    ["a", "Z", "/", "\\", "|", "^", "%7c", "%7C", "%5C", "%5e", "..", ".", "%2e", "%2E",
     "'", "[", "]", "{", "`", "~", "%7E", "+", "%20", " ", "ä", "%c3%a4", "%", "%zz", ";",
     "=", "&", "@", ":", "!", "$", "*", ","]), max_size=10)


@settings(max_examples=400, deadline=None)
@given(path=_PIECES, query=_PIECES)
def test_the_request_sent_has_the_identity_of_the_url_given(path: list[str],
                                                            query: list[str]) -> None:
    url = f"http://example.com/{''.join(path)}?q={''.join(query)}"
    try:
        identity = url_identity(url, KEY)
    except InvalidURL:
        return
    sent = httpx.Request("GET", parse_http_url(url)).url
    assert url_identity(str(sent), KEY) == identity, (url, str(sent))
    assert url_identity(identity, KEY) == identity
    assert not set(identity) & set("\\|^"), identity


@settings(max_examples=200, deadline=None)
@given(path=_PIECES, escape=st.sampled_from(["%7C", "%7c"]))
def test_a_bar_and_its_escape_are_one_identity(path: list[str], escape: str) -> None:
    url = f"http://example.com/{''.join(path)}|x?q=|"
    try:
        identity = url_identity(url, KEY)
    except InvalidURL:
        return
    assert url_identity(url.replace("|", escape), KEY) == identity


# --- on a real server: what is fetched and what is registered ---------------------------


@pytest.fixture
def led(ledger_path: Path) -> Iterator[Ledger]:
    with Ledger(ledger_path, allow_private=True) as opened:
        yield opened


def test_a_backslash_path_fetches_and_registers_the_slash_path(web: LoopbackServer,
                                                               led: Ledger) -> None:
    first = led.fetch(web.url("/pages/article"))
    again = led.fetch(web.url("/pages\\article"))
    assert web.hits[-1].path == "/pages/article"
    assert again.source.id == first.source.id and not again.new_source


def test_a_bar_and_its_escape_are_one_source(web: LoopbackServer, led: Ledger) -> None:
    first = led.fetch(web.url("/pages/article?q=a|b"))
    again = led.fetch(web.url("/pages/article?q=a%7cb"))
    assert again.source.id == first.source.id and not again.new_source
    other = led.fetch(web.url("/pages/article?q=a/b"))
    assert other.source.id != first.source.id


@pytest.mark.parametrize("location", ["\\pages\\article", "\\\\{host}/pages/article"])
def test_a_redirect_with_backslashes_goes_where_a_browser_goes(
        web: LoopbackServer, led: Ledger, location: str) -> None:
    """``Location: \\pages\\article`` is ``/pages/article`` to a browser (and
    ``\\\\host/x`` is ``//host/x``); joined as RFC 3986 it was ``/redirect-to\\pages...``:
    a 404, no source."""
    host = web.url("/").split("//", 1)[1].rstrip("/")
    target = location.format(host=host).replace("\\", "%5C")
    got = led.fetch(web.url(f"/redirect-to?url={target}"))
    assert web.hits[-1].path == "/pages/article"
    assert got.source.id == led.fetch(web.url("/pages/article")).source.id


# --- a ledger written before: its ids kept ----------------------------------------------


@pytest.mark.both_backends
def test_a_ledger_that_held_raw_url_characters_keeps_its_ids(
        ledger_path: LedgerLocation) -> None:
    """Before session 11 ``/a\\b``, ``/a|b`` and a query's ``\\`` were stored as written;
    migration 0024 finds each such source again under its old id, and every locator is
    its own normal form."""
    old = [("https://example.org/a\\b", "https://example.org/a/b"),
           ("https://example.org/p|q^r", "https://example.org/p%7Cq%5Er"),
           ("https://example.org/s?q=x\\y|z", "https://example.org/s?q=x%5Cy%7Cz"),
           ("GET https://example.org/api|x", "https://example.org/api%7Cx")]
    with Ledger(ledger_path) as ledger:
        key = ledger.identity_key
        for locator, _ in old:
            kind = "http" if locator.startswith("GET ") else "web"
            ledger.register(Document(kind=kind, locator=locator, display=locator,  # type: ignore[arg-type]
                                     text="The stored text of a page.", raw=b"r", meta={}))
    rows(ledger_path, "DELETE FROM migration WHERE name = '0024_url_characters'")
    with Ledger(ledger_path) as ledger:
        for n, (_, fetched) in enumerate(old[:3], start=1):
            found = ledger.source_for(url_identity(fetched, key))
            assert found is not None and found.id == n, (fetched, found)
            assert url_identity(found.locator, key) == found.locator
        assert ledger.source(4).locator == "GET " + url_identity(old[3][1], key)
        assert len(ledger.sources()) == len(old)
