"""The storage protocol every ledger backend implements, and the rows it speaks.

A store owns its transactions: each write method is one transaction, all or
nothing, and ids are assigned inside it (dense 1..N). Only
:class:`fetchledger.Ledger` calls the write methods. Search is split in two:
the store finds *candidate* passages with its own index and counts how many
passages hold each word; one shared scorer
(:func:`fetchledger.text.passages.rank_candidates`) ranks them, so every
backend ranks the same way.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Protocol

from ..document import StoredRaw
from ..models import Attempt, Quote, SearchHit, Source
from ..records import quick
from ..text.passages import Passage

__all__ = [
    "COPY_COLUMNS",
    "SOURCE_COLUMNS",
    "VERSION_DETAIL_COLUMNS",
    "AttemptRow",
    "Candidates",
    "ClaimRound",
    "CopyBatch",
    "PassageHit",
    "PassageRow",
    "PreparedVersion",
    "QuoteRow",
    "Registration",
    "Store",
    "StoredVersion",
    "VersionShape",
    "VersionText",
    "quoted_columns",
    "source_from_row",
    "utc_now",
    "version_details_from_rows",
]


_SHOWN_SECOND: list[tuple[int, str]] = [(-1, "")]  # the last second utc_now() wrote out


def utc_now() -> str:
    """The current time as ISO 8601 UTC with seconds: ``2026-11-30T10:59:37Z``.

    Written out once a second (``strftime`` costs more than the rest of a registration's
    bookkeeping); the second is the clock's, exactly (nanoseconds, floored as
    ``datetime.now`` floors them)."""
    second = time.time_ns() // 1_000_000_000
    held = _SHOWN_SECOND[0]
    if held[0] != second:
        held = _SHOWN_SECOND[0] = (second, datetime.fromtimestamp(second, timezone.utc)
                                   .strftime("%Y-%m-%dT%H:%M:%SZ"))
    return held[1]


@quick
@dataclass(frozen=True)
class PreparedVersion:
    """Everything one registration writes, computed before the transaction opens."""

    kind: str
    locator: str
    display: str
    aliases: tuple[str, ...]
    title: str | None
    site: str | None
    author: str | None
    date: str | None
    retrieved_at: str
    text: str
    text_sha256: str
    raw_sha256: str
    raw_compressed: bytes
    raw_size: int
    raw_stored: int
    extractor: str
    extractor_version: str
    meta: dict[str, Any]
    pages: tuple[tuple[int, int, int, str | None], ...]
    passages: tuple[Passage, ...]
    headings: tuple[bool, ...]  # one per passage: is it a heading (a reading's landmark)
    chunks: tuple[bytes, ...]  # the text, compressed by chunks (store.windows)


@quick
@dataclass(frozen=True)
class QuoteRow:
    """A quote to record: ``text`` is ``stored_text[start:end]`` of the version."""

    start: int
    end: int
    page: int | None
    page_label: str | None
    text: str


@quick
@dataclass(frozen=True)
class Registration:
    """One retrieval to register: its version and the quotes handed out with it.

    ``retrieved`` is false for a version made again from stored bytes
    (``reextract``): it records no attempt, and the source's last retrieval time
    does not move."""

    version: PreparedVersion
    quotes: tuple[QuoteRow, ...] = ()
    retrieved: bool = True
    searches: tuple[SearchHit, ...] = ()  # recorded with the source (ingest)


@dataclass(frozen=True)
class AttemptRow:
    """A failed retrieval to record (it gets no id)."""

    kind: str
    locator: str
    status: str
    message: str


@quick
@dataclass(frozen=True)
class StoredVersion:
    """What a registration produced: the source id, its version, and whether each is new."""

    source_id: int
    version_id: int
    version_number: int
    new_source: bool
    new_version: bool
    # the source as of this version, when the store knows it without reading it back
    source: Source | None = None


@dataclass(frozen=True)
class VersionText:
    """One version's stored text, with the store's key for it."""

    version_id: int
    number: int
    text: str


@dataclass(frozen=True)
class PassageHit:
    """A candidate passage of a source's latest version, with stored text around it."""

    source_id: int
    version_id: int
    version_number: int
    start: int
    end: int
    page: int | None
    page_label: str | None
    context: str  # stored text from ``context_start`` (a little before ``start``)
    context_start: int

    def local(self) -> Passage:
        """The passage with offsets into ``context``."""
        return Passage(self.start - self.context_start, self.end - self.context_start,
                       self.page, self.page_label)


@dataclass(frozen=True)
class VersionShape:
    """What a reading needs to know of a version before it reads any text."""

    version_id: int
    number: int
    passages: int  # how many
    pages: int | None  # how many, for a paged version


@dataclass(frozen=True)
class PassageRow:
    """One stored passage, numbered within its version."""

    number: int
    start: int
    end: int
    page: int | None
    page_label: str | None
    heading: str | None  # the passage's words when it is a heading (kept with its row)


@dataclass(frozen=True)
class Candidates:
    """What a store's search found: candidate passages (best first by the store's own
    index: a pre-selection, not the ranking) and the collection statistics the shared
    scorer needs: how many passages are indexed and how many hold each search word."""

    hits: tuple[PassageHit, ...]
    passages: int
    holding: Mapping[str, int]


@dataclass(frozen=True)
class ClaimRound:
    """What one claim round gave a batch (:meth:`Store.claim`): the inputs (canonical
    locators) now its own, those another batch finished since ``since`` (with ``ok``
    or the failure's status, and its message), those another live batch holds, and
    the batches that hold them (``holders``). ``since`` is the server's clock at the
    batch's first round."""

    granted: tuple[str, ...]
    finished: tuple[tuple[str, str, str], ...]
    held: tuple[str, ...]
    since: datetime
    holders: tuple[str, ...] = ()


# What ``fetchledger copy`` moves, table by table in this order, columns as named
# here (the same on every backend). Search indexes are rebuilt by the destination.
COPY_COLUMNS: dict[str, tuple[str, ...]] = {
    "identity_key": ("id", "key"),  # replaces the destination's own: identities stay equal
    "source": ("id", "kind", "locator", "display", "title", "site", "author", "published",
               "first_retrieved", "last_retrieved", "latest_version"),
    "alias": ("locator", "source_id"),
    "version": ("id", "source_id", "number", "text_sha256", "raw_sha256", "retrieved_at",
                "extractor", "extractor_version", "meta", "pages", "text", "raw", "raw_size",
                "raw_stored"),
    "passage": ("id", "version_id", "start", "end", "page", "page_label", "ordinal",
                "heading"),
    "text_chunk": ("version_id", "n", "body"),
    "quote": ("id", "source_id", "version_id", "start", "end", "page", "page_label", "text",
              "first_at"),
    "attempt": ("id", "kind", "locator", "at", "status", "message", "source_id"),
    "search_hit": ("id", "source_id", "query", "engine", "rank", "title", "snippet", "at"),
}

CopyBatch = tuple[str, list[tuple[Any, ...]]]  # a table name and some of its rows


# The columns a Source is read from (``s`` a source, ``v`` the version shown), and
# those of a version's details: the same SQL on every backend.
SOURCE_COLUMNS = (
    "s.id, s.kind, s.display, s.title, v.retrieved_at, v.text_sha256, "
    "(SELECT count(*) FROM version WHERE source_id = s.id), v.number, "
    "s.first_retrieved, s.last_retrieved, s.site, s.author, s.published, v.meta"
)
VERSION_DETAIL_COLUMNS = ("number, retrieved_at, text_sha256, raw_sha256, extractor, "
                          "extractor_version, meta, length(text), raw_size, raw_stored")
_DETAIL_KEYS = ("version", "retrieved_at", "sha256", "raw_sha256", "extractor",
                "extractor_version", "meta", "characters", "raw_size", "raw_stored")


def source_from_row(row: Sequence[Any]) -> Source:
    """A Source from a row of :data:`SOURCE_COLUMNS`."""
    return Source(
        id=row[0], kind=row[1], locator=row[2], title=row[3], retrieved_at=row[4],
        sha256=row[5], versions=row[6], version=row[7], first_retrieved=row[8],
        last_retrieved=row[9], site=row[10], author=row[11], date=row[12],
        meta={} if row[13] == "{}" else json.loads(row[13]),  # (most versions have none)
    )


def version_details_from_rows(rows: Iterable[Sequence[Any]]) -> list[dict[str, Any]]:
    """Version details from rows of :data:`VERSION_DETAIL_COLUMNS`."""
    details = [dict(zip(_DETAIL_KEYS, row, strict=True)) for row in rows]
    for item in details:
        item["meta"] = json.loads(item["meta"])
    return details


def quoted_columns(table: str) -> str:
    """The copy columns of ``table`` for SQL (``end`` is a keyword)."""
    return ", ".join(f'"{c}"' for c in COPY_COLUMNS[table])


class Store(Protocol):
    """A ledger backend. Writes are one transaction each; reads see committed data."""

    def close(self) -> None: ...

    def identity_key(self) -> bytes:
        """The ledger's own random key (32 bytes, made by its first migration and never
        changed; ``copy`` carries it): redacted query and argv values enter identities as
        HMACs under it (:func:`fetchledger.identity.secrets.keyed_mark`)."""
        ...

    # --- writes (only Ledger calls these) ---

    def register(
        self, registrations: Sequence[Registration], attempts: Sequence[AttemptRow] = ()
    ) -> list[StoredVersion]:
        """Register retrievals and record failed attempts in ONE transaction, all of
        them or none; ids are assigned inside it, in the order given. Each registration
        finds or creates its source (one identity, one id), adds a version when the
        content changed, indexes its passages, records its quotes and an ``ok`` attempt."""
        ...

    def record_quotes(self, source_id: int, version_id: int, quotes: Sequence[QuoteRow]) -> None:
        """Record quotes handed out by a search or confirmed by ``quote``."""
        ...

    def record_searches(self, hits: Sequence[tuple[int, SearchHit]]) -> None:
        """Record search hits of sources already registered (``(source id, hit)``); a hit
        recorded before (same source, query, engine and rank) is kept as it was."""
        ...

    def record_unchanged(self, source_id: int, attempt: AttemptRow, at: str) -> None:
        """A retrieval that found the source unchanged (HTTP 304 Not Modified): its last
        retrieval time becomes ``at`` and an ``ok`` attempt is recorded; no version."""
        ...

    def reset(self) -> None:
        """Delete every source, version, quote and attempt: ids start again at 1."""
        ...

    def claim(self, holder: str, want: Sequence[str], finished: Sequence[tuple[str, str, str]],
              *, lease: float, since: datetime | None,
              gone: Sequence[str] = ()) -> ClaimRound | None:
        """One claim round of batch ``holder`` (:mod:`fetchledger.batch.claims`), in one
        transaction: record the inputs it finished ``(locator, status, message)``,
        renew its leases by ``lease`` seconds, free the unfinished claims of the
        batches ``gone`` (known dead), and claim what is free of ``want``.
        None on a ledger that one machine writes (SQLite): nothing to claim there."""
        ...

    def import_rows(self, batches: Iterable[CopyBatch]) -> None:
        """Fill an EMPTY ledger with the rows of another (``fetchledger copy``), in one
        transaction, ids unchanged, and build its search index; InvalidArgument (nothing
        written) when it holds any source or attempt."""
        ...

    # --- reads ---

    def source(self, source_id: int, version_number: int | None = None) -> Source | None:
        """A source as of one version (the latest by default); None if unknown."""
        ...

    def sources(self) -> list[Source]: ...

    def source_id_for(self, locators: Sequence[str]) -> int | None:
        """The id of the source any of these locators names, if one does."""
        ...

    def version(self, source_id: int, number: int | None = None) -> VersionText | None:
        """One version of a source (the latest by default)."""
        ...

    def versions(self, source_id: int) -> list[VersionText]:
        """Every version of a source, newest first."""
        ...

    def version_details(self, source_id: int) -> list[dict[str, Any]]:
        """Everything but the text and raw bytes of each version, oldest first."""
        ...

    def version_pages(
        self, source_id: int, version_number: int
    ) -> list[tuple[int, int, int, str | None]]:
        """``(start, end, number, label)`` of each page of a paged version (else empty)."""
        ...

    def aliases(self, source_id: int) -> list[str]: ...

    def searches(self, source_id: int) -> list[SearchHit]:
        """The search hits that found a source, oldest first."""
        ...

    def quote_count(self, source_id: int) -> int: ...

    def raw_bytes(self, source_id: int, version_number: int) -> bytes:
        """The stored raw bytes of one version (possibly capped; see ``raw_stored``)."""
        ...

    def stored_raw(self, source_id: int, number: int | None = None) -> StoredRaw | None:
        """One version's raw bytes with the facts to extract them again (the latest
        version by default); None if there is no such version."""
        ...

    def passages(self, version_id: int) -> list[Passage]: ...

    def version_shape(self, source_id: int, number: int | None = None) -> VersionShape | None:
        """A version's id, number, passage and page counts, reading no text (the latest
        version by default); None if there is no such version."""
        ...

    def passage_rows(self, version_id: int, first: int, count: int, *,
                     headings: bool = False) -> list[PassageRow]:
        """Up to ``count`` numbered passages of a version from number ``first`` on (only
        its headings with ``headings``): one indexed range query."""
        ...

    def page_passages(self, version_id: int, first_page: int,
                      last_page: int) -> tuple[int, int] | None:
        """The first and last passage numbers on those pages; None if they hold none."""
        ...

    def text_spans(self, version_id: int, spans: Sequence[tuple[int, int]]) -> list[str]:
        """``text[start:end]`` of a version's stored text for each span, without reading
        all of it."""
        ...

    def search(self, words: Sequence[str], limit: int, context: int = 40) -> Candidates:
        """Up to ``limit`` passages of the sources' latest versions holding any of
        ``words``, and how many passages hold each word."""
        ...

    def attempts(self, *, failed_only: bool = False) -> list[Attempt]: ...

    def recorded_quotes(self, source_id: int | None = None) -> list[Quote]:
        """Every quote handed out or confirmed (of one source), by source, version, start."""
        ...

    def counts(self) -> dict[str, int]:
        """Row counts of the main tables (for tests, stats and benchmarks)."""
        ...

    def export_rows(self, batch: int = 500) -> Iterator[CopyBatch]:
        """Every row of the ledger (:data:`COPY_COLUMNS`), in table order and by id, from
        one snapshot."""
        ...

    def integrity_check(self) -> str:
        """The backend's own consistency check: ``"ok"`` when sound."""
        ...
