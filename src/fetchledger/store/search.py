"""Ledger-wide search candidates, on each backend, read within bounds.

Every backend picks the candidates of a ledger-wide search by one rule: the
passages holding the query words that weigh most (the IDF of the words each
holds, summed: :func:`fetchledger.text.passages.idf`), the shorter first on
ties, up to ``limit``; the shared scorer ranks them
(:func:`fetchledger.text.passages.rank_candidates`). Only each source's latest
version is indexed, so every candidate is current.

Each candidate comes with ``context`` code points of stored text on each side,
and what a search reads for it is bounded whatever the size of its source:

- a text of at most :data:`SUBSTR_CHUNKS` chunks (of
  :data:`~fetchledger.store.windows.CHUNK` code points) gives its window with
  ``substr`` in the query (reading such a text whole costs less than
  decompressing a chunk);
- a longer text gives it from the one or two ``text_chunk`` rows that hold the
  window (each chunk read once per search), never from the whole text: SQLite
  reads a whole value to take a ``substr`` of it and PostgreSQL detoasts it, so
  100 candidates in a 5 MB PDF loaded 500 MB.

The SQL of both backends lives here (each store runs it in one snapshot with
its ``rows(sql, params)``), so the two stay one rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..text.passages import idf, tokenize
from .protocol import Candidates, PassageHit
from .windows import spans_from_chunks

__all__ = ["SUBSTR_CHUNKS", "Rows", "postgres_search", "sqlite_search"]

Rows = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]

SUBSTR_CHUNKS = 4  # a text of at most this many chunks is cut with substr
# A candidate's columns; its context is NULL when its text is longer than that.
_COLUMNS = (
    "v.source_id, v.id, v.number, p.start, p.{end}, p.page, p.page_label, "
    "CASE WHEN NOT EXISTS (SELECT 1 FROM text_chunk c WHERE c.version_id = v.id "
    f"                     AND c.n = {SUBSTR_CHUNKS}) "
    "THEN substr(v.text, {greatest}(p.start - {p}, 0) + 1, "
    "            p.{end} - {greatest}(p.start - {p}, 0) + {p}) END, "
    "{greatest}(p.start - {p}, 0)"
)
_SQLITE_COLUMNS = _COLUMNS.format(end="end", greatest="max", p="?")
_POSTGRES_COLUMNS = _COLUMNS.format(end='"end"', greatest="greatest", p="%s")


def sqlite_search(rows: Rows, words: Sequence[str], limit: int, context: int) -> Candidates:
    """The candidates from SQLite's FTS5 index: the passages holding a query word are
    weighed from the index alone; only those weighing at least the ``limit``-th
    weight are looked up for their length (the tie-break)."""
    quoted = ['"' + word.replace('"', '""') + '"' for word in words]
    count = "SELECT count(*) FROM passage_fts WHERE passage_fts MATCH ?"
    holding = {word: rows(count, (match,))[0][0]
               for word, match in zip(words, quoted, strict=True)}
    # passages ever indexed (superseded ones too): near enough, and no scan
    total = rows("SELECT coalesce(max(id), 0) FROM passage", ())[0][0]
    weighed = [(idf(total, holding[word]), match)
               for word, match in zip(words, quoted, strict=True) if holding[word]]
    if not weighed:
        return Candidates((), total, holding)
    held = " UNION ALL ".join(
        ["SELECT rowid AS id, ? AS w FROM passage_fts WHERE passage_fts MATCH ?"] * len(weighed))
    sql = (
        f"WITH hit AS MATERIALIZED (SELECT id, sum(w) AS weight FROM ({held}) GROUP BY id), "
        "cut AS (SELECT coalesce((SELECT weight FROM hit ORDER BY weight DESC "
        "                         LIMIT 1 OFFSET ?), -1e308) AS weight) "
        f"SELECT {_SQLITE_COLUMNS} "
        "FROM (SELECT q.id, hit.weight FROM hit JOIN passage q ON q.id = hit.id "
        "      WHERE hit.weight >= (SELECT weight FROM cut) "
        "      ORDER BY hit.weight DESC, q.end - q.start, q.id LIMIT ?) AS best "
        "JOIN passage p ON p.id = best.id JOIN version v ON v.id = p.version_id "
        "ORDER BY best.weight DESC, p.end - p.start, p.id"
    )
    params = ([x for pair in weighed for x in pair] + [max(limit - 1, 0)]
              + [context] * 4 + [limit])
    return Candidates(_hits(rows(sql, params), rows, "?", context), total, holding)


def _tsquery(terms: Sequence[str]) -> str:
    """A tsquery matching any of ``terms`` (the scorer's own stems), quoted."""
    return " | ".join("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in terms)


def postgres_search(rows: Rows, words: Sequence[str], limit: int, context: int) -> Candidates:
    """The candidates from PostgreSQL's GIN index of each passage's stemmed words."""
    terms_of = {word: sorted(set(tokenize(word))) for word in words}
    everything = sorted({t for terms in terms_of.values() for t in terms})
    if not everything:
        return Candidates((), 0, dict.fromkeys(words, 0))
    counts = rows(
        "SELECT " + ", ".join(["(SELECT count(*) FROM passage WHERE terms @@ %s::tsquery)"]
                              * len(everything)) + ", (SELECT coalesce(max(id), 0) "
        "FROM passage)", [_tsquery([t]) for t in everything])[0]
    holding_term = dict(zip(everything, counts[:-1], strict=True))
    total = int(counts[-1])
    # IDF of each term weighs the candidates: the index's pre-selection
    weights = " + ".join(
        "(CASE WHEN terms @@ %s::tsquery THEN %s ELSE 0 END)" for _ in everything)
    params: list[Any] = []
    for term in everything:
        params += [_tsquery([term]), idf(total, holding_term[term])]
    found = rows(
        f"SELECT {_POSTGRES_COLUMNS} "
        f"FROM (SELECT id, version_id, start, \"end\", page, page_label, {weights} AS w "
        "      FROM passage WHERE terms @@ %s::tsquery "
        "      ORDER BY w DESC, \"end\" - start, id LIMIT %s) AS p "
        "JOIN version v ON v.id = p.version_id ORDER BY p.w DESC, p.\"end\" - p.start, p.id",
        [context] * 4 + [*params, _tsquery(everything), limit])
    holding = {word: max((holding_term[t] for t in terms), default=0)
               for word, terms in terms_of.items()}
    return Candidates(_hits(found, rows, "%s", context), total, holding)


def _hits(found: list[tuple[Any, ...]], rows: Rows, mark: str,
          context: int) -> tuple[PassageHit, ...]:
    """The candidates of ``found``, the windows of long texts read from their chunks."""
    spans: dict[int, list[tuple[int, int]]] = {}
    for row in found:
        if row[7] is None:
            spans.setdefault(row[1], []).append((row[8], row[4] + context))
    windows = {version_id: dict(zip(wanted, spans_from_chunks(rows, mark, version_id, wanted),
                                    strict=True))
               for version_id, wanted in spans.items()}
    return tuple(
        PassageHit(source_id, version_id, number, start, end, page, label,
                   text if text is not None else windows[version_id][(at, end + context)], at)
        for source_id, version_id, number, start, end, page, label, text, at in found)
