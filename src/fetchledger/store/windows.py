"""Reading a stored version window by window, the same on every backend.

A reading (:meth:`fetchledger.Ledger.read_source`) must not load or split a
whole text per call: a 2,000-page PDF or a 50 MB text file is read a few
thousand characters at a time. Two things make that possible:

- each ``passage`` row carries its ``ordinal`` (1-based, in text order) and a
  ``heading`` flag, indexed, so a window is a range query;
- each version's text is kept a second time as zlib-compressed *chunks* of
  :data:`CHUNK` code points (``text_chunk``), so a window's words come from one
  or two chunks instead of the whole text (SQLite reads a whole value to take
  a ``substr`` of it; PostgreSQL detoasts a multibyte text up to the offset).

The SQL is written once here with ``{p}`` for the backend's parameter mark.
"""

from __future__ import annotations

import json
import zlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

from ..text.passages import Passage, heading_flags
from .protocol import PassageRow, VersionShape

__all__ = [
    "CHUNK",
    "CHUNK_INSERT",
    "COPY_ORDER",
    "WindowReads",
    "chunk_rows",
    "chunk_text",
    "reading_columns",
    "spans_from_chunks",
]

CHUNK = 16384  # code points of stored text per chunk

def chunk_text(text: str) -> tuple[bytes, ...]:
    """``text`` as compressed chunks of :data:`CHUNK` code points, in order."""
    return tuple(zlib.compress(text[at : at + CHUNK].encode("utf-8"), 6)
                 for at in range(0, len(text), CHUNK))


CHUNK_INSERT = "INSERT INTO text_chunk (version_id, n, body) VALUES ({p}, {p}, {p})"
COPY_ORDER = {"alias": "locator", "text_chunk": "version_id, n"}  # by id otherwise


def chunk_rows(version_id: int, chunks: Sequence[bytes]) -> list[tuple[int, int, bytes]]:
    """The ``text_chunk`` rows of a version (:data:`CHUNK_INSERT`)."""
    return [(version_id, n, body) for n, body in enumerate(chunks)]


def reading_columns(kind: str, text: str, passages: Sequence[Passage], *,
                    chunks: tuple[bytes, ...] | None = None,
                    ) -> tuple[tuple[bool, ...], tuple[bytes, ...]]:
    """What a version stores for reading beside its passages: each passage's heading
    flag (none in command output: its lines are no document's structure) and the
    text's chunks (``chunks``: already made, ``chunk_text(text)``). CPU work, done
    before the write transaction."""
    flags = (False,) * len(passages) if kind == "command" else heading_flags(text, passages)
    return tuple(flags), chunk_text(text) if chunks is None else chunks


class WindowReads(ABC):
    """The reads of a window, mixed into each backend: its ``_rows(sql, params)`` runs
    a query (``{p}`` already replaced by :attr:`_mark`) and returns the rows."""

    _mark = "?"

    @abstractmethod
    def _rows(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]: ...

    def _run(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return self._rows(sql.format(p=self._mark), params)

    def version_shape(self, source_id: int, number: int | None = None) -> VersionShape | None:
        """A version's id, number, passage count and page count (the latest version by
        default); None if there is no such version. Reads no text."""
        which = "v.id = s.latest_version" if number is None else "v.number = {p}"
        rows = self._run(
            "SELECT v.id, v.number, v.pages, (SELECT max(ordinal) FROM passage "
            "WHERE version_id = v.id) FROM source s JOIN version v ON v.source_id = s.id "
            f"AND {which} WHERE s.id = {{p}}",
            (source_id,) if number is None else (number, source_id))
        if not rows:
            return None
        version_id, found, pages, total = rows[0]
        return VersionShape(int(version_id), int(found), int(total or 0),
                            len(json.loads(pages)) if pages else None)

    def passage_rows(self, version_id: int, first: int, count: int, *,
                     headings: bool = False) -> list[PassageRow]:
        """Up to ``count`` passages of a version from number ``first`` on, in order
        (only the headings with ``headings``)."""
        only = "AND heading IS NOT NULL " if headings else ""
        rows = self._run(
            'SELECT ordinal, start, "end", page, page_label, heading FROM passage '
            f"WHERE version_id = {{p}} AND ordinal >= {{p}} {only}"
            "ORDER BY ordinal LIMIT {p}", (version_id, first, count))
        return [PassageRow(*row) for row in rows]

    def page_passages(self, version_id: int, first_page: int,
                      last_page: int) -> tuple[int, int] | None:
        """The first and last passage numbers on pages ``first_page``..``last_page``;
        None when those pages hold no passage."""
        rows = self._run(
            "SELECT min(ordinal), max(ordinal) FROM passage WHERE version_id = {p} "
            "AND page >= {p} AND page <= {p}", (version_id, first_page, last_page))
        first, last = rows[0] if rows else (None, None)
        return None if first is None else (int(first), int(last))

    def text_spans(self, version_id: int, spans: Sequence[tuple[int, int]]) -> list[str]:
        """``text[start:end]`` of a version's stored text for each ``(start, end)``, read
        from the chunks that hold them (each chunk once), never from the whole text."""
        return spans_from_chunks(self._rows, self._mark, version_id, spans)


def spans_from_chunks(rows: Callable[[str, Sequence[Any]], list[tuple[Any, ...]]], mark: str,
                      version_id: int, spans: Sequence[tuple[int, int]]) -> list[str]:
    """``text[start:end]`` of a version's stored text for each ``(start, end)`` (cut at
    the text's end), read with ``rows(sql, params)`` (``mark``: the backend's parameter
    mark) from the chunks that hold them, each chunk once."""
    needed = sorted({n for start, end in spans if end > start
                     for n in range(start // CHUNK, (end - 1) // CHUNK + 1)})
    if not needed:
        return ["" for _ in spans]
    marks = ", ".join([mark] * len(needed))
    chunks = {int(n): zlib.decompress(bytes(body)).decode("utf-8") for n, body in rows(
        f"SELECT n, body FROM text_chunk WHERE version_id = {mark} AND n IN ({marks})",
        (version_id, *needed))}
    return [_cut(chunks, start, end) for start, end in spans]


def _cut(chunks: dict[int, str], start: int, end: int) -> str:
    if end <= start:
        return ""
    first, last = start // CHUNK, (end - 1) // CHUNK
    text = "".join(chunks.get(n, "") for n in range(first, last + 1))
    return text[start - first * CHUNK : end - first * CHUNK]
