"""Reading a stored source in order, window by window (``show N --passages``,
``read_source``): consecutive passages, each a citable snippet line.

A window never loads or splits the whole text: the passages come from one
indexed range query on their numbers, their words from the text's chunks
(:mod:`fetchledger.store.windows`). It holds whole passages up to ``limit``
characters of output and never splits one; a passage longer than a snippet
is cut with ``…`` as snippets are (:func:`~fetchledger.text.passages.cut_quote`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .adapters.files import parse_page_range
from .config import MAX_ID
from .errors import InvalidArgument
from .models import HEADING_MARK, Reading, ReadLine, Source
from .store.protocol import PassageRow, Store, VersionShape
from .text.passages import MAX_QUOTE, Passage, cut_quote

__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "Window", "parse_passage_range", "read_window"]

DEFAULT_LIMIT = 4000  # characters of output per window, as MCP's fetch reads 5,000
MAX_LIMIT = 100_000  # one call never prints more (an explicit range, whole pages)
_CONTEXT = 40  # characters before a passage, to tell whether it starts a sentence
_SHORTEST = 8  # the shortest line a passage can make: [1] "x"


@dataclass(frozen=True)
class Window:
    """What to read: passages ``start`` to ``last`` (None: to the end) of ``version``
    (None: the latest), on ``pages`` (a range such as ``12-14``) when given, at most
    ``limit`` characters (None: 4,000, or 100,000 for an explicit range or pages);
    only the headings with ``outline``."""

    start: int = 1
    last: int | None = None
    limit: int | None = None
    pages: str | None = None
    version: int | None = None
    outline: bool = False

    def checked_limit(self) -> int:
        if self.limit is None:
            return MAX_LIMIT if self.last is not None or self.pages else DEFAULT_LIMIT
        if not 1 <= self.limit <= MAX_LIMIT:
            raise InvalidArgument(f"the limit must be 1 to {MAX_LIMIT:,} characters, "
                                  f"not {self.limit}")
        return self.limit


def parse_passage_range(spec: str) -> tuple[int, int | None]:
    """``"41"``, ``"41-60"``, ``"41-"`` or ``"-60"`` as (first, last or None)."""
    match = re.fullmatch(r"\s*([0-9]*)\s*(-?)\s*([0-9]*)\s*", spec)
    if not match or not (match.group(1) or match.group(3)):
        raise InvalidArgument(f"bad passage range {spec!r}", hint="use N, A-B, A- or -B")
    first = int(match.group(1) or 1)
    last = (int(match.group(3)) if match.group(3) else None) if match.group(2) else first
    if first < 1 or (last is not None and last < first):
        raise InvalidArgument(f"bad passage range {spec!r}: passages start at 1 and A <= B")
    return first, last


def read_window(store: Store, source: Source, window: Window) -> Reading:
    """The lines of one window of ``source`` (as of the window's version)."""
    limit = window.checked_limit()
    if not 1 <= window.start <= MAX_ID or not window.start <= (window.last or window.start) \
            <= MAX_ID:
        raise InvalidArgument(f"bad passage range {window.start}-{window.last or ''}: "
                              "passages start at 1 and A <= B")
    shape = store.version_shape(source.id, window.version)
    if shape is None:
        raise InvalidArgument(f"source [{source.id}] has no version {window.version}")
    first, stop, pages = _scope(store, source.id, shape, window)
    if window.start > max(shape.passages, 1) and not window.pages:
        raise InvalidArgument(f"passage {window.start} is past the end: source "
                              f"[{source.id}] has {shape.passages} passages")
    if first > stop:
        return Reading(source, first, _after(stop, shape), shape.passages, (),
                       window.outline, pages)
    wanted = limit // _SHORTEST + 2
    rows = store.passage_rows(shape.version_id, first, wanted, headings=window.outline)
    inside = _likely_fit([r for r in rows if r.number <= stop], source.id, limit)
    lines = _fit(_lines(store, source, shape, inside), limit)
    if not window.outline:
        after = lines[-1].number if lines else first - 1
        return Reading(source, first, _after(after, shape), shape.passages, tuple(lines),
                       False, pages)
    # the next heading not shown, where it is known; else there may be more after
    # the last one fetched, or there are none
    following: int | None = None
    if len(lines) < len(rows):
        following = rows[len(lines)].number
    elif len(rows) == wanted:
        following = _after(rows[-1].number, shape)
    return Reading(source, first, following, shape.passages, tuple(lines), True, pages)


def _after(number: int, shape: VersionShape) -> int | None:
    return number + 1 if number < shape.passages else None


def _scope(store: Store, source_id: int, shape: VersionShape, window: Window
           ) -> tuple[int, int, tuple[int, int] | None]:
    """The first and last passage numbers the window may show, and its pages."""
    stop = min(window.last or shape.passages, shape.passages)
    if not window.pages:
        return window.start, stop, None
    if shape.pages is None:
        raise InvalidArgument(f"source [{source_id}] has no pages: pages apply to paged "
                              "sources (PDF) only", hint="read it by passages instead")
    wanted = parse_page_range(window.pages)
    for bound in (wanted.first, wanted.last):  # (a bound past the end was clipped)
        if bound is not None and bound > shape.pages:
            raise InvalidArgument(f"page {bound} is past the end: source [{source_id}] "
                                  f"has {shape.pages} pages")
    last_page = wanted.last or shape.pages
    span = store.page_passages(shape.version_id, wanted.first, last_page)
    pages = (wanted.first, last_page)
    if span is None:  # pages without text: nothing to show, go on after them
        following = store.page_passages(shape.version_id, last_page + 1, shape.pages)
        start = following[0] if following else shape.passages + 1
        return start, start - 1, pages
    return max(window.start, span[0]), min(stop, span[1]), pages


def _lines(store: Store, source: Source, shape: VersionShape,
           rows: list[PassageRow]) -> list[ReadLine]:
    """Each row as a snippet line. A heading's words are kept with its row (a whole
    line: nothing around it decides its marks), so an outline reads no text; other
    passages are read with a little context before (to tell a sentence's start) and
    one character after (its end)."""
    spans = [(r.start, r.end) if r.heading is not None else
             (max(r.start - _CONTEXT, 0), r.end + 1) for r in rows]
    wanted = [span for span, r in zip(spans, rows, strict=True) if r.heading is None]
    texts = iter(store.text_spans(shape.version_id, wanted))
    lines = []
    for row, (begin, _) in zip(rows, spans, strict=True):
        text = row.heading if row.heading is not None else next(texts)
        cut = cut_quote(text, Passage(row.start - begin, row.end - begin), (), MAX_QUOTE)
        lines.append(ReadLine(
            source_id=source.id, version=shape.number, start=cut.start + begin,
            end=cut.end + begin, page=row.page, page_label=row.page_label,
            text=text[cut.start : cut.end], number=row.number,
            heading=row.heading is not None,
            line=HEADING_MARK + cut.line if row.heading is not None else cut.line))
    return lines


def _likely_fit(rows: list[PassageRow], source_id: int, limit: int) -> list[PassageRow]:
    """The leading rows whose lines will about fill ``limit`` (judged from offsets, a
    little over: :func:`_fit` decides), so a window reads no more text than it shows."""
    used = 0
    for count, row in enumerate(rows):
        page = len(f" (p. {row.page})") if row.page is not None else 0
        used += len(str(source_id)) + 6 + min(row.end - row.start, MAX_QUOTE) + page
        if used > limit + limit // 10 + 64:
            return rows[: count + 1]
    return rows


def _fit(lines: list[ReadLine], limit: int) -> list[ReadLine]:
    """The leading lines whose output fits in ``limit`` characters (at least one)."""
    used = 0
    for count, line in enumerate(lines):
        used += len(line.text_line()) + 1
        if used > limit and count:
            return lines[:count]
    return lines
