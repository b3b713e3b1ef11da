"""The PostgreSQL ledger store: one ledger shared by many processes on many machines.

It implements :class:`fetchledger.store.protocol.Store` on psycopg 3 (no ORM),
with the semantics of the SQLite store:

- **Dense ids.** Registrations are written by one server-side statement
  (:mod:`fetchledger.store.pg_register`, :mod:`fetchledger.store.pg_functions`), a
  transaction of its own; it takes the ``counter`` row last, and only then writes the
  rows that name a new source's id (nothing is renumbered). The unique names of
  ``alias`` decide who registers a canonical source first: the second writer's
  statement is rolled back and run again, and then reads the first one's id. A
  rollback or a conflict consumes no id.
- **Durable before shown.** That statement commits without waiting for the disk
  (the counter is handed on at once); its writer waits for a flush sent with it
  before it answers, and every read waits for what it saw to be flushed
  (``_durable``), so a crash of the server takes back no id anyone was shown.
- **One transaction per write**, at READ COMMITTED. A deadlock or
  serialization failure (the server rolled the whole transaction back) is
  retried; a connection lost mid-write is a LedgerUnavailable (exit 4): the
  server rolled back, or committed all of it, never part. A connection the server
  closed while it was idle is found before a write is sent, and made again.
- **Search** (:mod:`.search`): each indexed passage holds its stemmed words
  (:func:`fetchledger.text.passages.tokenize`, the scorer's own) as a
  ``tsvector`` with a GIN index; candidates are ordered by the IDF of the
  words they hold, then by length, and ranked by the shared scorer.
- Connections are made on demand and made again after one is lost; a read
  that loses its connection is tried once more on a new one.
- Batch claims and ``copy`` (export and import of whole ledgers) live in
  :mod:`fetchledger.store.pg_bulk`, a mixin of this class.
"""

from __future__ import annotations

import functools
import json
import logging
import select
import threading
import time
import weakref
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext, suppress
from typing import Any, TypeVar, overload

import psycopg
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict

from ..document import StoredRaw
from ..errors import (
    LedgerCorrupt,
    LedgerError,
    LedgerLocked,
    LedgerReadOnly,
    LedgerUnavailable,
    NoLedger,
)
from ..identity.secrets import REDACTED, shown_database_url
from ..models import Attempt, Quote, SearchHit, Source
from ..text.passages import Passage
from .migrations import POSTGRES_MIGRATIONS, refuse_unknown
from .pg_bulk import Connection, PostgresBulk
from .pg_functions import FLUSH
from .pg_register import PostgresRegistration
from .protocol import (
    SOURCE_COLUMNS,
    VERSION_DETAIL_COLUMNS,
    AttemptRow,
    Candidates,
    QuoteRow,
    VersionText,
    source_from_row,
    utc_now,
    version_details_from_rows,
)
from .search import postgres_search
from .windows import WindowReads

__all__ = ["PostgresStore"]

T = TypeVar("T")

_MIGRATION_LOCK = 0x6665_7463_686C  # pg_advisory_xact_lock key: "fetchl"
_WRITE_TRIES = 5
_FLUSH = b"fetchledger_flush"  # FLUSH, prepared
# a statement and its flush in one pipeline (``_exec_prepared``): the statement's
# transaction, then FLUSH's
_BEGIN = (b"fetchledger_begin", b"BEGIN", list[bytes](), list[int]())
_COMMIT = (b"fetchledger_commit", b"COMMIT", list[bytes](), list[int]())
_FLUSHED = (_FLUSH, FLUSH, list[bytes](), list[int]())
_DONE = (psycopg.pq.ExecStatus.TUPLES_OK, psycopg.pq.ExecStatus.COMMAND_OK)
# whether the WAL is flushed as far as it is written, and how far that is; a standby
# (in recovery: those functions would fail, and abort a transaction) counts as flushed,
# as it is sent only WAL that its primary has flushed
_DURABLE = ("SELECT i IS NULL OR i <= pg_current_wal_flush_lsn(), i::text FROM (SELECT "
            "CASE WHEN pg_is_in_recovery() THEN NULL ELSE pg_current_wal_insert_lsn() END"
            ") AS w(i)")
_DURABLE_WAIT = 2.0  # seconds a reader that may not write waits for the WAL writer
# the server rolled the whole transaction back: safe to run it again
_ROLLED_BACK = (pg_errors.DeadlockDetected, pg_errors.SerializationFailure)


_NO_SUCH_STATEMENT = b"26000"  # SQLSTATE: prepared statement does not exist
_PREPARED_ALREADY = b"42P05"  # SQLSTATE: prepared statement already exists


def _sqlstate(result: psycopg.pq.abc.PGresult) -> bytes | None:
    """The SQLSTATE of an error ``result`` (None for a result that is no error)."""
    return result.error_field(psycopg.pq.DiagnosticField.SQLSTATE)


def _not_redundant(record: logging.LogRecord) -> bool:
    """psycopg warns that it could not close a pipeline when the connection was lost
    inside it; the error that lost it is raised anyway (one line, exit 4)."""
    return not str(record.msg).startswith("error ignored")


logging.getLogger("psycopg").addFilter(_not_redundant)


class _Held:
    """One thread's connection, closed when the thread ends (its ``threading.local``
    goes, and this with it)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.prepared: set[bytes] = set()  # statements prepared on it (exec_prepared)

    def __del__(self) -> None:
        with suppress(Exception):
            self.conn.close()



def _ready(fd: int, events: int, timeout_ms: int | None = None) -> bool:
    """Whether socket ``fd`` is ready for ``events`` within ``timeout_ms`` (None: wait).
    poll, not select: select refuses descriptors numbered past 1024, which a process
    holding many files open gets."""
    poller = select.poll()
    poller.register(fd, events)
    return bool(poller.poll(timeout_ms))

class PostgresStore(PostgresRegistration, PostgresBulk, WindowReads):
    """A ledger in one PostgreSQL database (or schema, by ``options=-csearch_path=``)."""

    def __init__(self, url: str, *, busy_timeout: float = 60.0,
                 read_only: bool = False) -> None:
        self.url = url
        self.shown = shown_database_url(url)
        self.busy_timeout = busy_timeout
        self.lock_timeout = f"{int(busy_timeout * 1000)}ms"  # each write's, set in it
        try:
            password = conninfo_to_dict(url).get("password")
        except UnicodeEncodeError as exc:  # bytes that are not UTF-8 (not quoted: a password?)
            raise LedgerUnavailable("the PostgreSQL URL is not valid UTF-8", path=self.shown,
                                    hint="postgresql://USER@HOST:PORT/DATABASE") from exc
        except psycopg.ProgrammingError as exc:
            reason = str(exc).partition('"')[0].rstrip(": ")  # not the token: a password's
            raise LedgerUnavailable(f"{self.shown} is not a usable PostgreSQL URL: {reason}",
                                    path=self.shown,
                                    hint="postgresql://USER@HOST:PORT/DATABASE") from exc
        self._password = str(password) if password else None
        # One connection per thread (a transaction belongs to one): a batch's writer and
        # its claim rounds each have their own. A thread's ends with it; close() closes
        # every one still open.
        self._local = threading.local()
        self._opened: weakref.WeakSet[_Held] = weakref.WeakSet()
        self._opened_lock = threading.Lock()
        if read_only:  # an existing ledger only: nothing is created or migrated
            self._check_readable()
        else:
            self._migrate()

    def identity_key(self) -> bytes:
        """The ledger's random identity key (created with the ledger, never changed)."""
        row = self._one("SELECT key FROM identity_key WHERE id = 1")
        if row is None:
            raise LedgerCorrupt(f"{self.shown} has lost its identity key", path=self.shown)
        return bytes(row[0])

    def close(self) -> None:
        with self._opened_lock:
            opened = list(self._opened)
            self._opened.clear()
        for held in opened:
            held.conn.close()

    # --- connections, errors, transactions -------------------------------------------

    def _connection(self) -> Connection:
        """This thread's connection: made on first use, made again once lost."""
        held: _Held | None = getattr(self._local, "held", None)
        if held is not None and not held.conn.closed and not held.conn.broken:
            return held.conn
        if held is not None:
            with self._opened_lock:
                self._opened.discard(held)
            held.conn.close()
        options: dict[str, Any] = {"autocommit": True}
        given = conninfo_to_dict(self.url)
        if "connect_timeout" not in given:
            options["connect_timeout"] = 10
        if "application_name" not in given:
            options["application_name"] = "fetchledger"
        with self._errors():
            conn = psycopg.connect(self.url, **options)
        self._local.held = held = _Held(conn)
        with self._opened_lock:
            self._opened.add(held)
        return conn

    def _sendable(self) -> Connection:
        """This thread's connection, made again if the server may have closed it while
        idle (a restart, ``pg_terminate_backend``, an idle timeout), so that a write sent
        on it is known not to be cut off by a goodbye already on its way. An idle
        connection is sent nothing but that goodbye (or a rare notice): one with
        anything to read is replaced, without reading it. Reading it would not do: the
        goodbye (a FATAL message) comes before the socket is closed, and a write sent
        between the two is lost (seen on a loaded machine)."""
        conn = self._connection()
        if _ready(conn.fileno(), select.POLLIN, 0):
            conn.close()
            return self._connection()
        return conn

    def _exec_prepared(self, conn: Connection, name: bytes, sql: bytes,
                       params: Sequence[bytes], formats: Sequence[int], *,
                       flushed: bool = False) -> list[tuple[bytes | None, ...]]:
        """Run the prepared statement ``name`` (``sql``, prepared on ``conn`` at its first
        use) with parameters already in PostgreSQL's formats (``formats``: 0 text, 1
        binary), straight through libpq: the rows, as text, or the error raised as
        psycopg raises it. What psycopg adds per statement (its cursor, prepare
        manager, dumpers and loaders) is a tenth of a registration's client CPU.

        ``flushed``: ``pg_functions.FLUSH`` goes with it, a transaction of its own after
        the statement's, and this returns once it is done: the statement committed
        without waiting for the disk, and its rows are answered only once they are
        durable. Both go as one pipeline with one sync (``BEGIN``, the statement,
        ``COMMIT``, FLUSH): one send, and one answer for the server to send and the
        writer to wake for, instead of one each."""
        held: _Held = self._local.held
        if held.conn is not conn:  # replaced meanwhile: this one was lost
            raise psycopg.OperationalError("the connection was lost")
        statement = (name, sql, list(params), list(formats))
        statements = [_BEGIN, statement, _COMMIT, _FLUSHED] if flushed else [statement]
        results: list[psycopg.pq.abc.PGresult] = []
        pending = statements
        for _ in range(2):
            self._prepare(conn, held, pending)
            answered = self._pipeline(conn, pending) if flushed else [
                self._wait(conn, functools.partial(conn.pgconn.send_query_prepared, name,
                                                   statement[2], param_formats=statement[3]))]
            if conn.pgconn.transaction_status == psycopg.pq.TransactionStatus.INERROR:
                # the statement failed inside its BEGIN: nothing of it stays
                self._wait(conn, functools.partial(conn.pgconn.send_query, b"ROLLBACK"))
            results = results[: len(statements) - len(pending)] + answered
            # The server forgot them: psycopg sends DEALLOCATE ALL after a rollback once
            # it has prepared statements of its own (a pooler may DISCARD ALL). A
            # statement refused so did not run: prepared again, it runs once, and so
            # does every one after it (the flush must follow what it makes durable);
            # one refused inside the transaction rolled all of it back.
            forgotten = [n for n, result in enumerate(results)
                         if _sqlstate(result) == _NO_SUCH_STATEMENT]
            if not forgotten:
                break
            pending = statements[forgotten[0] if forgotten[0] == 3 else 0:]
            held.prepared.clear()
        for done in results:
            if done.status not in _DONE:
                if conn.pgconn.status == psycopg.pq.ConnStatus.BAD:
                    raise psycopg.OperationalError(
                        conn.pgconn.get_error_message() or "the connection was lost")
                raise pg_errors.error_from_result(done)
        first = results[1 if flushed else 0]
        fields = range(first.nfields)
        return [tuple(first.get_value(row, field) for field in fields)
                for row in range(first.ntuples)]

    def _prepare(self, conn: Connection, held: _Held,
                 statements: Sequence[tuple[bytes, bytes, list[bytes], list[int]]]) -> None:
        """Prepare on ``conn`` each of ``statements`` not prepared on it yet."""
        for statement, text, _, _ in statements:
            if statement not in held.prepared:
                result = self._wait(conn, functools.partial(conn.pgconn.send_prepare,
                                                            statement, text))
                # prepared already: the record was cleared, the server still had it
                if (result.status != psycopg.pq.ExecStatus.COMMAND_OK
                        and _sqlstate(result) != _PREPARED_ALREADY):
                    raise pg_errors.error_from_result(result)
                held.prepared.add(statement)

    def _flush(self) -> None:
        """Return once every transaction committed before now is on the server's disk
        (``pg_functions.FLUSH``): the registration committed without waiting for it,
        and no id is handed out before it is durable. Lost here, the call is exit 4
        ("run it again"): its sources are then registered (found again by a new
        call) or, after a crash of the server, not at all."""
        self._statement(lambda db: self._exec_prepared(db, _FLUSH, FLUSH, [], []))

    def _pipeline(self, conn: Connection, statements: Sequence[tuple[
            bytes, bytes, list[bytes], list[int]]]) -> list[psycopg.pq.abc.PGresult]:
        """Send prepared ``statements`` at once, with one sync after them all (one send),
        and wait for it: each one's last result, in order (after an error, the ones
        after it are PIPELINE_ABORTED)."""
        pgconn = conn.pgconn

        def send() -> None:
            pgconn.enter_pipeline_mode()
            for statement, _, params, formats in statements:
                pgconn.send_query_prepared(statement, params, param_formats=formats)
            pgconn.pipeline_sync()

        results = self._wait(conn, send, queries=len(statements))
        pgconn.exit_pipeline_mode()
        return results

    @staticmethod
    @overload
    def _wait(conn: Connection, send: Callable[[], None]) -> psycopg.pq.abc.PGresult: ...

    @staticmethod
    @overload
    def _wait(conn: Connection, send: Callable[[], None],
              queries: int) -> list[psycopg.pq.abc.PGresult]: ...

    @staticmethod
    def _wait(conn: Connection, send: Callable[[], None], queries: int = 0) -> Any:
        """Send one query on ``conn`` (a non-blocking libpq connection) and wait for its
        last result (or, ``queries`` > 0, for a pipeline of that many queries and one
        sync: the last result of each); interrupted (Ctrl-C), the query is cancelled
        and the connection closed, so the server rolls the statement back."""
        pgconn = conn.pgconn
        fd = pgconn.socket
        last = None
        lasts: list[psycopg.pq.abc.PGresult] = []
        synced = False
        try:
            send()
            while pgconn.flush():
                _ready(fd, select.POLLIN | select.POLLOUT)
                pgconn.consume_input()
            while True:
                while pgconn.is_busy():
                    _ready(fd, select.POLLIN)
                    pgconn.consume_input()
                result = pgconn.get_result()
                if result is None:  # the end of a query's results
                    if queries and last is not None:
                        lasts.append(last)
                        last = None
                    elif not queries or pgconn.status == psycopg.pq.ConnStatus.BAD:
                        break
                elif result.status == psycopg.pq.ExecStatus.PIPELINE_SYNC:
                    synced = True
                    break
                else:
                    last = result
        except BaseException:
            if pgconn.status == psycopg.pq.ConnStatus.OK:
                with suppress(Exception):
                    pgconn.get_cancel().cancel()
            conn.close()
            raise
        if (last is None and not queries) or (queries and (
                not synced or len(lasts) != queries)):
            raise psycopg.OperationalError(pgconn.get_error_message()
                                           or "the connection was lost")
        return lasts if queries else last

    def _scrub(self, text: str) -> str:
        return text.replace(self._password, REDACTED) if self._password else text

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Turn psycopg failures into the LedgerError family (exit 4)."""
        try:
            yield
        except psycopg.Error as exc:
            raise self._ledger_error(exc) from exc

    def _ledger_error(self, exc: psycopg.Error) -> LedgerError:
        where = self.shown
        detail = self._scrub(" ".join(str(exc).split()))
        if isinstance(exc, _ROLLED_BACK):
            return LedgerLocked(f"the ledger {where} could not finish a write among other "
                                f"writers ({detail})", path=where,
                                hint="other fetchledger processes are writing; try again")
        if isinstance(exc, pg_errors.LockNotAvailable):
            return LedgerLocked(
                f"the ledger {where} stayed locked by another writer past "
                f"{self.busy_timeout:g} s", path=where,
                hint="another fetchledger process is writing; try again")
        if isinstance(exc, pg_errors.InsufficientPrivilege | pg_errors.ReadOnlySqlTransaction):
            return LedgerReadOnly(f"the ledger {where} cannot be written: {detail}", path=where,
                                  hint="the role in the URL needs to read and write its "
                                       "tables (see README: Sharing one ledger)")
        if isinstance(exc, pg_errors.DiskFull):
            return LedgerReadOnly(f"the disk of the database server of {where} is full",
                                  path=where)
        if isinstance(exc, psycopg.OperationalError):
            return LedgerUnavailable(
                f"the PostgreSQL ledger {where} is unreachable: {detail}", path=where,
                hint="check that the server is up and the URL names it; a write cut off "
                     "here was rolled back or committed whole: run it again")
        return LedgerError(f"ledger error in {where}: {detail}", path=where)

    def _write(self, work: Callable[[Connection], T], *, tries: int = _WRITE_TRIES,
               pipelined: bool = False, retried: tuple[type[Exception], ...] = ()) -> T:
        """``work`` in one transaction; tried again when the server rolled it back whole
        (deadlock, serialization failure, or an error of ``retried``) or when the
        connection was found lost before the transaction began (the server closed an
        idle connection). ``pipelined``: statements whose results are not read go with
        the next one that is read (and the last ones with the COMMIT), one round trip
        for them all."""
        for attempt in range(tries):
            conn = self._connection()
            began = False
            try:
                with (self._errors(), conn.pipeline() if pipelined else nullcontext(),
                      conn.transaction()):
                    # per transaction, so that a pooler (pgbouncer) may share connections
                    conn.execute("SELECT set_config('lock_timeout', %s, true)",
                                 (f"{int(self.busy_timeout * 1000)}ms",)).fetchone()
                    began = True
                    return work(conn)
            except LedgerError as error:
                # the server rolled it all back: a deadlock or a serialization failure,
                # or the connection was dead before the transaction began
                rolled_back = isinstance(error.__cause__, (*_ROLLED_BACK, *retried))
                lost_before = isinstance(error, LedgerUnavailable) and not began
                if not (rolled_back or lost_before) or attempt == tries - 1:
                    raise
        raise AssertionError("unreachable")

    def _statement(self, work: Callable[[Connection], T], *, tries: int = _WRITE_TRIES,
                   retried: tuple[type[Exception], ...] = ()) -> T:
        """``work``: ONE statement that writes, a transaction of its own (the
        connection is in autocommit), so one round trip; tried again as ``_write``
        does when the server rolled it back. A connection lost while the statement
        ran is a LedgerUnavailable: the server rolled it back or committed it, whole."""
        for attempt in range(tries):
            conn = self._sendable()
            try:
                with self._errors():
                    return work(conn)
            except LedgerError as error:
                if (not isinstance(error.__cause__, (*_ROLLED_BACK, *retried))
                        or attempt == tries - 1):
                    raise
        raise AssertionError("unreachable")

    def _read(self, work: Callable[[Connection], T], *, snapshot: bool = False) -> T:
        """``work`` (in one snapshot, for several statements); tried once more on a new
        connection if the connection was lost (a read changes nothing)."""
        for attempt in range(2):
            conn = self._connection()
            try:
                with self._errors():
                    if not snapshot:
                        found = work(conn)
                    else:
                        with conn.transaction():
                            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, "
                                         "READ ONLY")
                            found = work(conn)
                    self._durable(conn)
                    return found
            except LedgerUnavailable:
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")

    def _durable(self, conn: Connection, *, may_write: bool = True) -> None:
        """Return once everything a read on ``conn`` has seen is on the server's disk.

        A registration commits without waiting for the disk, and its writer answers
        only after the flush that follows (``_exec_prepared``); a reader that saw it
        between the two must not show an id that a crash of the server could take
        back and give to another source. Mostly the WAL is flushed already (one round
        trip); else the reader flushes it (FLUSH), or, where it may not write (inside
        a read-only transaction, ``may_write`` False, or with a read-only role), waits
        for the server to (its WAL writer flushes within a fraction of a second; past
        ``_DURABLE_WAIT`` the read goes on)."""
        flushed, target = conn.execute(_DURABLE).fetchone() or (True, "")
        if flushed:
            return
        if may_write:
            try:
                self._exec_prepared(conn, _FLUSH, FLUSH, [], [])
                return
            except (pg_errors.ReadOnlySqlTransaction, pg_errors.InsufficientPrivilege):
                pass
        deadline = time.monotonic() + _DURABLE_WAIT
        while time.monotonic() < deadline:
            row = conn.execute("SELECT pg_current_wal_flush_lsn() >= %s::pg_lsn",
                               (target,)).fetchone()
            if row and row[0]:
                return
            time.sleep(0.01)

    def _one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> tuple[Any, ...] | None:
        return self._read(lambda db: db.execute(sql, params).fetchone())

    def _all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        return self._read(lambda db: db.execute(sql, params).fetchall())

    _mark, _rows = "%s", _all  # what WindowReads needs of a backend

    # --- migrations ---------------------------------------------------------------------

    def _migrate(self) -> None:
        known = [name for name, _ in POSTGRES_MIGRATIONS]
        applied = self._read(self._applied_migrations, snapshot=True)
        refuse_unknown(applied, known, self.shown)
        if len(applied) == len(known):
            return
        for name, migration in POSTGRES_MIGRATIONS:
            self._write(functools.partial(self._apply, name=name, migration=migration))

    def _check_readable(self) -> None:
        applied = self._read(self._applied_migrations, snapshot=True)
        if not applied:
            raise NoLedger(f"no ledger at {self.shown}", path=self.shown,
                           hint="a retrieval (fetch, read, run, ...) creates one")
        refuse_unknown(applied, (name for name, _ in POSTGRES_MIGRATIONS), self.shown)

    def _applied_migrations(self, db: Connection) -> list[str]:
        tables = [row[0] for row in db.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema()")]
        if "migration" not in tables:
            if tables:
                raise LedgerCorrupt(
                    f"{self.shown} holds tables but is not a fetchledger ledger "
                    f"({', '.join(sorted(tables)[:5])})", path=self.shown,
                    hint="use an empty database or schema for a ledger")
            return []
        return [row[0] for row in db.execute("SELECT name FROM migration ORDER BY name")]

    @staticmethod
    def _apply(db: Connection, name: str, migration: Callable[[Connection], None]) -> None:
        # One process migrates at a time; the others then find the work done.
        db.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        db.execute("CREATE TABLE IF NOT EXISTS migration "
                   "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        if db.execute("SELECT 1 FROM migration WHERE name = %s", (name,)).fetchone():
            return
        migration(db)
        db.execute("INSERT INTO migration (name, applied_at) VALUES (%s, %s)", (name, utc_now()))

    # --- writes (registration: store/pg_register.py) --------------------------------

    def record_searches(self, hits: Sequence[tuple[int, SearchHit]]) -> None:
        """Record search hits of registered sources (one kept per source, query, engine
        and rank)."""
        if hits:
            self._write(lambda db: self._insert_searches(db, hits))

    def record_quotes(self, source_id: int, version_id: int, quotes: Sequence[QuoteRow]) -> None:
        """Record quotes handed out by a search or confirmed by ``quote``."""
        if quotes:
            self._write(lambda db: self._insert_quotes(db, source_id, version_id, quotes))

    def record_unchanged(self, source_id: int, attempt: AttemptRow, at: str) -> None:
        """A retrieval that found the source unchanged (HTTP 304): last retrieval time
        ``at``, an ``ok`` attempt, no version."""
        def work(db: Connection) -> None:
            db.execute("UPDATE source SET last_retrieved = greatest(last_retrieved, %s) "
                       "WHERE id = %s", (at, source_id))
            db.execute("INSERT INTO attempt (kind, locator, at, status, message, source_id) "
                       "VALUES (%s, %s, %s, 'ok', %s, %s)",
                       (attempt.kind, attempt.locator, at, attempt.message, source_id))

        self._write(work)

    def reset(self) -> None:
        """Delete every source, version, quote and attempt: the ledger starts again at [1]."""
        def work(db: Connection) -> None:
            db.execute("TRUNCATE search_hit, quote, attempt, passage, text_chunk, alias, "
                       "version, source, claim RESTART IDENTITY")
            db.execute("UPDATE counter SET value = 0 WHERE name = 'source'")

        self._write(work)

    # --- reads --------------------------------------------------------------------------

    def source(self, source_id: int, version_number: int | None = None) -> Source | None:
        """A source as of one version (the latest by default); None if unknown."""
        if version_number is None:
            row = self._one(f"SELECT {SOURCE_COLUMNS} FROM source s "
                            "JOIN version v ON v.id = s.latest_version WHERE s.id = %s",
                            (source_id,))
        else:
            row = self._one(f"SELECT {SOURCE_COLUMNS} FROM source s JOIN version v "
                            "ON v.source_id = s.id AND v.number = %s WHERE s.id = %s",
                            (version_number, source_id))
        return source_from_row(row) if row else None

    def sources(self) -> list[Source]:
        return [source_from_row(row) for row in self._all(
            f"SELECT {SOURCE_COLUMNS} FROM source s "
            "JOIN version v ON v.id = s.latest_version ORDER BY s.id")]

    def source_id_for(self, locators: Sequence[str]) -> int | None:
        """The id of the source any of these locators names, if one does."""
        if not locators:
            return None
        row = self._one("SELECT min(source_id) FROM alias WHERE locator = ANY(%s)",
                        (list(locators),))
        return int(row[0]) if row and row[0] is not None else None

    def version(self, source_id: int, number: int | None = None) -> VersionText | None:
        """One version of a source (the latest by default)."""
        if number is None:
            row = self._one("SELECT v.id, v.number, v.text FROM source s "
                            "JOIN version v ON v.id = s.latest_version WHERE s.id = %s",
                            (source_id,))
        else:
            row = self._one("SELECT id, number, text FROM version "
                            "WHERE source_id = %s AND number = %s", (source_id, number))
        return VersionText(*row) if row else None

    def versions(self, source_id: int) -> list[VersionText]:
        """Every version of a source, newest first."""
        return [VersionText(*row) for row in self._all(
            "SELECT id, number, text FROM version WHERE source_id = %s ORDER BY number DESC",
            (source_id,))]

    def version_details(self, source_id: int) -> list[dict[str, Any]]:
        """Everything but the text and raw bytes of each version, oldest first."""
        rows = self._all(
            f"SELECT {VERSION_DETAIL_COLUMNS} FROM version WHERE source_id = %s "
            "ORDER BY number", (source_id,))
        return version_details_from_rows(rows)

    def version_pages(
        self, source_id: int, version_number: int
    ) -> list[tuple[int, int, int, str | None]]:
        """``(start, end, number, label)`` of each page of a paged version (else empty)."""
        row = self._one("SELECT pages FROM version WHERE source_id = %s AND number = %s",
                        (source_id, version_number))
        if not row or not row[0]:
            return []
        return [(int(a), int(b), int(n), label) for a, b, n, label in json.loads(row[0])]

    def aliases(self, source_id: int) -> list[str]:
        return [row[0] for row in self._all(
            "SELECT locator FROM alias WHERE source_id = %s ORDER BY locator COLLATE \"C\"",
            (source_id,))]

    def searches(self, source_id: int) -> list[SearchHit]:
        """The search hits that found a source, oldest first."""
        return [SearchHit(q or None, e or None, r, t, s, at) for q, e, r, t, s, at in self._all(
            "SELECT query, engine, rank, title, snippet, at FROM search_hit "
            "WHERE source_id = %s ORDER BY id", (source_id,))]

    def quote_count(self, source_id: int) -> int:
        # through the source's versions: no index of quotes by source (0015)
        row = self._one("SELECT count(*) FROM version v JOIN quote q ON q.version_id = v.id "
                        "WHERE v.source_id = %s", (source_id,))
        return int(row[0]) if row else 0

    def raw_bytes(self, source_id: int, version_number: int) -> bytes:
        """The stored raw bytes of one version (possibly capped; see ``raw_stored``)."""
        row = self._one("SELECT raw FROM version WHERE source_id = %s AND number = %s",
                        (source_id, version_number))
        return zlib.decompress(row[0]) if row and row[0] else b""

    def stored_raw(self, source_id: int, number: int | None = None) -> StoredRaw | None:
        """One version's raw bytes and the facts to extract them again (latest by default)."""
        which = "v.id = s.latest_version" if number is None else "v.number = %s"
        row = self._one(
            "SELECT v.number, s.kind, s.locator, s.display, v.raw, v.raw_size, v.retrieved_at, "
            "v.text_sha256, v.extractor, v.extractor_version, v.meta "
            f"FROM source s JOIN version v ON v.source_id = s.id AND {which} WHERE s.id = %s",
            (source_id,) if number is None else (number, source_id))
        if row is None:
            return None
        number, kind, locator, display, raw, size, at, sha, extractor, version, meta = row
        return StoredRaw(source_id, number, kind, locator, display,
                         zlib.decompress(raw) if raw else b"", size, at, sha, extractor,
                         version, json.loads(meta))

    def passages(self, version_id: int) -> list[Passage]:
        return [Passage(*row) for row in self._all(
            'SELECT start, "end", page, page_label FROM passage WHERE version_id = %s '
            "ORDER BY start", (version_id,))]

    def search(self, words: Sequence[str], limit: int, context: int = 40) -> Candidates:
        """Up to ``limit`` passages holding any of ``words`` (the rule of every backend:
        :mod:`.search`), and how many passages hold each word, from one snapshot."""
        return self._read(lambda db: postgres_search(
            lambda sql, params: db.execute(sql, params).fetchall(), words, limit, context),
            snapshot=True)

    def attempts(self, *, failed_only: bool = False) -> list[Attempt]:
        sql = "SELECT locator, at, status, message, kind, source_id FROM attempt"
        if failed_only:
            sql += " WHERE status != 'ok'"
        return [Attempt(*row) for row in self._all(sql + " ORDER BY id")]

    def recorded_quotes(self, source_id: int | None = None) -> list[Quote]:
        """Every quote handed out or confirmed (of one source), by source, version, start."""
        sql = ('SELECT q.source_id, v.number, q.start, q."end", q.page, q.page_label, q.text, '
               "q.first_at FROM quote q JOIN version v ON v.id = q.version_id")
        params: tuple[int, ...] = ()
        if source_id is not None:
            sql += " WHERE v.source_id = %s"  # through its versions (0015)
            params = (source_id,)
        return [Quote(*row) for row in self._all(
            sql + ' ORDER BY q.source_id, v.number, q.start, q."end"', params)]

    def counts(self) -> dict[str, int]:
        """Row counts of the main tables (for tests, stats and benchmarks)."""
        tables = ("source", "version", "passage", "quote", "attempt", "alias", "search_hit")

        row = self._read(lambda db: db.execute(
            "SELECT " + ", ".join(f"(SELECT count(*) FROM {t})" for t in tables)).fetchone())
        assert row is not None
        return dict(zip(tables, map(int, row), strict=True))

    def integrity_check(self) -> str:
        """``"ok"``, or what is wrong: ids not dense 1..N or not matching the counter,
        a source whose latest version is not its own, superseded passages indexed."""
        checks = (
            ("source ids are not 1..N with the counter at N",
             "SELECT (SELECT value FROM counter WHERE name = 'source') = count(*) "
             "AND coalesce(max(id), 0) = count(*) AND coalesce(min(id), 1) = 1 FROM source"),
            ("a source's latest version is missing or not its own",
             "SELECT NOT EXISTS (SELECT 1 FROM source s LEFT JOIN version v "
             "ON v.id = s.latest_version WHERE v.source_id IS DISTINCT FROM s.id)"),
            ("passages of superseded versions are indexed",
             "SELECT NOT EXISTS (SELECT 1 FROM passage p JOIN version v ON v.id = p.version_id "
             "JOIN source s ON s.id = v.source_id "
             "WHERE p.terms IS NOT NULL AND s.latest_version <> v.id)"),
            # no foreign keys keep these since 0021 (each was a query per row written)
            ("a passage, text chunk or quote belongs to no version, or a quote to "
             "another source than its version's",
             "SELECT NOT EXISTS (SELECT 1 FROM passage p LEFT JOIN version v "
             "ON v.id = p.version_id WHERE v.id IS NULL) "
             "AND NOT EXISTS (SELECT 1 FROM text_chunk c LEFT JOIN version v "
             "ON v.id = c.version_id WHERE v.id IS NULL) "
             "AND NOT EXISTS (SELECT 1 FROM quote q LEFT JOIN version v "
             "ON v.id = q.version_id WHERE v.source_id IS DISTINCT FROM q.source_id)"),
            # nor these since 0025
            ("a version, name or attempt belongs to no source",
             "SELECT NOT EXISTS (SELECT 1 FROM version v LEFT JOIN source s "
             "ON s.id = v.source_id WHERE s.id IS NULL) "
             "AND NOT EXISTS (SELECT 1 FROM alias a LEFT JOIN source s "
             "ON s.id = a.source_id WHERE s.id IS NULL) "
             "AND NOT EXISTS (SELECT 1 FROM attempt a LEFT JOIN source s "
             "ON s.id = a.source_id WHERE a.source_id IS NOT NULL AND s.id IS NULL)"),
        )
        problems = [what for what, sql in checks if not (self._one(sql) or (False,))[0]]
        return "; ".join(problems) or "ok"
