"""``ingest``: search results → batch retrieval, every source recording where the search
found it (query, engine, rank, the result's title and snippet), shown and exported;
the search snippet is never handed out as a quote; bad input records nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fetchledger import Ledger
from fetchledger.cli import cli

from .webserver import LoopbackServer

pytestmark = pytest.mark.both_backends

ODDITY = "zyzzyva"  # a word only the search snippet has, never the page


def searxng(web: LoopbackServer) -> str:
    return json.dumps({"query": "lighthouse restoration", "results": [
        {"url": web.url("/pages/news"), "title": "Lighthouse shines again",
         "content": f"The {ODDITY} lighthouse of Kessel Point is back.", "engine": "brave"},
        {"url": web.url("/pages/article"), "title": "Honeybees", "content": "Bees fly home.",
         "engine": "duckduckgo"},
        {"url": web.url("/pages/news?utm_source=feed"), "title": "Lighthouse (again)",
         "engine": "wikipedia"},
        {"url": web.url("/status/404"), "title": "Gone", "engine": "brave"},
    ]})


def _ingest(tmp_path: Path, text: str, *args: str) -> tuple[int, list[dict[str, Any]], str]:
    """Exit code, the JSON lines (or the one JSON error object) printed, and stderr."""
    results = tmp_path / "results.json"
    results.write_text(text)
    got = CliRunner().invoke(cli, ["--allow-private", "--json", "ingest", str(results), *args])
    if got.exit_code == 2 and got.stdout.startswith("{\n"):
        return got.exit_code, [json.loads(got.stdout)], got.stderr
    return got.exit_code, [json.loads(line) for line in got.stdout.splitlines()], got.stderr


def test_every_source_records_where_the_search_found_it(web: LoopbackServer, tmp_path: Path,
                                                        ledger_path: Path) -> None:
    code, lines, stderr = _ingest(tmp_path, searxng(web))
    assert code == 3  # the 404 failed; the others registered
    by_input = {line["input"]: line for line in lines}
    assert by_input[web.url("/status/404")]["error"]["status"] == "http_error"
    assert by_input[web.url("/pages/news?utm_source=feed")]["skipped"] is True
    news = by_input[web.url("/pages/news")]
    # ranked for the search query: the snippets answer the search
    assert "lighthouse" in news["snippets"][0]["quote"].lower()
    assert "ingest: 4 inputs: 2 ok (2 new sources), 1 skipped, 1 http_error" in stderr
    with Ledger(ledger_path) as ledger:
        [news_id] = [s.id for s in ledger.sources() if s.locator.endswith("/pages/news")]
        found = ledger.details(news_id).to_json()["search"]
        assert [(h["query"], h["engine"], h["rank"], h["title"]) for h in found] == [
            ("lighthouse restoration", "brave", 1, "Lighthouse shines again"),
            ("lighthouse restoration", "wikipedia", 3, "Lighthouse (again)")]
        assert found[0]["snippet"] == f"The {ODDITY} lighthouse of Kessel Point is back."
        assert all(h["at"] for h in found)
        shown = ledger.details(news_id).text_lines()
        assert 'found by:  brave "lighthouse restoration" #1' in "\n".join(shown)
        assert ledger.attempts(failed=True)[-1].status == "http_error"


def test_the_search_snippet_is_never_a_quote(web: LoopbackServer, tmp_path: Path,
                                             ledger_path: Path) -> None:
    _ingest(tmp_path, searxng(web))
    with Ledger(ledger_path) as ledger:
        assert ledger.quotes(ODDITY) == []
        assert all(ODDITY not in ledger.text(s.id) for s in ledger.sources())
        assert all(ODDITY not in q.text for q in ledger.recorded_quotes())
        with pytest.raises(Exception, match="not verbatim"):
            ledger.quote(1, f"The {ODDITY} lighthouse of Kessel Point is back.")


def test_a_known_source_gains_the_new_search(web: LoopbackServer, tmp_path: Path,
                                             ledger_path: Path) -> None:
    _ingest(tmp_path, searxng(web))
    again = json.dumps({"search_parameters": {"engine": "google", "q": "Kessel Point"},
                        "organic_results": [{"position": 5, "link": web.url("/pages/news")}]})
    code, [line], _ = _ingest(tmp_path, again)
    assert code == 0 and line["skipped"] is True
    code, _, _ = _ingest(tmp_path, again)  # the same hit twice is recorded once
    with Ledger(ledger_path) as ledger:
        [news_id] = [s.id for s in ledger.sources() if s.locator.endswith("/pages/news")]
        assert [(h.query, h.engine, h.rank) for h in ledger.details(news_id).searches] == [
            ("lighthouse restoration", "brave", 1), ("lighthouse restoration", "wikipedia", 3),
            ("Kessel Point", "google", 5)]
        assert ledger.source(news_id).versions == 1


def test_url_lines_take_the_search_query_and_engine_options(
        web: LoopbackServer, tmp_path: Path, ledger_path: Path) -> None:
    text = f"# from a notebook\n{web.url('/pages/article')}\n{web.url('/pdf')}\n"
    code, lines, _ = _ingest(tmp_path, text, "--search-query", "spring tides",
                             "--engine", "kagi", "-k", "1")
    assert code == 0 and len(lines) == 2
    with Ledger(ledger_path) as ledger:
        hits = {s.locator.rsplit("/", 1)[-1]: ledger.details(s.id).searches[0]
                for s in ledger.sources()}
    assert (hits["pdf"].query, hits["pdf"].engine, hits["pdf"].rank) == ("spring tides",
                                                                          "kagi", 2)
    assert hits["article"].rank == 1


def test_exports_keep_the_provenance(web: LoopbackServer, tmp_path: Path,
                                     ledger_path: Path) -> None:
    _ingest(tmp_path, searxng(web))
    pack = tmp_path / "pack"
    result = CliRunner().invoke(cli, ["export", "--format", "pack", "-o", str(pack)])
    assert result.exit_code == 0, result.output
    manifest = json.loads((pack / "sources.json").read_text())
    engines = {h["engine"] for s in manifest["sources"] for h in s["search"]}
    assert engines == {"brave", "wikipedia", "duckduckgo"}
    warc = tmp_path / "ledger.warc"
    assert CliRunner().invoke(cli, ["export", "--format", "warc", "-o", str(warc)]).exit_code == 0
    assert b'"search": [' in warc.read_bytes() and ODDITY.encode() in warc.read_bytes()


@pytest.mark.parametrize(("text", "message"), [
    ('{"results": [{"url": "https://a.example/"}', "not valid JSON"),
    ('{"answer": "no results here"}', "no URLs in"),
    ("# only a comment\n", "no URLs in"),
])
def test_bad_results_exit_2_and_record_nothing(web: LoopbackServer, tmp_path: Path,
                                               ledger_path: Path, text: str,
                                               message: str) -> None:
    hits = len(web.hits)
    code, [printed], stderr = _ingest(tmp_path, text)
    assert code == 2 and printed["error"]["status"] == "invalid_argument"
    assert message in printed["error"]["message"] and message in stderr
    assert stderr.startswith("fetchledger: error: ")
    assert len(web.hits) == hits
    with Ledger(ledger_path) as ledger:
        assert ledger.sources() == [] and ledger.attempts() == []


def test_stdin_and_the_python_api(web: LoopbackServer, ledger_path: Path) -> None:
    text = json.dumps([{"url": web.url("/pages/readme"), "title": "Readme"}])
    got = CliRunner().invoke(cli, ["--allow-private", "ingest", "-", "--engine", "exa"],
                             input=text)
    assert got.exit_code == 0 and got.stdout.startswith("[1] ")
    with Ledger(ledger_path, allow_private=True) as ledger:
        outcomes = ledger.ingest(json.dumps([{"url": web.url("/pages/notes"), "rank": 9}]),
                                 engine="exa")
        assert ledger.details(outcomes[0].source.id).searches[0].rank == 9
