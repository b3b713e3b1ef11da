"""Ledger.fetch against the loopback server: content types, identity, dedupe, failures,
robots.txt. Assertions read the SQLite file, not only what is returned."""

from __future__ import annotations

import asyncio
import json
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from fetchledger import Document, Ledger
from fetchledger.config import Limits
from fetchledger.errors import (
    BlockedAddress,
    EmptyContent,
    HTTPStatusError,
    InvalidURL,
    RobotsDenied,
    UnsupportedType,
)
from fetchledger.models import Failure, Retrieval, exit_code_for
from fetchledger.net.client import AsyncHTTPClient

from .webserver import LoopbackServer, Reply
from conftest import rows, table_counts


@pytest.fixture
def led(ledger_path: Path) -> Iterator[Ledger]:
    with Ledger(ledger_path, allow_private=True) as opened:
        yield opened


def stored(ledger_path: Path, source_id: int = 1) -> dict[str, object]:
    (kind, locator, display, title, site, author, published) = rows(
        ledger_path, "SELECT kind, locator, display, title, site, author, published "
                     "FROM source WHERE id = ?", source_id)[0]
    meta, text = rows(ledger_path, "SELECT meta, text FROM version WHERE source_id = ? "
                                   "ORDER BY number DESC LIMIT 1", source_id)[0]
    return {"kind": kind, "locator": locator, "display": display, "title": title, "site": site,
            "author": author, "date": published, "meta": json.loads(str(meta)), "text": text}


def assert_verbatim(got: Retrieval, led: Ledger) -> None:
    text = led.text(got.source.id)
    assert got.snippets
    for snippet in got.snippets:
        assert text[snippet.start : snippet.end] == snippet.quote
        assert "\n" not in snippet.quote


def test_an_article_registers_its_main_text_and_metadata(web: LoopbackServer, led: Ledger,
                                                         ledger_path: Path) -> None:
    got = led.fetch(web.url("/pages/article"), query="polarized light")
    assert (got.source.id, got.source.kind) == (1, "web")
    assert got.source.header() == "[1] How honeybees find their way home — 127.0.0.1"
    assert "polarized light" in got.snippets[0].quote
    assert_verbatim(got, led)
    row = stored(ledger_path)
    assert row["locator"] == row["display"] == web.url("/pages/article")
    assert (row["title"], row["site"], row["author"], row["date"]) == (
        "How honeybees find their way home", "The Field Review", "Marta Ilves", "2024-05-14")
    meta = row["meta"]
    assert isinstance(meta, dict)
    assert meta["http_status"] == 200 and meta["content_type"] == "text/html"
    assert meta["final_url"] == web.url("/pages/article")
    text = str(row["text"])
    assert "A forager honeybee can fly more than five kilometres" in text
    for boilerplate in ("We use cookies", "Accept all", "Subscribe", "Related stories",
                        "Why wasps", "All rights reserved", "window.analytics"):
        assert boilerplate not in text


def test_a_news_page_loses_its_banner_menu_and_comments(web: LoopbackServer, led: Ledger) -> None:
    got = led.fetch(web.url("/pages/news"))
    text = led.text(got.source.id)
    assert "shone again on Saturday evening" in text
    for boilerplate in ("Your privacy matters", "412 partners", "Front page", "Log in",
                        "Share this story", "newsletter", "What a great day"):
        assert boilerplate not in text
    assert got.source.site == "Coastline Daily"


def test_the_same_page_twice_is_one_source_one_version(web: LoopbackServer, led: Ledger,
                                                       ledger_path: Path) -> None:
    first = led.fetch(web.url("/pages/article"))
    again = led.fetch(web.url("/pages/article"))
    assert first.source.id == again.source.id == 1
    assert first.new_source and not again.new_source and not again.new_version
    assert table_counts(ledger_path)["source"] == 1
    assert table_counts(ledger_path)["version"] == 1
    assert [a.status for a in led.attempts()] == ["ok", "ok"]


def test_spellings_of_one_url_are_one_source(web: LoopbackServer, led: Ledger) -> None:
    base = web.url("/pages/article")
    variants = [base, base + "?utm_source=news&utm_campaign=x#top", base + "?fbclid=abc",
                base.replace("http://", "HTTP://"), base.replace("127.0.0.1", "0x7f.0.0.1")]
    assert {led.fetch(url).source.id for url in variants} == {1}


def test_a_fetch_normalizes_its_url_once(web: LoopbackServer, led: Ledger,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The identity is computed once per call and travels with the input (the adapter
    protocol), not recomputed on the way to the store."""
    from fetchledger.adapters import web as web_adapter

    calls: list[str] = []
    normalize = web_adapter.normalize_url

    def counted(url: object) -> str:
        calls.append(str(url))
        return normalize(url)  # type: ignore[arg-type]

    monkeypatch.setattr(web_adapter, "normalize_url", counted)
    led.fetch(web.url("/pages/article?utm_source=x"))
    assert calls == [web.url("/pages/article?utm_source=x")]


def test_every_url_of_a_redirect_chain_is_an_alias(web: LoopbackServer, led: Ledger,
                                                   ledger_path: Path) -> None:
    got = led.fetch(web.url("/redirect/2"))
    assert got.source.locator == web.url("/redirect/2")
    aliases = {a for (a,) in rows(ledger_path, "SELECT locator FROM alias WHERE source_id = 1")}
    assert aliases == {web.url("/redirect/2"), web.url("/redirect/1"),
                       web.url("/pages/article")}
    assert led.fetch(web.url("/pages/article")).source.id == 1
    assert led.fetch(web.url("/redirect/1")).source.id == 1
    assert table_counts(ledger_path)["source"] == 1
    meta = stored(ledger_path)["meta"]
    assert isinstance(meta, dict)
    assert meta["redirects"] == [web.url("/redirect/2"), web.url("/redirect/1")]


def test_a_redirect_to_a_known_page_joins_its_source(web: LoopbackServer, led: Ledger) -> None:
    assert led.fetch(web.url("/pages/news")).source.id == 1
    assert led.fetch(web.url("/redirect-to?url=/pages/news")).source.id == 1
    assert led.details(1).aliases == (web.url("/pages/news"),
                                      web.url("/redirect-to?url=/pages/news"))


def test_changed_content_is_a_new_version_of_the_same_id(web: LoopbackServer, led: Ledger,
                                                         ledger_path: Path) -> None:
    first = led.fetch(web.url("/mutable"))
    web.replies["mutable"] = Reply(200, {"Content-Type": "text/html"},
                                   b"<html><body><p>The second edition of this page says the "
                                   b"bridge opens in June.</p></body></html>")
    second = led.fetch(web.url("/mutable"))
    assert first.source.id == second.source.id == 1
    assert second.new_version and second.source.version == 2
    assert "June" in led.text(1) and "May" in led.text(1, version=1)
    assert rows(ledger_path, "SELECT count(*) FROM version WHERE source_id = 1") == [(2,)]


def test_canonical_link_is_metadata_and_never_merges(web: LoopbackServer, led: Ledger,
                                                     ledger_path: Path) -> None:
    plain = led.fetch(web.url("/pages/article"))
    gzipped = led.fetch(web.url("/gzip"))  # the same page with the same canonical link
    assert plain.source.id != gzipped.source.id
    canonical = "https://field-review.example/science/honeybee-navigation"
    for source_id in (1, 2):
        meta = stored(ledger_path, source_id)["meta"]
        assert isinstance(meta, dict) and meta["canonical_url"] == canonical
    assert rows(ledger_path, "SELECT count(*) FROM alias WHERE locator = ?", canonical) == [(0,)]


def test_pdf_by_content_type(web: LoopbackServer, led: Ledger) -> None:
    got = led.fetch(web.url("/pdf"), query="spring tides")
    assert got.source.kind == "web" and got.source.title == "Tide tables"
    assert got.snippets[0].page == 2
    assert got.snippets[0].text_line() == \
        '[1] "Spring tides reach 4.1 metres above chart datum." (p. 2)'


def test_json_is_pretty_printed(web: LoopbackServer, led: Ledger) -> None:
    got = led.fetch(web.url("/pages/data"), query="gusts")
    lines = led.text(got.source.id).split("\n")
    assert '"station": "Kessel Point",' in lines
    assert '"note": "Gusts reached 41 knots shortly after midnight."' in lines
    assert "Gusts reached 41 knots" in got.snippets[0].quote


def test_plain_text_has_its_wrapped_lines_joined(web: LoopbackServer, led: Ledger) -> None:
    got = led.fetch(web.url("/pages/notes"))
    first = led.text(got.source.id).split("\n")[0]
    assert first == ("Field notes on tidal pools, written at low tide on the north shore of "
                     "the island. The largest pool holds about two hundred litres of water and "
                     "warms by six degrees between morning and noon.")


def test_markdown_and_untyped_html(web: LoopbackServer, led: Ledger) -> None:
    assert led.fetch(web.url("/pages/readme")).source.title == "Lantern maintenance"
    untyped = led.fetch(web.url("/pages/untyped"))  # no Content-Type: sniffed
    assert untyped.source.title == "How honeybees find their way home"


@pytest.mark.parametrize("path", ["/pages/accents-cp1252", "/pages/accents-wrong-header",
                                  "/pages/accents-utf8-as-latin1", "/pages/accents-no-charset"])
def test_charsets_from_header_meta_or_detection(web: LoopbackServer, led: Ledger,
                                                path: str) -> None:
    got = led.fetch(web.url(path))
    text = led.text(got.source.id)
    assert got.source.title == "Café culture in Liège"
    assert "the owner, Geneviève Dubœuf, intends" in text
    assert "Ã" not in text and "\ufffd" not in text


def test_shift_jis_declared_in_meta(web: LoopbackServer, led: Ledger) -> None:
    got = led.fetch(web.url("/pages/japanese"))
    assert got.source.title == "富士山の気象観測"
    assert "富士山頂の測候所は一九三二年に観測を始め" in led.text(got.source.id)


@pytest.mark.parametrize(("path", "error", "status"), [
    ("/pages/js-shell", EmptyContent, "empty_content"),
    ("/empty", EmptyContent, "empty_content"),
    ("/status/404", HTTPStatusError, "http_error"),
    ("/status/500", HTTPStatusError, "http_error"),
    ("/image", UnsupportedType, "unsupported_type"),
    ("/loop/a", HTTPStatusError, "http_error"),
])
def test_failures_are_attempts_without_an_id(web: LoopbackServer, led: Ledger,
                                             ledger_path: Path, path: str,
                                             error: type[Exception], status: str) -> None:
    with pytest.raises(error) as caught:
        led.fetch(web.url(path), render="never")  # the plain path (tests/web/test_browser.py)
    assert getattr(caught.value, "exit_code", None) == 3
    assert table_counts(ledger_path)["source"] == 0
    attempts = rows(ledger_path, "SELECT locator, status FROM attempt ORDER BY id")
    assert attempts == [(web.url(path), status)]


def test_http_error_attempt_names_the_status(web: LoopbackServer, led: Ledger) -> None:
    with pytest.raises(HTTPStatusError):
        led.fetch(web.url("/status/410"))
    attempt = led.attempts(failed=True)[0]
    assert attempt.status == "http_error" and "HTTP 410 Gone" in attempt.message


def test_a_javascript_shell_says_why_it_is_empty(web: LoopbackServer, led: Ledger) -> None:
    with pytest.raises(EmptyContent, match="JavaScript"):
        led.fetch(web.url("/pages/js-shell"), render="never")


@pytest.mark.parametrize("url", ["ftp://example.com/x", "example.com", "http://", "http:// x/",
                                 "http://1.2.3.4.5/"])
def test_bad_urls_record_nothing(led: Ledger, ledger_path: Path, url: str) -> None:
    before = table_counts(ledger_path)
    with pytest.raises(InvalidURL) as caught:
        led.fetch(url)
    assert caught.value.exit_code == 2
    assert table_counts(ledger_path) == before


def test_fetch_many_handles_each_input_on_its_own(web: LoopbackServer, led: Ledger) -> None:
    outcomes = led.fetch_many([web.url("/pages/article"), web.url("/status/404"),
                               "notaurl", web.url("/pages/news")])
    kinds = [type(o).__name__ for o in outcomes]
    assert kinds == ["Retrieval", "Failure", "Failure", "Retrieval"]
    failures = [o for o in outcomes if isinstance(o, Failure)]
    assert [f.status for f in failures] == ["http_error", "invalid_url"]
    assert exit_code_for(outcomes) == 2
    assert [s.id for s in led.sources()] == [1, 2]


def test_secrets_in_a_url_are_sent_but_never_stored(web: LoopbackServer, led: Ledger,
                                                    ledger_path: Path) -> None:
    got = led.fetch(web.url("/echo?q=bees&access_token=tok-5up3r-s3cret"))
    assert web.hits[-1].path.endswith("access_token=tok-5up3r-s3cret")  # it was sent
    assert got.source.locator == web.url("/echo?q=bees&access_token=REDACTED")
    assert "tok-5up3r-s3cret" not in led.text(1)
    assert "REDACTED" in led.text(1)
    assert b"tok-5up3r-s3cret" not in led.raw(1)
    assert got.warnings  # the echo was redacted, and the caller is told
    outcomes = led.fetch_many([web.url("/status/404?token=tok-5up3r-s3cret")])
    assert isinstance(outcomes[0], Failure)
    assert "tok-5up3r-s3cret" not in outcomes[0].input
    for (locator, message) in rows(ledger_path, "SELECT locator, message FROM attempt"):
        assert "tok-5up3r-s3cret" not in f"{locator} {message}"
    for (raw,) in rows(ledger_path, "SELECT raw FROM version"):
        assert b"tok-5up3r-s3cret" not in zlib.decompress(raw)  # type: ignore[arg-type]


def test_caps_apply_to_fetch(web: LoopbackServer, ledger_path: Path) -> None:
    with Ledger(ledger_path, allow_private=True,
                limits=Limits(max_decoded_bytes=2_000_000)) as led:
        with pytest.raises(Exception, match="decodes to over") as caught:
            led.fetch(web.url("/bomb/gzip-gzip"))
        assert getattr(caught.value, "status", "") == "too_large"
    assert rows(ledger_path, "SELECT status FROM attempt ORDER BY id") == [("too_large",)]


# --- robots.txt ---------------------------------------------------------------------------

ROBOTS = (b"User-agent: *\nDisallow: /pages/news\n\n"
          b"User-agent: fetchledger\nDisallow: /pages/notes\nAllow: /\n")


def robots_hits(web: LoopbackServer) -> int:
    return sum(1 for hit in web.hits if hit.path == "/robots.txt")


def test_robots_is_off_by_default_and_honoured_on_request(web: LoopbackServer, led: Ledger,
                                                          ledger_path: Path) -> None:
    web.replies["robots"] = Reply(200, {"Content-Type": "text/plain"}, ROBOTS)
    before = robots_hits(web)
    assert led.fetch(web.url("/pages/notes")).source.id == 1  # not asked to honour it
    assert robots_hits(web) == before
    with pytest.raises(RobotsDenied, match="disallows") as caught:
        led.fetch(web.url("/pages/notes"), robots=True)
    assert caught.value.exit_code == 3
    # the fetchledger group overrides the * group: news is allowed for fetchledger
    assert led.fetch(web.url("/pages/news"), robots=True).source.id == 2
    assert robots_hits(web) == before + 1  # fetched once, cached per origin
    statuses = rows(ledger_path, "SELECT status FROM attempt ORDER BY id")
    assert statuses == [("ok",), ("robots_denied",), ("ok",)]


def test_robots_missing_allows_and_server_error_disallows(web: LoopbackServer,
                                                         ledger_path: Path) -> None:
    with Ledger(ledger_path, allow_private=True) as led:
        assert led.fetch(web.url("/pages/news"), robots=True).source.id == 1  # 404: allowed
    web.replies["robots"] = Reply(503, {}, b"")
    with Ledger(ledger_path, allow_private=True) as led, \
            pytest.raises(RobotsDenied, match="RFC 9309"):
        led.fetch(web.url("/pages/article"), robots=True)


def test_robots_request_obeys_the_address_policy(web: LoopbackServer, ledger_path: Path) -> None:
    before = web.connections
    with Ledger(ledger_path) as led, pytest.raises(BlockedAddress):
        led.fetch(web.url("/pages/news"), robots=True)
    assert web.connections == before


def test_the_async_path_makes_the_same_document(web: LoopbackServer) -> None:
    """Batch's path: the async client (robots.txt first), then the same extraction."""
    from fetchledger.adapters.web import document_from_response, web_identity
    from fetchledger.net.client import HTTPRequest
    from fetchledger.net.robots import RobotsCache

    web.replies["robots"] = Reply(200, {"Content-Type": "text/plain"}, ROBOTS)

    async def fetched(client: AsyncHTTPClient, cache: RobotsCache, url: str) -> Document:
        await cache.check_async(url, client)
        response = await client.send(HTTPRequest(url))
        key = b"k" * 32
        return document_from_response(response, web_identity(url, key), limits=client.limits,
                                      key=key)

    async def scenario() -> None:
        async with AsyncHTTPClient(allow_private=True) as client:
            cache = RobotsCache()
            document = await fetched(client, cache, web.url("/redirect/1"))
            assert document.title == "How honeybees find their way home"
            assert document.aliases == (web.url("/redirect/1"), web.url("/pages/article"))
            with pytest.raises(RobotsDenied):
                await fetched(client, cache, web.url("/pages/notes"))

    asyncio.run(scenario())


def test_a_quotation_wrapped_in_the_source_is_one_stored_line(web: LoopbackServer,
                                                             led: Ledger) -> None:
    got = led.fetch(web.url("/pages/article"))
    assert ('"The dance is a map drawn in time rather than in space," said the entomologist '
            'Karl Osterberg.') in led.text(got.source.id).split("\n")


def test_a_stray_latin1_byte_in_a_utf8_page_spoils_only_itself(web: LoopbackServer,
                                                               led: Ledger) -> None:
    body = ("<html><body><article><p>Grüße aus München: die Brücke über die Isar wurde "
            "1857 eröffnet und später mehrmals erweitert.</p><p>Die Straßenbahn fährt seit "
            "1895 über die Brücke.</p>").encode() + b"<p>Caf\xe9</p></article></body></html>"
    web.replies["mutable"] = Reply(200, {"Content-Type": "text/html; charset=utf-8"}, body)
    text = led.text(led.fetch(web.url("/mutable")).source.id)
    assert "Grüße aus München: die Brücke über die Isar wurde 1857 eröffnet" in text
    assert "Caf\ufffd" in text


@pytest.mark.parametrize(("path", "name"), [("/pages/article", "article.html"),
                                            ("/pages/readme", "readme.md"),
                                            ("/pages/notes", "notes.txt")])
def test_a_page_is_the_same_document_fetched_or_read_from_a_file(
        web: LoopbackServer, led: Ledger, tmp_path: Path, path: str, name: str) -> None:
    """One builder makes HTML and text documents, whichever way the bytes came."""
    from .webserver import site_page

    local = tmp_path / name
    local.write_text(site_page(name), encoding="utf-8")
    fetched, read = led.fetch(web.url(path)), led.read(local)
    assert led.text(fetched.source.id) == led.text(read.source.id)
    assert fetched.source.title == read.source.title or name.endswith(".txt")
    facts = [led.details(r.source.id).versions[0] for r in (fetched, read)]
    assert facts[0]["extractor"] == facts[1]["extractor"]
    assert facts[0]["meta"].get("language") == facts[1]["meta"].get("language")
