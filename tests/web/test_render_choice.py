"""When a page is rendered (``--render auto|always|never``), and what happens without a
browser. No Chromium runs here: a missing one is simulated with ``FETCHLEDGER_CHROMIUM``
naming no executable."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fetchledger import EmptyContent, InvalidArgument, Ledger
from fetchledger.adapters.browser import looks_script_built, unavailable_reason, wants_render

from .webserver import LoopbackServer, site_page
from conftest import table_counts

ARTICLE = "<p>" + "The tide tables list every high and low water of the year. " * 8 + "</p>"

# (page, script-built?, why)
PAGES: list[tuple[str, bool, str]] = [
    (site_page("js-shell.html"), True, "an app shell: a bundle and an empty #root"),
    (site_page("app-shell.html"), True, "an empty #app and a noscript asking for JavaScript"),
    ('<html><body><p>Loading…</p><script src="/main.js"></script></body></html>', True,
     "a loading line and a bundle"),
    ('<html><body><div id="__next"></div><script>self.__next_f=[1]</script></body></html>',
     True, "an empty mount point with a small inline bootstrap"),
    ("<html><body><script>" + "document.body.append('x');" * 10 + "</script></body></html>",
     True, "only an inline app"),
    (site_page("article.html"), False, "an article (scripts or not)"),
    (f'<html><body>{ARTICLE * 2}<script src="/analytics.js"></script></body></html>', False,
     "a page that shows its text without scripts"),
    ('<html><body><div>Short visible line.</div><script>var x = "a";</script></body></html>',
     False, "a short page whose tiny script builds nothing"),
    ('<html><body><p>Hi.</p><script type="application/ld+json">{"@type": "Thing"}</script>'
     "</body></html>", False, "data, not a script"),
    ("<html><body><p>Nothing here yet.</p></body></html>", False, "no script at all"),
    ("", False, "an empty document"),
]


@pytest.mark.parametrize(("page", "expected", "why"), PAGES, ids=[p[2] for p in PAGES])
def test_script_built_pages_are_told_apart(page: str, expected: bool, why: str) -> None:
    assert looks_script_built(page) is expected, why


def test_the_modes() -> None:
    def page(html: str | None) -> Callable[[], str | None]:
        return lambda: html

    def unread() -> str:
        raise AssertionError("the HTML was decoded though the text decided already")

    shell, article = site_page("js-shell.html"), site_page("article.html")
    assert wants_render("auto", page(shell), "") is True
    assert wants_render("auto", unread, "word " * 60) is False  # enough main text: no need
    assert wants_render("auto", page(article), "") is False
    assert wants_render("always", page(article), "word " * 500) is True
    assert wants_render("always", page(None), "") is False  # not HTML: nothing to render
    assert wants_render("never", unread, "") is False


def test_a_bad_render_mode_is_bad_input(web: LoopbackServer, ledger_path: Path) -> None:
    with Ledger(ledger_path, allow_private=True) as ledger, pytest.raises(InvalidArgument):
        ledger.fetch(web.url("/app/shell"), render="sometimes")
    assert table_counts(ledger_path).get("attempt", 0) == 0


@pytest.fixture
def no_browser(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    monkeypatch.setenv("FETCHLEDGER_CHROMIUM", str(tmp_path / "no-chromium"))
    monkeypatch.setattr("fetchledger.adapters.web._REMEDY_GIVEN", threading.Event())
    reason = unavailable_reason()
    assert reason is not None
    return reason


def test_without_a_browser_auto_keeps_the_plain_result_and_says_why(
        web: LoopbackServer, ledger_path: Path, no_browser: str, run_cli: Any) -> None:
    with Ledger(ledger_path, allow_private=True) as ledger:
        with pytest.raises(EmptyContent) as caught:
            ledger.fetch(web.url("/app/shell"))
        assert "not rendered" in caught.value.message and no_browser in caught.value.message
        assert caught.value.hint and "apt-get install chromium" in caught.value.hint
        with pytest.raises(EmptyContent) as again:
            ledger.fetch(web.url("/pages/js-shell"))
        assert no_browser in again.value.message and again.value.hint is None  # said once
        article = ledger.fetch(web.url("/pages/article"))  # no shell: no warning
    assert article.warnings == ()
    result = run_cli("fetch", "--allow-private", web.url("/app/shell"))
    assert result.exit_code == 3 and "not rendered" in result.stderr


def test_without_a_browser_a_thin_page_registers_with_a_warning(
        web: LoopbackServer, ledger_path: Path, no_browser: str) -> None:
    web.replies["mutable"].body = (b'<html><head><title>Fleet</title></head><body><p>'
                                   b"Loading the harbour fleet list for you now.</p>"
                                   b'<script src="/app/app.js"></script></body></html>')
    with Ledger(ledger_path, allow_private=True) as ledger:
        got = ledger.fetch(web.url("/mutable"))
    assert [w for w in got.warnings if "not rendered" in w and no_browser in w]


def test_without_a_browser_always_is_bad_input_before_any_request(
        web: LoopbackServer, ledger_path: Path, no_browser: str, run_cli: Any) -> None:
    before = len(web.hits)
    result = run_cli("fetch", "--allow-private", "--render", "always", web.url("/app/shell"))
    assert result.exit_code == 2 and "needs a browser" in result.stderr
    batch = run_cli("batch", "--allow-private", "--render", "always", "-",
                    input=web.url("/app/shell") + "\n")
    assert batch.exit_code == 2 and "needs a browser" in batch.stderr
    assert len(web.hits) == before
    assert table_counts(ledger_path).get("attempt", 0) == 0
