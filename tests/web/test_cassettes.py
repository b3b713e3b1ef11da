"""Recorded exchanges (cassettes/) replayed through respx: every content type and failure.

The hosts in the cassettes (``*.example``) are never resolved: respx answers
before any connection. The last test re-records every cassette from the
loopback server and compares, so the cassettes stay what the recorder makes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import respx

from fetchledger import Ledger
from fetchledger.errors import RetrievalFailed

from .cassette import CASSETTES, PLANS, load, record, replay
from .webserver import LoopbackServer
from conftest import rows, table_counts


@pytest.fixture
def led(ledger_path: Path) -> Iterator[Ledger]:
    with Ledger(ledger_path) as opened:  # the default policy: names are judged, not mocked
        yield opened


def replayed(name: str) -> tuple[respx.MockRouter, str]:
    cassette = load(name)
    router = respx.mock(assert_all_called=False)
    replay(router, cassette)
    return router, str(cassette["url"])


@pytest.mark.parametrize(("name", "title", "phrase"), [
    ("article", "How honeybees find their way home", "a brain of about one million neurons"),
    ("news-redirect", "Harbour town opens its restored lighthouse", "2.4 million euros"),
    ("accents-cp1252", "Café culture in Liège", "Geneviève Dubœuf"),
    ("accents-wrong-header", "Café culture in Liège", "crème chantilly"),
    ("japanese-sjis", "富士山の気象観測", "氷点下三十度"),
    ("data-json", "data", '"wind_knots": 23,'),
    ("notes-text", "notes", "missing one of its five arms"),
    ("readme-markdown", "Lantern maintenance", "never with water"),
    ("tide-tables-pdf", "Tide tables", "Neap tides stay below 2.3 metres."),
    ("cookie-wall", "Harbour town opens its restored lighthouse", "Fresnel lens"),
])
def test_replayed_pages_register(led: Ledger, ledger_path: Path, name: str, title: str | None,
                                 phrase: str) -> None:
    router, url = replayed(name)
    with router:
        got = led.fetch(url)
    assert got.source.title == title
    assert phrase in led.text(got.source.id)
    for snippet in got.snippets:
        assert led.text(got.source.id)[snippet.start : snippet.end] == snippet.quote
    assert rows(ledger_path, "SELECT kind, locator FROM source") == [("web", url)]


def test_a_redirect_makes_both_urls_one_source(led: Ledger, ledger_path: Path) -> None:
    router, url = replayed("news-redirect")
    with router:
        first = led.fetch(url)
        second = led.fetch("https://coastline-daily.example/pages/news-br")
    assert first.source.id == second.source.id == 1
    assert {a for (a,) in rows(ledger_path, "SELECT locator FROM alias")} == {
        url, "https://coastline-daily.example/pages/news-br"}


@pytest.mark.parametrize(("name", "status", "message"), [
    ("js-shell", "empty_content", "JavaScript"),
    ("empty", "empty_content", "empty"),
    ("not-found", "http_error", "HTTP 404 Not Found"),
    ("gone", "http_error", "HTTP 410 Gone"),
    ("server-error", "http_error", "HTTP 503 Service Unavailable"),
    ("image", "unsupported_type", "image/png"),
    ("redirect-loop", "http_error", "loop"),
])
def test_replayed_failures_are_attempts(led: Ledger, ledger_path: Path, name: str,
                                        status: str, message: str) -> None:
    router, url = replayed(name)
    with router, pytest.raises(RetrievalFailed) as caught:
        led.fetch(url, render="never")  # replayed bytes only: a browser would go online
    assert caught.value.status == status and message in caught.value.message
    assert table_counts(ledger_path)["source"] == 0
    assert rows(ledger_path, "SELECT locator, status FROM attempt") == [(url, status)]


def test_a_replayed_post_is_an_http_source(led: Ledger, ledger_path: Path) -> None:
    cassette = load("api-post")
    router = respx.mock(assert_all_called=True)
    replay(router, cassette)
    body = cassette["interactions"][0]["request"]["body"]
    with router:
        got = led.curl(["-X", "POST", "--json", body, str(cassette["url"])], query="station")
        request = router.calls.last.request
    assert got.source.kind == "http"
    assert got.source.locator.startswith("POST https://api.kessel-point.example/echo "
                                         "body:sha256=")
    assert '"method": "POST",' in led.text(1).split("\n")
    assert request.content == body.encode()
    assert request.headers["content-type"] == "application/json"


def test_the_recorder_reproduces_every_cassette(web: LoopbackServer) -> None:
    assert sorted(p.stem for p in CASSETTES.glob("*.yaml")) == sorted(p.name for p in PLANS)
    for plan in PLANS:
        assert record(plan, web.base) == load(plan.name), plan.name
