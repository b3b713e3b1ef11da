"""The bulk and shared-work side of the PostgreSQL store: batch claims and ``copy``.

:class:`PostgresBulk` is a mixin of :class:`fetchledger.store.postgres.PostgresStore`
(its connections, errors and transactions): the claim rounds of batches that share
one input list (:mod:`fetchledger.batch.claims`), and the rows a ``copy`` reads from
(:meth:`~PostgresBulk.export_rows`) or writes into (:meth:`~PostgresBulk.import_rows`)
a ledger, with the search index of the copied passages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg

from ..errors import InvalidArgument
from ..text.passages import tokenize
from .protocol import COPY_COLUMNS, ClaimRound, CopyBatch, quoted_columns
from .windows import COPY_ORDER

__all__ = ["Connection", "PostgresBulk", "passage_terms"]

T = TypeVar("T")
Connection = psycopg.Connection[tuple[Any, ...]]

_CLAIM_LOCK = 0x6665_7463_686C + 1  # pg_advisory_xact_lock key: the migrations' + 1
_MAX_TERM = 500  # characters; PostgreSQL refuses lexemes over 2 KB


def passage_terms(text: str) -> list[str]:
    """The distinct index terms of one passage."""
    return sorted({t for t in tokenize(text) if len(t) <= _MAX_TERM})


class PostgresBulk:
    """Claims and copies of a PostgreSQL ledger (mixed into ``PostgresStore``)."""

    shown: str  # the ledger's URL without its password

    if TYPE_CHECKING:  # what PostgresStore provides
        def _write(self, work: Callable[[Connection], T], *, tries: int = ...,
                   pipelined: bool = ...) -> T: ...

        def _connection(self) -> Connection: ...

        def _errors(self) -> AbstractContextManager[None]: ...

    # --- batch claims -------------------------------------------------------------------

    def claim(self, holder: str, want: Sequence[str], finished: Sequence[tuple[str, str, str]],
              *, lease: float, since: datetime | None) -> ClaimRound:
        """One claim round of batch ``holder``, in one transaction: record the inputs it
        finished, renew the leases it holds, and claim what is free of ``want``: never
        claimed, or its lease lapsed (its batch died), or finished before ``since``.
        ``FOR UPDATE SKIP LOCKED``: what another batch is claiming this instant is
        left to it (and asked for again next round)."""
        def work(db: Connection) -> ClaimRound:
            # Claim rounds of all batches one at a time (each takes milliseconds): their
            # inserts, renewals and take-overs of lapsed claims cannot deadlock.
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_CLAIM_LOCK,))
            clock = db.execute("SELECT now()").fetchone()
            assert clock is not None
            start = since or clock[0]
            with db.cursor() as cursor:
                cursor.executemany(
                    "UPDATE claim SET holder = NULL, expires = NULL, finished_at = now(), "
                    "status = %s, message = %s WHERE locator = %s AND holder = %s",
                    [(status, message, locator, holder)
                     for locator, status, message in finished])
            db.execute("UPDATE claim SET expires = now() + make_interval(secs => %s) "
                       "WHERE holder = %s", (lease, holder))
            wanted = list(dict.fromkeys(want))
            db.execute("INSERT INTO claim (locator) SELECT unnest(%s::text[]) "
                       "ON CONFLICT (locator) DO NOTHING", (sorted(wanted),))
            mine = {row[0] for row in db.execute(
                "UPDATE claim c SET holder = %(holder)s, finished_at = NULL, status = NULL, "
                "message = NULL, expires = now() + make_interval(secs => %(lease)s) "
                "FROM (SELECT locator FROM claim WHERE locator = ANY(%(wanted)s) AND ("
                "        (finished_at IS NULL AND (holder IS NULL OR expires < now())) "
                "        OR finished_at < %(since)s) "
                "      FOR UPDATE SKIP LOCKED) AS free "
                "WHERE c.locator = free.locator RETURNING c.locator",
                {"holder": holder, "lease": lease, "wanted": wanted, "since": start})}
            others = [w for w in wanted if w not in mine]
            done = db.execute("SELECT locator, status, message FROM claim "
                              "WHERE locator = ANY(%s) AND finished_at >= %s",
                              (others, start)).fetchall()
            settled = {row[0] for row in done}
            return ClaimRound(tuple(w for w in wanted if w in mine),
                              tuple((str(a), str(b), str(c)) for a, b, c in done),
                              tuple(w for w in others if w not in settled), start)

        return self._write(work)

    def import_rows(self, batches: Iterable[CopyBatch]) -> None:
        """Fill this EMPTY ledger with another's rows in one transaction, ids unchanged,
        then index the passages of each source's latest version."""
        def work(db: Connection) -> None:
            held = db.execute("SELECT (SELECT count(*) FROM source), "
                              "(SELECT count(*) FROM attempt)").fetchone()
            assert held is not None
            if any(held):
                raise InvalidArgument(
                    f"the ledger {self.shown} is not empty ({held[0]} sources, {held[1]} "
                    "attempts): copy goes into an empty ledger only",
                    hint="name a new file, or an empty PostgreSQL database")
            with db.cursor() as cursor:
                for table, found in batches:
                    if table == "identity_key":  # the source's key: identities stay equal
                        cursor.execute("DELETE FROM identity_key")
                    marks = ", ".join(["%s"] * len(COPY_COLUMNS[table]))
                    cursor.executemany(f"INSERT INTO {table} ({quoted_columns(table)}) "
                                       f"VALUES ({marks})", found)
            # the internal ids and the id counter go on after the copied ones
            for table in ("version", "passage", "quote", "attempt", "search_hit"):
                db.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                           f"coalesce(max(id), 0) + 1, false) FROM {table}")
            db.execute("UPDATE counter SET value = (SELECT coalesce(max(id), 0) FROM source) "
                       "WHERE name = 'source'")
            self._index_latest(db)

        self._write(work, tries=1)  # the rows can be read once only

    @staticmethod
    def _index_latest(db: Connection) -> None:
        with db.cursor(name="fetchledger_index") as reading, db.cursor() as writing:
            reading.execute(
                'SELECT p.id, substr(v.text, p.start + 1, p."end" - p.start) FROM passage p '
                "JOIN source s ON s.latest_version = p.version_id "
                "JOIN version v ON v.id = p.version_id ORDER BY p.id")
            while found := reading.fetchmany(2000):
                writing.executemany(
                    "UPDATE passage SET terms = array_to_tsvector(%s::text[]) WHERE id = %s",
                    [(passage_terms(text), passage_id) for passage_id, text in found])

    def export_rows(self, batch: int = 500) -> Iterator[CopyBatch]:
        """Every row of the ledger, table by table and by id, from one snapshot."""
        conn = self._connection()
        with self._errors(), conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            for table in COPY_COLUMNS:
                order = 'locator COLLATE "C"' if table == "alias" else COPY_ORDER.get(table, "id")
                with conn.cursor(name=f"fetchledger_copy_{table}") as cursor:
                    cursor.execute(f"SELECT {quoted_columns(table)} FROM {table} ORDER BY {order}")
                    while found := cursor.fetchmany(batch):
                        yield table, found
