"""The registration writes of the PostgreSQL store: sources, versions, passages, quotes.

:class:`PostgresRegistration` is a mixin of :class:`fetchledger.store.postgres.PostgresStore`
(its connections, errors and transactions). Registrations are written by one
server-side function (:mod:`fetchledger.store.pg_functions`): one statement, in a
transaction of its own (autocommit: one round trip, nothing read in between, the lock
timeout set by the function), prepared once per connection and run straight through
libpq with parameters made here (``_write_one``). Registrations that must be written in
several rounds (one names a source another one of them creates) are one transaction
of one statement a round, through psycopg (``_write_round``).

Ids stay dense 1..N and are never renumbered: a new source's id is written only once
the counter gave it, by the end of that statement; a rolled-back statement spent
none. Writers wait for each other only from there to their commit, which does not
wait for the disk: the flush sent with the statement does (``flushed``), and the
answer comes after it.
"""

from __future__ import annotations

import json
import secrets
import struct
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg

from ..models import SearchHit
from .pg_bulk import passages_terms
from .protocol import (
    AttemptRow,
    QuoteRow,
    Registration,
    StoredVersion,
    source_from_row,
    utc_now,
)

__all__ = ["PostgresRegistration"]

T = TypeVar("T")
Connection = psycopg.Connection[tuple[Any, ...]]

_SPAN = 1 << 20  # keys of one round's new sources: -(base + 1) ... -(base + _SPAN - 1)
_REGISTER = ("SELECT * FROM fetchledger_register(%s::text, %s::bigint, %s::text, %s::jsonb, "
             "%s::text[], %s::bytea[], %s::bytea[], %s::jsonb)")
# the same, prepared and run straight through libpq: its parameters made here, arrays
# in PostgreSQL's binary format, the rest as text
_STATEMENT = b"fetchledger_register"
_STATEMENT_SQL = (b"SELECT * FROM fetchledger_register($1::text, $2::bigint, $3::text, "
                  b"$4::jsonb, $5::text[], $6::bytea[], $7::bytea[], $8::jsonb)")
_FORMATS = (0, 0, 0, 0, 1, 1, 1, 0)
_TEXT, _BYTEA = 25, 17  # the element types' oids


def _array(oid: int, items: Sequence[bytes]) -> bytes:
    """A one-dimensional array of ``items`` (each already its element's binary form) in
    PostgreSQL's binary format."""
    if not items:
        return struct.pack("!iii", 0, 0, oid)
    return b"".join([struct.pack("!iiiii", 1, 0, oid, len(items), 1),
                     *(struct.pack("!i", len(item)) + item for item in items)])


def _round_key() -> int:
    """The base of a round's keys for its new sources until they are numbered: numbers
    no source has, distinct between writers (a collision, once in 2**42, is a unique
    violation, and the round runs again)."""
    return secrets.randbelow(1 << 42) * _SPAN


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode()


def _row(raw: tuple[bytes | None, ...]) -> tuple[Any, ...]:
    """A row ``fetchledger_register`` answered, from its text form: ordinal, version,
    new source, new version, then the source (``store.protocol.SOURCE_COLUMNS``)."""
    ordinal, version, new_source, new_version, source_id, *texts = raw
    versions, number = texts[5], texts[6]
    assert ordinal and version and source_id and versions and number  # never NULL
    values: list[Any] = [_text(v) for v in texts]
    values[5], values[6] = int(versions), int(number)
    return (int(ordinal), int(version), new_source == b"t", new_version == b"t",
            int(source_id), *values)


_JSON = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(x, ensure_ascii=False)
_JSON_SORTED = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode


def _described(registration: Registration) -> dict[str, Any]:
    """One registration as ``fetchledger_register`` reads it (all but the text, raw
    bytes and chunks), with each passage's index terms."""
    p = registration.version
    text = p.text
    spans = [(s.start, s.end) for s in p.passages]
    return {
        "kind": p.kind, "locator": p.locator, "display": p.display,
        "names": sorted({p.locator, *p.aliases}), "title": p.title, "site": p.site,
        "author": p.author, "published": p.date, "at": p.retrieved_at,
        "text_sha256": p.text_sha256, "raw_sha256": p.raw_sha256,
        "extractor": p.extractor, "extractor_version": p.extractor_version,
        "meta": _JSON_SORTED(p.meta) if p.meta else "{}",
        "pages": json.dumps(p.pages) if p.pages else None,
        "raw_size": p.raw_size, "raw_stored": p.raw_stored,
        "retrieved": registration.retrieved, "chunks": len(p.chunks),
        "quotes": [[q.start, q.end, q.page, q.page_label, q.text]
                   for q in registration.quotes],
        "hits": [[h.query or "", h.engine or "", h.rank, h.title, h.snippet]
                 for h in registration.searches],
        "passages": [[s.start, s.end, s.page, s.label, terms,
                      text[s.start : s.end] if heading else None]
                     for s, heading, terms in zip(p.passages, p.headings,
                                                  passages_terms(text, spans), strict=True)],
    }


def _rounds(registrations: Sequence[Registration]) -> list[list[int]]:
    """The registrations' indexes in rounds, one statement each: a new round begins
    where a registration shares a name with one before it in the round (that one's
    source must exist for this one to find it)."""
    rounds: list[list[int]] = []
    seen: set[str] = set()
    for n, registration in enumerate(registrations):
        names = {registration.version.locator, *registration.version.aliases}
        if not rounds or not seen.isdisjoint(names):
            rounds.append([])
            seen = set()
        rounds[-1].append(n)
        seen |= names
    return rounds


def _quote_columns(quotes: Sequence[QuoteRow]) -> dict[str, list[Any]]:
    return {"qs": [q.start for q in quotes], "qe": [q.end for q in quotes],
            "qp": [q.page for q in quotes], "ql": [q.page_label for q in quotes],
            "qt": [q.text for q in quotes]}


def _answers(rows: list[tuple[Any, ...]]) -> list[StoredVersion]:
    """The StoredVersions, with their Sources, of the rows ``fetchledger_register``
    answered (each row's ordinal first), in the order of its registrations."""
    return [_stored(row) for row in sorted(rows, key=lambda row: int(row[0]))]


def _stored(row: tuple[Any, ...]) -> StoredVersion:
    """A StoredVersion, with its Source, from a row ``fetchledger_register`` answered."""
    version_id, new_source, new_version = row[1:4]
    source = source_from_row(row[4:])
    return StoredVersion(source.id, int(version_id), source.version, bool(new_source),
                         bool(new_version), source)


class PostgresRegistration:
    """The registration writes of a PostgreSQL ledger (mixed into ``PostgresStore``)."""

    shown: str  # the ledger's URL without its password

    lock_timeout: str  # PostgreSQL's lock_timeout for a write, e.g. "60000ms"

    if TYPE_CHECKING:  # what PostgresStore provides
        def _write(self, work: Callable[[Connection], T], *, tries: int = ...,
                   pipelined: bool = ..., retried: tuple[type[Exception], ...] = ...) -> T: ...

        def _statement(self, work: Callable[[Connection], T], *, tries: int = ...,
                       retried: tuple[type[Exception], ...] = ...) -> T: ...

        def _exec_prepared(self, conn: Connection, name: bytes, sql: bytes,
                           params: Sequence[bytes], formats: Sequence[int], *,
                           flushed: bool = ...) -> list[tuple[bytes | None, ...]]: ...

        def _flush(self) -> None: ...

    def register(
        self, registrations: Sequence[Registration], attempts: Sequence[AttemptRow] = ()
    ) -> list[StoredVersion]:
        """Register retrievals and record failed attempts in ONE transaction, all of
        them or none; ids are assigned inside it, in the order given.

        New sources are numbered last, just before the commit (see the module
        docstring). A unique violation (another writer registered one of the names
        meanwhile) rolled it all back: it is run again, and then finds that source."""
        # CPU work before the statement: its transaction holds locks.
        described = [_JSON(_described(r)) for r in registrations]
        failed = _JSON([[a.kind, a.locator, a.status, a.message] for a in attempts]
                       ) if attempts else "[]"
        rounds = _rounds(registrations) or [[]]
        retried = (psycopg.errors.UniqueViolation,)
        if len(rounds) == 1:  # one statement, its own transaction
            answers = _answers(self._statement(lambda db: self._write_one(
                db, registrations, described, utc_now(), failed), retried=retried))
        else:
            def work(db: Connection) -> list[psycopg.Cursor[Any]]:
                now = utc_now()
                return [self._write_round(db, [registrations[i] for i in batch],
                                          [described[i] for i in batch], now,
                                          failed if n == len(rounds) - 1 else "[]",
                                          self.lock_timeout)
                        for n, batch in enumerate(rounds)]

            done = self._write(work, pipelined=True, retried=retried)
            # sent with the COMMIT, read once it is done
            answers = [answer for cursor in done for answer in _answers(cursor.fetchall())]
            self._flush()  # committed without waiting for the disk: wait for it here
        return answers

    def _write_one(self, db: Connection, registrations: Sequence[Registration],
                   described: Sequence[str], now: str, failed: str) -> list[tuple[Any, ...]]:
        """``_write_round`` for a call of one round, its statement run straight through
        libpq (see ``_exec_prepared``); the rows it answered."""
        key = _round_key()
        versions = [r.version for r in registrations]
        params = [self.lock_timeout.encode(), str(key).encode(), now.encode(),
                  ("[" + ",".join(described) + "]").encode(),
                  _array(_TEXT, [v.text.encode() for v in versions]),
                  _array(_BYTEA, [v.raw_compressed for v in versions]),
                  _array(_BYTEA, [chunk for v in versions for chunk in v.chunks]),
                  failed.encode()]
        return [_row(raw) for raw in self._exec_prepared(db, _STATEMENT, _STATEMENT_SQL,
                                                         params, _FORMATS, flushed=True)]

    @staticmethod
    def _write_round(db: Connection, registrations: Sequence[Registration],
                     described: Sequence[str], now: str, failed: str,
                     lock_timeout: str) -> psycopg.Cursor[Any]:
        """Send one round of registrations (``described``: each one's JSON) and the
        failed attempts (JSON) to ``fetchledger_register``, the statement that numbers
        its new sources last."""
        key = _round_key()
        versions = [r.version for r in registrations]
        return db.execute(_REGISTER, (
            lock_timeout, key, now, "[" + ",".join(described) + "]",
            [v.text for v in versions], [v.raw_compressed for v in versions],
            [chunk for v in versions for chunk in v.chunks], failed),
            prepare=True, binary=True)

    @staticmethod
    def _insert_quotes(db: Connection, source_id: int, version_id: int,
                       quotes: Sequence[QuoteRow]) -> None:
        if not quotes:
            return
        db.execute(
            'INSERT INTO quote (source_id, version_id, start, "end", page, page_label, '
            "text, first_at) SELECT %(source)s, %(version)s, qs, qe, qp, ql, qt, %(now)s "
            "FROM unnest(%(qs)s::int[], %(qe)s::int[], %(qp)s::int[], %(ql)s::text[], "
            "%(qt)s::text[]) AS x(qs, qe, qp, ql, qt) "
            'ON CONFLICT (version_id, start, "end") DO NOTHING',
            {"source": source_id, "version": version_id, "now": utc_now(),
             **_quote_columns(quotes)})

    @staticmethod
    def _insert_searches(db: Connection, hits: Sequence[tuple[int, SearchHit]]) -> None:
        if not hits:
            return
        now = utc_now()
        with db.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO search_hit (source_id, query, engine, rank, title, snippet, at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (source_id, query, engine, rank) DO NOTHING",
                [(source_id, h.query or "", h.engine or "", h.rank, h.title, h.snippet, now)
                 for source_id, h in hits])
