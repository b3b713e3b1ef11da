"""Search results as batch inputs (``ingest``): each URL a search tool returned, with the
provenance of the hit — the query, the engine, the rank, the result's title and snippet.

Read, in this order:

- **JSON** of the common search APIs: a results list at the top level, or under
  ``results`` (SearXNG, Tavily, Exa), ``web`` (Brave: ``web.results``),
  ``organic`` (Serper), ``organic_results`` (SerpAPI), ``items`` (Google
  Programmable Search), ``data`` (Firecrawl, Jina), ``webPages.value`` (Bing);
  each item carries ``url`` or ``link``. The query and engine come from the
  document where it names them (``query``, ``search_parameters``,
  ``searchParameters``, ``queries.request``; an item's own ``engine``).
- **JSON lines**: one result object per line.
- **Plain text**: one URL per line (blank lines and ``#`` comments skipped).

The snippet is the search engine's words about a page, not the page's: it is kept
as provenance and never handed out as a quote.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidArgument
from ..models import SearchHit
from ..text.normalize import one_line
from .lines import BatchInput

__all__ = ["SearchResults", "read_search_results"]

_LIST_KEYS = ("results", "web", "organic", "organic_results", "items", "data", "webPages",
              "value")
_TITLE_KEYS = ("title", "name")
_SNIPPET_KEYS = ("snippet", "content", "description", "text", "body")
_MAX_FIELD = 1000  # characters kept of a result's title or snippet


@dataclass(frozen=True)
class SearchResults:
    """The inputs a results file holds, each with its hit (``BatchInput.search``)."""

    inputs: tuple[BatchInput, ...]
    query: str | None
    engine: str | None


def read_search_results(text: str, *, name: str = "-", query: str | None = None,
                        engine: str | None = None) -> SearchResults:
    """The URLs of a results file and the provenance of each; ``query`` and ``engine``
    stand in where the file does not name them. InvalidArgument (exit 2) for JSON that
    does not parse or a file with no URL."""
    stripped = text.strip().lstrip("\ufeff")
    if stripped[:1] in ("{", "["):
        items, found_query, found_engine = _json_results(stripped, name)
    else:
        items, found_query, found_engine = _url_lines(stripped), None, None
    query, engine = found_query or _clean(query), found_engine or _clean(engine)
    inputs = []
    for position, url, item in items:
        hit = SearchHit(query, _clean(item.get("engine")) or engine, _rank(item, position),
                        _first(item, _TITLE_KEYS), _first(item, _SNIPPET_KEYS))
        inputs.append(BatchInput(url, search=hit, line=item.get("__line__")))
    if not inputs:
        raise InvalidArgument(f"no URLs in {name}: no search result with a url or link",
                              hint="a list of results with \"url\" (or \"link\"), or one URL "
                                   "per line")
    return SearchResults(tuple(inputs), query, engine)


_Item = tuple[int, str, dict[str, Any]]  # position in the results (1-based), URL, result


def _json_results(text: str, name: str) -> tuple[list[_Item], str | None, str | None]:
    try:
        data = json.loads(text)
    except ValueError as whole:
        data = _json_lines(text, name, whole)
    except RecursionError as exc:  # [[[[… nested deeper than the parser goes
        raise InvalidArgument(f"{name} is not valid JSON: nested too deeply") from exc
    found = _result_list(data)
    items = [(position, url.strip(), item) for position, item in enumerate(found or [], 1)
             if isinstance(url := item.get("url") or item.get("link"), str) and url.strip()]
    document = data if isinstance(data, Mapping) else {}
    return items, _query_of(document), _engine_of(document)


def _json_lines(text: str, name: str, whole: ValueError) -> list[dict[str, Any]]:
    """One JSON object per line; the whole text's error when it is not that either."""
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):
            raise InvalidArgument(f"{name} is not valid JSON: {whole}") from whole
        if not isinstance(row, dict):
            raise InvalidArgument(f"{name} is not valid JSON: {whole}") from whole
        rows.append({**row, "__line__": number})
    return rows


def _result_list(data: Any, depth: int = 0) -> list[dict[str, Any]] | None:
    """The first list of result objects at the top or under a results key (a level or
    two down: ``web.results``, ``webPages.value``, ``data.web``)."""
    if isinstance(data, list):
        items = [d for d in data if isinstance(d, dict)]
        return items if any("url" in d or "link" in d for d in items) else None
    if isinstance(data, Mapping) and depth < 3:
        for key in _LIST_KEYS:
            if key in data and (found := _result_list(data[key], depth + 1)) is not None:
                return found
    return None


def _query_of(document: Mapping[str, Any]) -> str | None:
    query = document.get("query")
    if isinstance(query, Mapping):  # Brave: {"original": ..., "altered": ...}
        query = query.get("original") or query.get("altered")
    for holder in ("search_parameters", "searchParameters"):  # SerpAPI, Serper
        if not query and isinstance(document.get(holder), Mapping):
            query = document[holder].get("q")
    context = document.get("queryContext")  # Bing
    if not query and isinstance(context, Mapping):
        query = context.get("originalQuery")
    requests = document.get("queries", {})
    if not query and isinstance(requests, Mapping):  # Google Programmable Search
        first = (requests.get("request") or [{}])[0]
        query = first.get("searchTerms") if isinstance(first, Mapping) else None
    return _clean(query)


def _engine_of(document: Mapping[str, Any]) -> str | None:
    for holder in ("search_parameters", "searchParameters"):
        if isinstance(document.get(holder), Mapping) and document[holder].get("engine"):
            return _clean(document[holder]["engine"])
    if str(document.get("kind", "")).startswith("customsearch#"):
        return "google-programmable-search"
    if isinstance(document.get("web"), Mapping) and document.get("type") == "search":
        return "brave"
    return None


def _url_lines(text: str) -> list[_Item]:
    lines = [(number, line.strip()) for number, line in enumerate(text.splitlines(), start=1)
             if line.strip() and not line.strip().startswith("#")]
    return [(position, url, {"__line__": number})
            for position, (number, url) in enumerate(lines, start=1)]


def _rank(item: Mapping[str, Any], position: int) -> int:
    """The engine's own rank of the result when it states one, else its position."""
    for key in ("position", "rank"):
        value = item.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return position


def _first(item: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    return next((found for key in keys if (found := _clean(item.get(key)))), None)


def _clean(value: Any) -> str | None:
    """A field as stored: one line, at most ``_MAX_FIELD`` characters; None if empty."""
    if not isinstance(value, str):
        return None
    text = one_line(value)
    if len(text) > _MAX_FIELD:
        text = text[: _MAX_FIELD - 1].rstrip() + "…"
    return text or None

