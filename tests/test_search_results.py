"""Reading search results (``ingest``): the shapes of the common search APIs, JSON lines,
one URL per line, and the bad inputs that must stop before anything is recorded."""

from __future__ import annotations

import json

import pytest

from fetchledger import InvalidArgument, SearchHit
from fetchledger.batch.searches import read_search_results

A, B = "https://a.example/boiling", "https://b.example/altitude"

SHAPES = {
    "a list at the top level": [{"url": A, "title": "Boiling", "snippet": "Water boils."},
                                {"url": B, "title": "Altitude"}],
    "SearXNG": {"query": "boiling point", "number_of_results": 2, "results": [
        {"url": A, "title": "Boiling", "content": "Water boils.", "engine": "duckduckgo",
         "engines": ["duckduckgo", "brave"], "score": 2.0},
        {"url": B, "title": "Altitude", "content": "", "engine": "wikipedia"}]},
    "Brave": {"type": "search", "query": {"original": "boiling point"}, "web": {
        "type": "search", "results": [
            {"url": A, "title": "Boiling", "description": "Water boils."},
            {"url": B, "title": "Altitude"}]}},
    "SerpAPI": {"search_parameters": {"engine": "google", "q": "boiling point"},
                "organic_results": [
                    {"position": 1, "link": A, "title": "Boiling", "snippet": "Water boils."},
                    {"position": 2, "link": B, "title": "Altitude"}]},
    "Serper": {"searchParameters": {"q": "boiling point", "engine": "google"}, "organic": [
        {"link": A, "title": "Boiling", "snippet": "Water boils.", "position": 1},
        {"link": B, "title": "Altitude", "position": 2}]},
    "Google Programmable Search": {
        "kind": "customsearch#search",
        "queries": {"request": [{"searchTerms": "boiling point"}]},
        "items": [{"link": A, "title": "Boiling", "snippet": "Water boils."},
                  {"link": B, "title": "Altitude"}]},
    "Tavily": {"query": "boiling point", "results": [
        {"url": A, "title": "Boiling", "content": "Water boils.", "score": 0.9},
        {"url": B, "title": "Altitude", "content": ""}]},
    "Firecrawl": {"success": True, "data": [
        {"url": A, "title": "Boiling", "description": "Water boils."},
        {"url": B, "title": "Altitude"}]},
    "Bing": {"queryContext": {"originalQuery": "boiling point"}, "webPages": {"value": [
        {"url": A, "name": "Boiling", "snippet": "Water boils."},
        {"url": B, "name": "Altitude"}]}},
}
QUERY = {"a list at the top level": None, "Firecrawl": None}
ENGINE = {"SearXNG": "duckduckgo", "Brave": "brave", "SerpAPI": "google", "Serper": "google",
          "Google Programmable Search": "google-programmable-search"}


@pytest.mark.parametrize("shape", SHAPES)
def test_the_shapes_of_common_search_apis(shape: str) -> None:
    results = read_search_results(json.dumps(SHAPES[shape]))
    assert [i.url for i in results.inputs] == [A, B]
    first = results.inputs[0].search
    assert first is not None
    assert (first.rank, first.title, first.snippet) == (1, "Boiling", "Water boils.")
    assert first.query == QUERY.get(shape, "boiling point")
    assert first.engine == ENGINE.get(shape)
    assert results.inputs[1].search is not None and results.inputs[1].search.rank == 2


def test_the_options_stand_in_where_the_results_say_nothing() -> None:
    listed = read_search_results(json.dumps([{"url": A}]), query="boiling", engine="kagi")
    assert listed.inputs[0].search == SearchHit("boiling", "kagi", 1)
    named = read_search_results(json.dumps(SHAPES["SerpAPI"]), query="other", engine="bing")
    assert named.inputs[0].search is not None
    assert (named.inputs[0].search.query, named.inputs[0].search.engine) == (
        "boiling point", "google")  # the results' own word wins


def test_json_lines_and_url_lines() -> None:
    lines = "\n".join(json.dumps({"url": u, "title": t}) for u, t in ((A, "one"), (B, "two")))
    parsed = read_search_results(lines)
    assert [(i.url, i.line, i.search.rank if i.search else 0) for i in parsed.inputs] == [
        (A, 1, 1), (B, 2, 2)]
    urls = read_search_results(f"# found by hand\n{A}\n\n  {B}  \n", query="boiling")
    assert [(i.url, i.line) for i in urls.inputs] == [(A, 2), (B, 4)]
    assert urls.inputs[1].search == SearchHit("boiling", None, 2)


def test_fields_are_one_line_and_bounded() -> None:
    parsed = read_search_results(json.dumps([{"url": A, "title": "Two\nlines\u2028here",
                                              "snippet": "x" * 5000}]))
    hit = parsed.inputs[0].search
    assert hit is not None and hit.title == "Two lines here"
    assert hit.snippet is not None and len(hit.snippet) == 1000 and hit.snippet.endswith("…")


def test_items_without_a_url_are_not_results() -> None:
    parsed = read_search_results(json.dumps({"results": [
        {"title": "an answer box"}, {"url": 7}, {"url": "  "}, {"link": A}]}))
    assert [(i.url, i.search.rank if i.search else 0) for i in parsed.inputs] == [(A, 4)]


@pytest.mark.parametrize("text", [
    '{"results": [{"url": "https://a.example"}', "[1, 2", '{"url": "x"}\n{oops}',
])
def test_bad_json_is_bad_input(text: str) -> None:
    with pytest.raises(InvalidArgument, match="not valid JSON"):
        read_search_results(text, name="results.json")


@pytest.mark.parametrize("text", [
    "", "# nothing\n\n", "[]", '{"results": []}', '{"answer": "42"}',
    '[{"title": "no url"}]', '{"web": {"results": [{"title": "t"}]}}',
])
def test_no_urls_is_bad_input(text: str) -> None:
    with pytest.raises(InvalidArgument, match=r"no URLs in results\.json"):
        read_search_results(text, name="results.json")
