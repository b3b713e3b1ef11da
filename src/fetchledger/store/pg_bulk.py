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
from ..text.passages import span_tokens, tokenize
from .protocol import COPY_COLUMNS, ClaimRound, CopyBatch, quoted_columns
from .windows import COPY_ORDER

__all__ = ["Connection", "PostgresBulk", "passage_terms", "passages_terms"]

T = TypeVar("T")
Connection = psycopg.Connection[tuple[Any, ...]]

_CLAIM_LOCK = 0x6665_7463_686C + 1  # pg_advisory_xact_lock key: the migrations' + 1
_MAX_TERM = 500  # characters; PostgreSQL refuses lexemes over 2 KB
_INDEX_CHARS = 8_000_000  # characters of stored text held at once by the copy's indexing


def passage_terms(text: str) -> list[str]:
    """The distinct index terms of one passage."""
    return sorted({t for t in tokenize(text) if len(t) <= _MAX_TERM})


def passages_terms(text: str, spans: Iterable[tuple[int, int]]) -> list[str]:
    """``" ".join(passage_terms(text[start:end]))`` for each passage span of ``text``,
    the words of them all read at once (:func:`~fetchledger.text.passages.span_tokens`)."""
    return [" ".join(sorted({t for t in tokens if len(t) <= _MAX_TERM}))
            for tokens in span_tokens(text, spans)]


def _by_size(sizes: Sequence[tuple[int, int]], most: int) -> Iterator[list[int]]:
    """The ids of ``(id, size)`` in order, in groups of at most ``most`` in size (or
    of one, when one alone is bigger)."""
    group: list[int] = []
    held = 0
    for key, size in sizes:
        if group and held + size > most:
            yield group
            group, held = [], 0
        group.append(key)
        held += size
    if group:
        yield group


class PostgresBulk:
    """Claims and copies of a PostgreSQL ledger (mixed into ``PostgresStore``)."""

    shown: str  # the ledger's URL without its password

    if TYPE_CHECKING:  # what PostgresStore provides
        def _write(self, work: Callable[[Connection], T], *, tries: int = ...,
                   pipelined: bool = ...) -> T: ...

        def _connection(self) -> Connection: ...

        def _durable(self, conn: Connection, *, may_write: bool = ...) -> None: ...

        def _errors(self) -> AbstractContextManager[None]: ...

    # --- batch claims -------------------------------------------------------------------

    def claim(self, holder: str, want: Sequence[str], finished: Sequence[tuple[str, str, str]],
              *, lease: float, since: datetime | None,
              gone: Sequence[str] = ()) -> ClaimRound:
        """One claim round of batch ``holder``, in one transaction: record the inputs it
        finished, renew the leases it holds, free the unfinished claims of the batches
        ``gone``, and claim what is free of ``want``: never claimed, or its lease
        lapsed (its batch died), or finished before ``since``.
        ``FOR UPDATE SKIP LOCKED``: what another batch is claiming this instant is
        left to it (and asked for again next round). Its statements go to the server
        together (a pipeline): one round trip, whatever the number of inputs."""
        wanted = sorted(dict.fromkeys(want))

        def work(db: Connection) -> ClaimRound:
            # Claim rounds of all batches one at a time (each takes milliseconds): their
            # inserts, renewals and take-overs of lapsed claims cannot deadlock.
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_CLAIM_LOCK,))
            if finished:
                db.execute(
                    "UPDATE claim c SET holder = NULL, expires = NULL, finished_at = now(), "
                    "status = f.status, message = f.message "
                    "FROM unnest(%s::text[], %s::text[], %s::text[]) "
                    "  AS f(locator, status, message) "
                    "WHERE c.locator = f.locator AND c.holder = %s",
                    ([f[0] for f in finished], [f[1] for f in finished],
                     [f[2] for f in finished], holder))
            db.execute("UPDATE claim SET expires = now() + make_interval(secs => %s) "
                       "WHERE holder = %s", (lease, holder))
            if gone:
                db.execute("UPDATE claim SET holder = NULL, expires = NULL "
                           "WHERE holder = ANY(%s::text[]) AND finished_at IS NULL",
                           (list(gone),))
            if wanted:
                db.execute("INSERT INTO claim (locator) SELECT unnest(%s::text[]) "
                           "ON CONFLICT (locator) DO NOTHING", (wanted,))
            # What this round takes (free: never claimed, lapsed, or finished before the
            # batch began) and what others finished since it began: two sets of the same
            # snapshot that never meet; the rest of ``wanted`` another live batch holds.
            found = db.execute(
                "WITH start AS (SELECT coalesce(%(since)s::timestamptz, now()) AS at), "
                "free AS (SELECT c.locator FROM claim c, start "
                "         WHERE c.locator = ANY(%(wanted)s::text[]) AND ("
                "           (c.finished_at IS NULL AND (c.holder IS NULL OR c.expires < now())) "
                "           OR c.finished_at < start.at) "
                "         FOR UPDATE OF c SKIP LOCKED), "
                "mine AS (UPDATE claim c SET holder = %(holder)s, finished_at = NULL, "
                "         status = NULL, message = NULL, "
                "         expires = now() + make_interval(secs => %(lease)s) "
                "         FROM free WHERE c.locator = free.locator RETURNING c.locator) "
                "SELECT 'mine', locator, NULL, NULL, NULL::timestamptz FROM mine "
                "UNION ALL SELECT 'done', c.locator, c.status, c.message, NULL FROM claim c, start "
                "  WHERE c.locator = ANY(%(wanted)s::text[]) AND c.finished_at >= start.at "
                "UNION ALL SELECT DISTINCT 'holder', c.holder, NULL, NULL, NULL::timestamptz "
                "  FROM claim c WHERE c.locator = ANY(%(wanted)s::text[]) "
                "  AND c.finished_at IS NULL AND c.holder <> %(holder)s AND c.expires >= now() "
                "UNION ALL SELECT 'start', NULL, NULL, NULL, at FROM start",
                {"holder": holder, "lease": lease, "wanted": wanted, "since": since}).fetchall()
            start = next(at for tag, _, _, _, at in found if tag == "start")
            mine = {locator for tag, locator, _, _, _ in found if tag == "mine"}
            done = [(str(locator), str(status), str(message))
                    for tag, locator, status, message, _ in found if tag == "done"]
            settled = mine | {locator for locator, _, _ in done}
            holders = tuple(str(name) for tag, name, _, _, _ in found if tag == "holder")
            return ClaimRound(tuple(w for w in wanted if w in mine), tuple(done),
                              tuple(w for w in wanted if w not in settled), start, holders)

        return self._write(work, pipelined=True)

    def import_rows(self, batches: Iterable[CopyBatch]) -> None:
        """Fill this EMPTY ledger with another's rows in one transaction, ids unchanged,
        the passages of each source's latest version with their search terms."""
        def work(db: Connection) -> None:
            held = db.execute("SELECT (SELECT count(*) FROM source), "
                              "(SELECT count(*) FROM attempt)").fetchone()
            assert held is not None
            if any(held):
                raise InvalidArgument(
                    f"the ledger {self.shown} is not empty ({held[0]} sources, {held[1]} "
                    "attempts): copy goes into an empty ledger only",
                    hint="name a new file, or an empty PostgreSQL database")
            # passages wait in a table of their own until their terms are made: each one
            # is then written once, its terms with it
            db.execute(f"CREATE TEMPORARY TABLE copied_passage ON COMMIT DROP AS "
                       f"SELECT {quoted_columns('passage')} FROM passage WITH NO DATA")
            with db.cursor() as cursor:
                for table, found in batches:
                    if table == "identity_key":  # the source's key: identities stay equal
                        cursor.execute("DELETE FROM identity_key")
                    into = "copied_passage" if table == "passage" else table
                    # COPY, not an INSERT a row: a giant source has millions of passages
                    with cursor.copy(f"COPY {into} ({quoted_columns(table)}) "
                                     "FROM STDIN") as copy:
                        for row in found:
                            copy.write_row(row)
            self._write_passages(db)
            # the internal ids and the id counter go on after the copied ones
            for table in ("version", "passage", "quote", "attempt", "search_hit"):
                db.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                           f"coalesce(max(id), 0) + 1, false) FROM {table}")
            db.execute("UPDATE counter SET value = (SELECT coalesce(max(id), 0) FROM source) "
                       "WHERE name = 'source'")

        self._write(work, tries=1)  # the rows can be read once only

    @staticmethod
    def _write_passages(db: Connection) -> None:
        """Write the copied passages, each once: those of each source's latest version
        with their search terms, the others (older versions are not searched) without.
        Each latest version's text is read once and its passages cut from it here (a
        ``substr`` per passage of a stored text decompresses it from its start each
        time: quadratic in a long text's passages), a few MB of text at a time; the
        terms go to the server in COPYs, and the passages into the ledger by one INSERT."""
        sizes = db.execute("SELECT v.id, length(v.text) FROM source s "
                           "JOIN version v ON v.id = s.latest_version ORDER BY v.id").fetchall()
        db.execute("CREATE TEMPORARY TABLE copied_terms (id BIGINT, terms TEXT) "
                   "ON COMMIT DROP")
        for group in _by_size(sizes, _INDEX_CHARS):
            texts: dict[int, str] = dict(db.execute(
                "SELECT id, text FROM version WHERE id = ANY(%s)", (group,)).fetchall())
            spans = db.execute('SELECT id, version_id, start, "end" FROM copied_passage '
                               "WHERE version_id = ANY(%s) ORDER BY id", (group,)).fetchall()
            with db.cursor() as cursor, cursor.copy(
                    "COPY copied_terms (id, terms) FROM STDIN") as copy:
                for passage_id, version_id, start, end in spans:  # as registration sends them
                    copy.write_row((passage_id,
                                    " ".join(passage_terms(texts[version_id][start:end]))))
            del texts, spans
        # the passage indexes made again once the rows are in: faster than kept up
        # row by row (the ledger is new, and nothing else sees it before the commit)
        indexes = db.execute(
            "SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid) FROM pg_index "
            "WHERE indrelid = 'passage'::regclass AND indexrelid NOT IN "
            "(SELECT conindid FROM pg_constraint)").fetchall()
        for name, _ in indexes:
            db.execute(f"DROP INDEX {name}")
        columns = ", ".join(f'c."{c}"' for c in COPY_COLUMNS["passage"])
        db.execute(f"INSERT INTO passage ({quoted_columns('passage')}, terms) "
                   f"SELECT {columns}, array_to_tsvector(string_to_array(t.terms, ' ')) "
                   "FROM copied_passage c LEFT JOIN copied_terms t ON t.id = c.id ORDER BY c.id")
        for _, definition in indexes:
            db.execute(definition)

    def export_rows(self, batch: int = 500) -> Iterator[CopyBatch]:
        """Every row of the ledger, table by table and by id, from one snapshot."""
        conn = self._connection()
        with self._errors(), conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            self._durable(conn, may_write=False)  # its snapshot: taken here
            for table in COPY_COLUMNS:
                order = 'locator COLLATE "C"' if table == "alias" else COPY_ORDER.get(table, "id")
                with conn.cursor(name=f"fetchledger_copy_{table}") as cursor:
                    cursor.execute(f"SELECT {quoted_columns(table)} FROM {table} ORDER BY {order}")
                    while found := cursor.fetchmany(batch):
                        yield table, found
