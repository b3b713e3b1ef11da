"""Turn a Document into what the store writes, outside any transaction.

Everything CPU-bound about a registration happens here (hashing, passage
splitting, ranking, quote cutting, compression), so batch workers can do it
in other processes and the writer only writes.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from dataclasses import dataclass

from ..document import Document
from ..errors import EmptyContent, InvalidArgument, RetrievalFailed
from ..models import SearchHit
from ..records import quick
from ..text.normalize import LINE_BREAKS, one_line
from ..text.passages import QuoteSpan, select_quotes, split_passages
from . import windows
from .protocol import AttemptRow, PreparedVersion, QuoteRow, Registration, utc_now

__all__ = ["Failed", "Prepared", "prepare"]

# One-for-one, so page offsets computed by the adapter stay valid. NUL becomes
# U+FFFD: SQLite's text functions stop at NUL, which would misplace quotes; so does a
# lone surrogate (from JSON's "\ud800"), which no UTF-8 store can hold.
_STRAY_BREAKS = ({ord(ch): "\n" for ch in LINE_BREAKS} | {0: "\ufffd"}
                 | dict.fromkeys(range(0xD800, 0xE000), "\ufffd"))
# (what the table replaces, looked for first)
_STRAY = re.compile("[" + "".join(re.escape(chr(c)) for c in _STRAY_BREAKS) + "]")


@quick
@dataclass(frozen=True)
class Prepared:
    """A version ready to write, and the quotes to hand out for it."""

    version: PreparedVersion
    quotes: tuple[QuoteSpan, ...]
    warnings: tuple[str, ...] = ()
    retrieved: bool = True  # false: made again from stored bytes (see Registration)
    searches: tuple[SearchHit, ...] = ()  # the search hits that led to it (ingest)

    def registration(self) -> Registration:
        text = self.version.text
        return Registration(self.version, tuple(
            QuoteRow(q.start, q.end, q.page, q.label, text[q.start : q.end])
            for q in self.quotes), self.retrieved, self.searches)


@dataclass(frozen=True)
class Failed:
    """A retrieval that failed: it is recorded as an attempt and gets no id."""

    kind: str
    locator: str  # the input as it may be shown (secrets redacted)
    error: RetrievalFailed

    def attempt_row(self) -> AttemptRow:
        error = self.error
        return AttemptRow(self.kind, error.locator or self.locator, error.status, error.message)


def prepare(
    document: Document,
    *,
    query: str | None = None,
    k: int = 3,
    max_raw_stored: int = 25_000_000,
    retrieved_at: str | None = None,
    page_range: tuple[int, int | None] | None = None,
) -> Prepared:
    """Hash, split, rank and compress a document; raises EmptyContent if it has no text.

    ``page_range`` (first, last or None) limits the quotes handed out to those
    pages; the whole document is still stored, so a source has one identity.
    """
    # Adapters normalize line breaks; this guarantees it (DESIGN §2.2). (Looked for
    # first: translating every character costs ten times the search.)
    text = document.text
    if _STRAY.search(text):
        text = text.translate(_STRAY_BREAKS)
    if not text.strip():
        raise EmptyContent("no readable text", locator=document.display)
    passages = split_passages(text, document.pages)
    candidates = passages
    if page_range is not None:
        first, last = page_range
        if not document.pages:
            raise InvalidArgument("--pages applies to paged sources (PDF) only")
        for bound in (first, last):  # (a bound past the end was clipped silently)
            if bound is not None and bound > len(document.pages):
                raise InvalidArgument(f"page {bound} is past the end: the document has "
                                      f"{len(document.pages)} pages")
        candidates = [p for p in passages if p.page is not None and p.page >= first
                      and (last is None or p.page <= last)]
    quotes = select_quotes(text, candidates, query, k, title=document.title)
    raw = document.raw
    stored = raw[:max_raw_stored]
    encoded = text.encode("utf-8")
    raw_compressed = zlib.compress(stored, 6)
    # A text of one chunk stored as its own raw bytes (plain text, command output)
    # compresses to the same chunk: made once.
    same = len(text) <= windows.CHUNK and stored == encoded
    headings, chunks = windows.reading_columns(document.kind, text, passages,
                                       chunks=(raw_compressed,) if same else None)
    version = PreparedVersion(
        kind=document.kind,
        locator=document.locator,
        display=document.display,
        aliases=tuple(a for a in dict.fromkeys(document.aliases) if a != document.locator),
        title=one_line(document.title) if document.title else None,
        site=one_line(document.site) if document.site else None,
        author=one_line(document.author) if document.author else None,
        date=document.date,
        retrieved_at=retrieved_at or utc_now(),
        text=text,
        text_sha256=hashlib.sha256(encoded).hexdigest(),
        raw_sha256=hashlib.sha256(raw).hexdigest(),
        raw_compressed=raw_compressed,
        raw_size=len(raw),
        raw_stored=len(stored),
        extractor=document.extractor,
        extractor_version=document.extractor_version,
        meta=dict(document.meta),
        pages=tuple((p.start, p.end, p.number, p.label) for p in document.pages),
        passages=tuple(passages),
        headings=headings,
        chunks=chunks,
    )
    return Prepared(version, tuple(quotes), tuple(document.warnings))
