"""Issue 13, identity: one resource one id, two resources two ids (DESIGN §4).

A redacted query value enters the identity as a keyed hash (HMAC, a random
key per ledger), never as the value; dot segments are resolved after escaped
dots are decoded, a trailing `..` keeps its slash, an empty user-info is
none, normalization is idempotent; zone ids and malformed punycode are bad
input, and a malformed punycode redirect target is a clean failure.
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fetchledger import Ledger
from fetchledger.errors import InvalidURL
from fetchledger.identity.urls import (
    normalize_url,
    parse_http_url,
    url_identity,
    without_userinfo,
)

from .webserver import LoopbackServer
from conftest import rows

KEY = b"\x01" * 32


@pytest.fixture
def led(ledger_path: Path) -> Iterator[Ledger]:
    with Ledger(ledger_path, allow_private=True) as opened:
        yield opened


@pytest.mark.parametrize(("name", "one", "two"), [
    ("pageToken", "CAoQAA", "CBQQAA"), ("sortKey", "price", "date"),
    ("key", "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms", "1mHIWnDvW9cALRMq9OdNfRwjvthCUFX"),
    ("accesstoken", "a", "b"),
])
def test_two_values_of_a_redacted_parameter_are_two_sources(
        web: LoopbackServer, led: Ledger, ledger_path: Path, name: str, one: str,
        two: str) -> None:
    first = led.fetch(web.url(f"/pages/article?{name}={one}&q=1"))
    second = led.fetch(web.url(f"/pages/article?{name}={two}&q=1"))
    assert first.source.id != second.source.id
    assert first.source.locator == second.source.locator == \
        web.url(f"/pages/article?{name}=REDACTED&q=1")
    again = led.fetch(web.url(f"/pages/article?{name}={one}&q=1"))
    assert again.source.id == first.source.id and not again.new_source
    stored = rows(ledger_path, "SELECT locator FROM alias") + rows(
        ledger_path, "SELECT locator FROM source")
    for (locator,) in stored:
        assert f"{name}={one}&" not in locator and f"{name}={two}&" not in locator


def test_the_key_is_random_per_ledger_and_kept(tmp_path: Path) -> None:
    with Ledger(tmp_path / "a.db") as a, Ledger(tmp_path / "b.db") as b:
        key_a, key_b = a.identity_key, b.identity_key
    assert len(key_a) == 32 and key_a != key_b
    with Ledger(tmp_path / "a.db") as again:
        assert again.identity_key == key_a
    url = "https://h.example/p?token=secret-value"
    assert url_identity(url, key_a) != url_identity(url, key_b)
    assert "secret-value" not in url_identity(url, key_a)


@pytest.mark.parametrize(("given_url", "canonical"), [
    ("https://example.com/aaa/bbb/%2e%2e?query", "https://example.com/aaa/?query"),
    ("https://example.com/aaa/bbb/%2E%2E/ccc", "https://example.com/aaa/ccc"),
    ("http://example.com/a/.%2e/b", "http://example.com/b"),
    ("http://example.com/a/%2e/b", "http://example.com/a/b"),
    ("http://example.com/foo/bar/..", "http://example.com/foo/"),
    ("http://example.com/foo/bar/.", "http://example.com/foo/bar/"),
    ("http://example.com/..", "http://example.com/"),
    ("http://example.com/a/%7e/../b", "http://example.com/a/b"),
    ("https://:@example.com/p", "https://example.com/p"),
    ("https://@example.com/p", "https://example.com/p"),
    ("https://user@example.com/p", "https://REDACTED@example.com/p"),
])
def test_dot_segments_escapes_and_empty_user_info(given_url: str, canonical: str) -> None:
    assert normalize_url(given_url) == canonical
    assert normalize_url(canonical) == canonical


def test_a_trailing_dot_dot_does_not_collide_with_its_parent() -> None:
    assert normalize_url("http://example.com/foo/bar/..") != normalize_url("http://example.com/foo")


_PATH = st.lists(st.sampled_from(["a", "B", ".", "..", "%2e", "%2E%2e", ".%2e", "%7e", "x%2Fy",
                                  "%41", "", "é", "c d", "%25", "~", "%2e.", ".%2E", "%c3%a9",
                                  "%C3%A9", "%2f", "a;b", "%3B"]), max_size=6)
_QUERY = st.lists(st.tuples(st.sampled_from(["q", "page", "token", "sortKey", "utm_x", "a%20b",
                                             "UTM_Source", "fbclid", "utm%5Fmedium", "Q"]),
                            st.text(string.ascii_letters + "%2e+=~", max_size=6)), max_size=4)


@st.composite
def _urls(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["http", "https", "HTTP"]))
    user = draw(st.sampled_from(["", ":@", "@", "u@", "u:p@", ":p@"]))
    host = draw(st.sampled_from(["example.com", "EXAMPLE.com.", "127.0.0.1", "[::1]",
                                 "xn--r8jz45g.jp", "0x7f.1", "bücher.example", "[0:0::1]",
                                 "[::FFFF:127.0.0.1]", "XN--BCHER-KVA.example",
                                 "BÜCHER.example", "2130706433"]))
    port = draw(st.sampled_from(["", ":80", ":443", ":8080", ":0443", ":", ":080"]))
    path = "/" + "/".join(draw(_PATH))
    query = "&".join(f"{k}={v}" for k, v in draw(_QUERY))
    fragment = draw(st.sampled_from(["", "#f", "#a/../b"]))
    return f"{scheme}://{user}{host}{port}{path}{'?' + query if query else ''}{fragment}"


@settings(max_examples=300, deadline=None)
@given(url=_urls())
def test_normalization_is_idempotent_over_generated_urls(url: str) -> None:
    try:
        once = normalize_url(url)
    except InvalidURL:
        return
    assert normalize_url(once) == once
    keyed = url_identity(url, KEY)
    assert url_identity(keyed, KEY) == keyed
    assert url_identity(once, KEY).split("?")[0] == without_userinfo(once).split("?")[0]
    assert "/./" not in once and "/../" not in once and not once.split("?")[0].endswith("/..")


@pytest.mark.parametrize("url", ["http://[fe80::1%25eth0]/", "http://[fe80::1%eth0]/x",
                                 "https://[::1%25lo]:8443/", "http://xn--a/", "http://xn--/",
                                 "http://www.xn--a.example/", "https://XN--A.com/"])
def test_zone_ids_and_malformed_punycode_are_invalid_urls(run_cli: Any, ledger_path: Path,
                                                          url: str) -> None:
    with pytest.raises(InvalidURL):
        parse_http_url(url)
    result = run_cli("--json", "fetch", "--allow-private", url)
    assert result.exit_code == 2, result.stderr
    assert json.loads(result.stdout)[0]["error"]["status"] == "invalid_url"
    assert "Traceback" not in result.stderr
    assert rows(ledger_path, "SELECT count(*) FROM attempt") == [(0,)]


def test_a_malformed_punycode_redirect_is_a_clean_failure_and_batch_goes_on(
        web: LoopbackServer, run_cli: Any, ledger_path: Path, tmp_path: Path) -> None:
    bad = web.url("/redirect-to?url=http://xn--a/")
    result = run_cli("fetch", "--allow-private", bad)
    assert result.exit_code == 3 and "Traceback" not in result.stderr
    assert "xn--a" in result.stderr
    listing = tmp_path / "urls.txt"
    listing.write_text(f"http://xn--a/\n{bad}\n{web.url('/pages/article')}\n")
    batch = run_cli("--json", "batch", "--allow-private", "--no-robots", str(listing))
    assert "Traceback" not in batch.stderr
    lines = [json.loads(line) for line in batch.stdout.splitlines()]
    assert [line.get("error", {}).get("status") for line in lines] == \
        ["invalid_url", "http_error", None]
    assert batch.exit_code == 2
    assert rows(ledger_path, "SELECT count(*) FROM source") == [(1,)]


# --- issue 13, third pass: credentials in the URL, port spellings, curl -G and a fragment ----


@pytest.mark.parametrize("with_credentials", ["https://u:p@h.example/p?q=1",
                                              "https://u@h.example/p?q=1",
                                              "https://u:@h.example/p?q=1",
                                              "https://:p@h.example/p?q=1",
                                              "https://other:pw2@H.example:443/p?q=1#x"])
def test_user_info_is_a_credential_not_identity(with_credentials: str) -> None:
    """DESIGN §4: requests differing only in URL user-info are one source (`curl -u` and
    the same credentials in the URL, or none, are one request to one resource)."""
    plain = url_identity("https://h.example/p?q=1", KEY)
    assert url_identity(with_credentials, KEY) == plain
    assert normalize_url(with_credentials).startswith("https://REDACTED@")  # shown, redacted


@pytest.mark.parametrize("url", ["http://h.example:+80/", "http://h.example: 80/",
                                 "http://h.example:8_0/", "http://h.example:８０/",
                                 "http://h.example:0x50/", "http://h.example:80 /",
                                 "http://[::1]:+80/", "http://h.example:-0/"])
def test_a_port_that_is_not_ascii_digits_is_an_invalid_url(url: str) -> None:
    with pytest.raises(InvalidURL):
        parse_http_url(url)


def test_curl_get_data_goes_before_a_fragment() -> None:
    from fetchledger.adapters.curl_args import parse_curl_args

    for url in ("https://h.example/p#frag", "https://h.example/p#a?b", "https://h.example/p?#f"):
        command = parse_curl_args(["-G", "-d", "q=1", url])
        assert url_identity(command.url, KEY) == url_identity("https://h.example/p?q=1", KEY), \
            command.url


def test_curl_with_credentials_is_the_fetch_of_its_url(web: LoopbackServer, run_cli: Any,
                                                       ledger_path: Path) -> None:
    page = web.url("/pages/news")
    with_user = page.replace("http://", "http://reader:s3cret@")
    for args in (["fetch", page], ["curl", "-u", "reader:s3cret", page], ["curl", with_user],
                 ["fetch", with_user], ["curl", "-G", page + "#top"]):
        result = run_cli("--allow-private", *args)
        assert result.exit_code == 0, (args, result.stderr)
        assert result.stdout.startswith("[1] "), (args, result.stdout)
    assert rows(ledger_path, "SELECT count(*) FROM source") == [(1,)]
    assert "s3cret" not in str(rows(ledger_path, "SELECT locator, display FROM source"))



# Spellings of one resource: each must leave the identity as it is (the canonical URL is
# drawn first, then respelled in ways the URL standards call equivalent, or that carry
# only credentials and tracking).
_UNRESERVED_ESCAPES = {c: f"%{ord(c):02X}" for c in "abcXYZ019-._~"}


@st.composite
def _respelled(draw: st.DrawFn) -> tuple[str, str]:
    segments = draw(st.lists(st.text("abcXYZ019-._~", min_size=1, max_size=5).filter(
        lambda seg: seg not in (".", "..")), min_size=0, max_size=4))
    names = draw(st.lists(st.sampled_from(["q", "page", "sortKey", "id"]), max_size=3,
                          unique=True))
    query = "&".join(f"{name}={draw(st.text('abc019%+', max_size=4)).replace('%', '%25')}"
                     for name in names)
    path = "/" + "/".join(segments)
    canonical = f"https://example.org{path}" + (f"?{query}" if query else "")
    # respelling: scheme and host case, a default port (as written several ways), user-info,
    # escapes of unreserved characters (either hex case), dot segments, tracking, fragment
    scheme = draw(st.sampled_from(["https", "HTTPS", "HtTpS"]))
    host = draw(st.sampled_from(["example.org", "EXAMPLE.ORG", "Example.Org."]))
    port = draw(st.sampled_from(["", ":443", ":0443", ":"]))
    user = draw(st.sampled_from(["", ":@", "@", "u@", "u:p@", "reader:s3cret@"]))
    spelled = []
    for segment in segments:  # dot segments before a segment (a trailing one keeps its /)
        if draw(st.booleans()):
            spelled.append(draw(st.sampled_from([".", "%2e", "%2E"])))
        if draw(st.booleans()):
            spelled.extend(["x", draw(st.sampled_from(["..", "%2e%2e", ".%2E", "%2E."]))])
        chars = [(_UNRESERVED_ESCAPES[c].lower() if draw(st.booleans()) else _UNRESERVED_ESCAPES[c])
                 if c in _UNRESERVED_ESCAPES and draw(st.booleans()) else c for c in segment]
        spelled.append("".join(chars))
    tracking = draw(st.sampled_from(["", "utm_source=news", "fbclid=abc", "UTM_Medium=x",
                                     "gclid=1"]))
    parts = [p for p in (query, tracking) if p]
    if parts and draw(st.booleans()):
        parts.reverse()  # a tracking parameter first: the others keep their order
    fragment = draw(st.sampled_from(["", "#top", "#a/../b", "#"]))
    respelled_path = "/" + "/".join(spelled) if spelled or path != "/" else ""
    if segments == [] and not spelled:
        respelled_path = draw(st.sampled_from(["", "/"]))
    url = (f"{scheme}://{user}{host}{port}{respelled_path}"
           + (f"?{'&'.join(parts)}" if parts else draw(st.sampled_from(["", "?"]))) + fragment)
    return canonical, url


@settings(max_examples=300, deadline=None)
@given(case=_respelled())
def test_every_spelling_of_one_resource_is_one_identity(case: tuple[str, str]) -> None:
    canonical, url = case
    assert url_identity(url, KEY) == url_identity(canonical, KEY), (url, canonical)
    assert url_identity(url_identity(url, KEY), KEY) == url_identity(url, KEY)


# --- issue 13, fourth pass: a stray `%` beside escapes that decode to hex digits ------------


@pytest.mark.parametrize(("given_url", "canonical"), [
    # decoding %41 (A) after a stray % must not make a new escape (%bA, then %BA)
    ("http://example.com/%b%41", "http://example.com/%25bA"),
    ("http://example.com/%%41a", "http://example.com/%25Aa"),
    ("http://example.com/%%32%65", "http://example.com/%252e"),  # never a dot segment
    ("http://example.com/a/%%32%65%%32%65/b", "http://example.com/a/%252e%252e/b"),
    ("http://example.com/p?q=%b%41", "http://example.com/p?q=%25bA"),
    ("http://example.com/%", "http://example.com/%25"),
    ("http://example.com/%zz", "http://example.com/%25zz"),
    ("http://example.com/50%", "http://example.com/50%25"),
    ("http://example.com/%2", "http://example.com/%252"),
])
def test_a_stray_percent_is_escaped_so_normalizing_twice_changes_nothing(
        given_url: str, canonical: str) -> None:
    """A `%` not followed by two hex digits is escaped (`%25`, as RFC 3986 requires of a
    literal `%`): otherwise decoding `%41` after `%b` made `%bA`, which a second pass
    spelled `%BA` — the locator people see named a second identity."""
    assert normalize_url(given_url) == canonical
    assert normalize_url(canonical) == canonical
    assert url_identity(given_url, KEY) == url_identity(canonical, KEY)
    assert url_identity(url_identity(given_url, KEY), KEY) == url_identity(given_url, KEY)


_STRAY = st.lists(st.sampled_from(["%", "%b", "%41", "%4", "%2e", "%32", "%65", "a", "/", "..",
                                   "%%", "%25", "%c3", "%A9", "z"]), min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(path=_STRAY, query=_STRAY)
def test_normalization_is_idempotent_with_stray_percents(path: list[str], query: list[str]) -> None:
    url = f"http://example.com/{''.join(path)}?q={''.join(query)}"
    try:
        once = normalize_url(url)
    except InvalidURL:
        return
    assert normalize_url(once) == once
    assert url_identity(url_identity(url, KEY), KEY) == url_identity(url, KEY)
