"""The SQLite ledger store: the embedded default backend, one file.

Ids are assigned inside one ``BEGIN IMMEDIATE`` transaction, so many
processes can register into one ledger file at once and ids stay unique and
dense (1..N). The database runs in WAL mode with ``synchronous=NORMAL``: a
killed process leaves the file as before or after its last transaction.
It implements :class:`fetchledger.store.protocol.Store`.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import stat
import tempfile
import urllib.parse
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from ..document import StoredRaw
from ..errors import (
    InvalidArgument,
    LedgerCorrupt,
    LedgerError,
    LedgerLocked,
    LedgerReadOnly,
    NoLedger,
)
from ..inputs import shown_name
from ..models import Attempt, Quote, SearchHit, Source
from ..text.passages import Passage
from .migrations import MIGRATIONS, refuse_unknown
from .protocol import (
    COPY_COLUMNS,
    SOURCE_COLUMNS,
    VERSION_DETAIL_COLUMNS,
    AttemptRow,
    Candidates,
    ClaimRound,
    CopyBatch,
    PreparedVersion,
    QuoteRow,
    Registration,
    StoredVersion,
    VersionText,
    quoted_columns,
    source_from_row,
    utc_now,
    version_details_from_rows,
)
from .search import sqlite_search
from .windows import CHUNK_INSERT, COPY_ORDER, WindowReads, chunk_rows

__all__ = ["SQLiteStore"]


def _usable_place(path: Path) -> None:
    """LedgerError (exit 4) for a ledger path that cannot hold an SQLite file: a folder, a
    device, FIFO or socket (SQLite would open it, or wait on it), or a name the file
    system refuses (too long, a loop of links). Nothing there yet is for the caller."""
    shown = shown_name(str(path))
    try:
        status = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise LedgerError(f"the ledger path is too long for the file system: {shown}",
                              path=str(path), hint="each part of a path holds at most "
                                                   "255 bytes") from exc
        if exc.errno == errno.ELOOP:
            raise LedgerError(f"the ledger {shown} is a loop of symbolic links",
                              path=str(path)) from exc
        raise LedgerError(f"cannot use the ledger {shown}: {exc.strerror or exc}",
                          path=str(path)) from exc
    if stat.S_ISDIR(status.st_mode):
        raise LedgerError(f"{shown} is a folder, not a ledger file", path=str(path),
                          hint=f"name a file in it, e.g. {shown}/ledger.db")
    if not stat.S_ISREG(status.st_mode):
        raise LedgerError(f"{shown} is not a regular file (a device, pipe or socket), so not "
                          "a ledger", path=str(path), hint="name a ledger file")


class SQLiteStore(WindowReads):
    """One ledger file. Open it, use it, close it (or use it as a context manager).

    ``read_only``: open an existing ledger for reading only — never create it or its
    folder, never migrate, never take the write lock; a read-only mounted ledger
    works too. NoLedger when there is none at ``path``.
    """

    def __init__(self, path: Path, *, busy_timeout: float = 60.0,
                 read_only: bool = False) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        self._copy_folder: Path | None = None  # a read-only ledger's private copy
        _usable_place(path)
        if read_only:
            self.db = self._open_read_only()
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError) as exc:  # a file where a folder goes
            raise LedgerError(
                f"cannot create the ledger folder {shown_name(str(path.parent))}: a part of "
                "the path is a file, not a folder", path=str(path)) from exc
        except OSError as exc:
            raise LedgerReadOnly(
                f"cannot create the ledger folder {path.parent}: {exc.strerror}", path=str(path)
            ) from exc
        with self._errors():
            self.db = sqlite3.connect(
                str(path), timeout=busy_timeout, isolation_level=None,
                check_same_thread=False,
            )
        try:
            with self._errors():
                self.db.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
                self.db.execute("PRAGMA journal_mode = WAL")
                self.db.execute("PRAGMA synchronous = NORMAL")
                self.db.execute("PRAGMA foreign_keys = ON")
                self._migrate()
        except BaseException:
            self.db.close()
            raise

    def _open_read_only(self) -> sqlite3.Connection:
        if not self.path.is_file():
            raise NoLedger(f"no ledger at {self.path}", path=str(self.path),
                           hint="a retrieval (fetch, read, run, ...) creates one; or pass "
                                "--ledger PATH")
        # the name's bytes, quoted: a name need not be UTF-8 (surrogateescape)
        uri = "file:" + urllib.parse.quote(os.fsencode(self.path.absolute()))
        # immutable=1 when the file cannot be read otherwise: a read-only mount, where
        # no one can be writing it, and WAL's shared memory cannot be made. Immutable, it
        # would not read a write-ahead log: one that holds commits is read from a copy.
        for mode in ("?mode=ro", "?mode=ro&immutable=1"):
            if mode.endswith("immutable=1") and _holds_commits(Path(f"{self.path}-wal")):
                uri, mode = self._private_copy(), "?mode=ro"
            with self._errors():
                db = sqlite3.connect(uri + mode, uri=True, isolation_level=None,
                                     check_same_thread=False)
            try:
                with self._errors():
                    db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
                    self._check_readable(db)
                return db
            except LedgerReadOnly:
                db.close()
            except BaseException:
                db.close()
                self.close_copy()
                raise
        self.close_copy()
        raise LedgerReadOnly(f"the ledger {self.path} cannot be read", path=str(self.path))

    def _private_copy(self) -> str:
        """The ledger and its write-ahead log copied to a private folder (removed at
        close), where SQLite can build the log's index and read it: the URI of the copy."""
        try:
            folder = Path(tempfile.mkdtemp(prefix="fetchledger-read-only-"))
            self._copy_folder = folder
            for suffix in ("", "-wal"):
                shutil.copyfile(f"{self.path}{suffix}", folder / f"ledger.db{suffix}")
        except OSError as exc:
            self.close_copy()
            raise LedgerReadOnly(f"the ledger {self.path} cannot be read on this read-only "
                                 f"medium: its write-ahead log could not be copied ({exc})",
                                 path=str(self.path)) from exc
        return "file:" + urllib.parse.quote(str(folder / "ledger.db"))

    def _check_readable(self, db: sqlite3.Connection) -> None:
        exists = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' "
                            "AND name = 'migration'").fetchone()
        if not exists:
            if db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                raise LedgerCorrupt(f"{self.path} is an SQLite file but not a fetchledger "
                                    "ledger", path=str(self.path))
            raise NoLedger(f"no ledger at {self.path} (an empty file)", path=str(self.path))
        refuse_unknown([n for (n,) in db.execute("SELECT name FROM migration")],
                       (name for name, _ in MIGRATIONS), str(self.path))

    def close(self) -> None:
        self.db.close()
        self.close_copy()

    def close_copy(self) -> None:
        if self._copy_folder is not None:
            shutil.rmtree(self._copy_folder, ignore_errors=True)
            self._copy_folder = None

    def _rows(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        with self._errors():
            return self.db.execute(sql, tuple(params)).fetchall()

    def identity_key(self) -> bytes:
        """The ledger's random identity key (created with the ledger, never changed)."""
        with self._errors():
            row = self.db.execute("SELECT key FROM identity_key WHERE id = 1").fetchone()
        if row is None:
            raise LedgerCorrupt(f"{self.path} has lost its identity key", path=str(self.path))
        return bytes(row[0])

    # --- errors and transactions ---------------------------------------------

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Turn sqlite3 failures into the LedgerError family (exit 4)."""
        try:
            yield
        except sqlite3.Error as exc:
            raise self._ledger_error(exc) from exc

    def _ledger_error(self, exc: sqlite3.Error) -> LedgerError:
        text = str(exc).lower()
        where = str(self.path)
        if "locked" in text or "busy" in text:
            return LedgerLocked(
                f"the ledger {where} stayed locked by another writer past "
                f"{self.busy_timeout:g} s", path=where,
                hint="another fetchledger process is writing; try again")
        if "full" in text:
            return LedgerReadOnly(f"the disk holding {where} is full", path=where)
        if "readonly" in text or "unable to open" in text or "read-only" in text:
            return LedgerReadOnly(f"the ledger {where} cannot be written: {exc}", path=where,
                                  hint="check the file's permissions or pass --ledger PATH")
        if "not a database" in text or "malformed" in text or "corrupt" in text:
            return LedgerCorrupt(f"{where} is not a usable ledger: {exc}", path=where)
        return LedgerError(f"ledger error in {where}: {exc}", path=where)

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken with BEGIN IMMEDIATE (the writer lock)."""
        with self._errors():
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
                self.db.execute("COMMIT")
            except BaseException:
                # SQLite may have rolled back already (disk full, I/O error).
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
                raise

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """One consistent snapshot for several reads."""
        with self._errors():
            self.db.execute("BEGIN")
            try:
                yield self.db
            finally:
                self.db.execute("COMMIT")

    def _migrate(self) -> None:
        known = [name for name, _ in MIGRATIONS]
        applied = self._applied_migrations()
        refuse_unknown(applied, known, str(self.path))
        if len(applied) == len(known):
            return
        for name, migration in MIGRATIONS:
            with self._write() as db:
                db.execute(
                    "CREATE TABLE IF NOT EXISTS migration "
                    "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
                done = db.execute("SELECT 1 FROM migration WHERE name = ?", (name,)).fetchone()
                if done:
                    continue  # another process applied it first
                migration(db)
                db.execute("INSERT INTO migration VALUES (?, ?)", (name, utc_now()))

    def _applied_migrations(self) -> list[str]:
        exists = self.db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'migration'").fetchone()
        if not exists:
            if self.db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                raise LedgerCorrupt(f"{self.path} is an SQLite file but not a fetchledger ledger",
                                    path=str(self.path))
            return []
        return [row[0] for row in self.db.execute("SELECT name FROM migration ORDER BY name")]

    # --- writes -------------------------------------------------------------------

    def register(
        self, registrations: Sequence[Registration], attempts: Sequence[AttemptRow] = ()
    ) -> list[StoredVersion]:
        """Register retrievals and record failed attempts in ONE transaction, all of
        them or none; ids are assigned inside it, in the order given."""
        with self._write() as db:
            stored = [self._register(db, r) for r in registrations]
            now = utc_now()
            db.executemany(
                "INSERT INTO attempt (kind, locator, at, status, message) VALUES (?, ?, ?, ?, ?)",
                [(a.kind, a.locator, now, a.status, a.message) for a in attempts],
            )
        return stored

    def _register(self, db: sqlite3.Connection, registration: Registration) -> StoredVersion:
        """One registration inside the caller's transaction."""
        prepared = registration.version
        source_id, new_source = self._find_or_create_source(db, prepared)
        latest = db.execute(
            "SELECT v.id, v.number, v.text_sha256, v.raw_sha256 FROM source s "
            "JOIN version v ON v.id = s.latest_version WHERE s.id = ?", (source_id,)
        ).fetchone()
        if latest and (latest[2], latest[3]) == (prepared.text_sha256, prepared.raw_sha256):
            version_id, number, new_version = latest[0], latest[1], False
        else:
            number = latest[1] + 1 if latest else 1
            version_id = self._insert_version(db, source_id, number, prepared)
            if latest:
                self._unindex_version(db, latest[0])
            self._index_version(db, version_id, prepared)
            new_version = True
        retrieved = registration.retrieved
        db.execute(
            "UPDATE source SET latest_version = ?, "
            "last_retrieved = CASE WHEN ? THEN max(last_retrieved, ?) ELSE last_retrieved END, "
            "title = coalesce(?, title), site = coalesce(?, site), "
            "author = coalesce(?, author), published = coalesce(?, published) "
            "WHERE id = ?",
            (version_id, retrieved, prepared.retrieved_at, prepared.title, prepared.site,
             prepared.author, prepared.date, source_id),
        )
        self._insert_quotes(db, source_id, version_id, registration.quotes)
        self._insert_searches(db, [(source_id, hit) for hit in registration.searches])
        if retrieved:
            db.execute(
                "INSERT INTO attempt (kind, locator, at, status, message, source_id) "
                "VALUES (?, ?, ?, 'ok', ?, ?)",
                (prepared.kind, prepared.display, prepared.retrieved_at,
                 f"registered as [{source_id}] version {number}", source_id),
            )
        return StoredVersion(source_id, version_id, number, new_source, new_version)

    def _find_or_create_source(
        self, db: sqlite3.Connection, prepared: PreparedVersion
    ) -> tuple[int, bool]:
        names = (prepared.locator, *prepared.aliases)
        marks = ",".join("?" * len(names))
        rows = db.execute(
            f"SELECT locator, source_id FROM alias WHERE locator IN ({marks})", names
        ).fetchall()
        found = dict(rows)
        new = False
        if prepared.locator in found:
            source_id = found[prepared.locator]
        elif found:
            source_id = min(found.values())
        else:
            cursor = db.execute(
                "INSERT INTO source (kind, locator, display, title, site, author, published, "
                "first_retrieved, last_retrieved) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (prepared.kind, prepared.locator, prepared.display, prepared.title,
                 prepared.site, prepared.author, prepared.date, prepared.retrieved_at,
                 prepared.retrieved_at),
            )
            source_id = int(cursor.lastrowid or 0)
            new = True
        db.executemany(
            "INSERT OR IGNORE INTO alias (locator, source_id) VALUES (?, ?)",
            [(name, source_id) for name in names],
        )
        return source_id, new

    def _insert_version(
        self, db: sqlite3.Connection, source_id: int, number: int, p: PreparedVersion
    ) -> int:
        cursor = db.execute(
            "INSERT INTO version (source_id, number, text_sha256, raw_sha256, retrieved_at, "
            "extractor, extractor_version, meta, pages, text, raw, raw_size, raw_stored) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (source_id, number, p.text_sha256, p.raw_sha256, p.retrieved_at, p.extractor,
             p.extractor_version, json.dumps(p.meta, ensure_ascii=False, sort_keys=True),
             json.dumps(p.pages) if p.pages else None, p.text, p.raw_compressed,
             p.raw_size, p.raw_stored),
        )
        return int(cursor.lastrowid or 0)

    def _index_version(self, db: sqlite3.Connection, version_id: int, p: PreparedVersion) -> None:
        first = db.execute("SELECT coalesce(max(id), 0) + 1 FROM passage").fetchone()[0]
        db.executemany(
            "INSERT INTO passage (id, version_id, start, end, page, page_label, ordinal, "
            "heading) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(first + i, version_id, s.start, s.end, s.page, s.label, i + 1,
              p.text[s.start : s.end] if heading else None)
             for i, (s, heading) in enumerate(zip(p.passages, p.headings, strict=True))],
        )
        db.executemany(CHUNK_INSERT.format(p="?"), chunk_rows(version_id, p.chunks))
        db.executemany(
            "INSERT INTO passage_fts (rowid, body) VALUES (?, ?)",
            [(first + i, p.text[s.start : s.end]) for i, s in enumerate(p.passages)],
        )

    def _unindex_version(self, db: sqlite3.Connection, version_id: int) -> None:
        """Take a superseded version's passages out of the search index."""
        text = db.execute("SELECT text FROM version WHERE id = ?", (version_id,)).fetchone()[0]
        rows = db.execute(
            "SELECT id, start, end FROM passage WHERE version_id = ?", (version_id,)
        ).fetchall()
        db.executemany(
            "INSERT INTO passage_fts (passage_fts, rowid, body) VALUES ('delete', ?, ?)",
            [(pid, text[start:end]) for pid, start, end in rows],
        )

    def _insert_quotes(
        self, db: sqlite3.Connection, source_id: int, version_id: int, quotes: Sequence[QuoteRow]
    ) -> None:
        now = utc_now()
        db.executemany(
            "INSERT OR IGNORE INTO quote (source_id, version_id, start, end, page, page_label, "
            "text, first_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(source_id, version_id, q.start, q.end, q.page, q.page_label, q.text, now)
             for q in quotes],
        )

    @staticmethod
    def _insert_searches(db: sqlite3.Connection, hits: Sequence[tuple[int, SearchHit]]) -> None:
        now = utc_now()
        db.executemany(
            "INSERT OR IGNORE INTO search_hit (source_id, query, engine, rank, title, snippet, "
            "at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(source_id, h.query or "", h.engine or "", h.rank, h.title, h.snippet, now)
             for source_id, h in hits])

    def record_searches(self, hits: Sequence[tuple[int, SearchHit]]) -> None:
        """Record search hits of registered sources (one kept per source, query, engine
        and rank)."""
        if hits:
            with self._write() as db:
                self._insert_searches(db, hits)

    def record_quotes(self, source_id: int, version_id: int, quotes: Sequence[QuoteRow]) -> None:
        """Record quotes handed out by a search or confirmed by ``quote``."""
        if quotes:
            with self._write() as db:
                self._insert_quotes(db, source_id, version_id, quotes)

    def record_unchanged(self, source_id: int, attempt: AttemptRow, at: str) -> None:
        """A retrieval that found the source unchanged (HTTP 304): last retrieval time
        ``at``, an ``ok`` attempt, no version."""
        with self._write() as db:
            db.execute("UPDATE source SET last_retrieved = max(last_retrieved, ?) WHERE id = ?",
                       (at, source_id))
            db.execute(
                "INSERT INTO attempt (kind, locator, at, status, message, source_id) "
                "VALUES (?, ?, ?, 'ok', ?, ?)",
                (attempt.kind, attempt.locator, at, attempt.message, source_id))

    def reset(self) -> None:
        """Delete every source, version, quote and attempt: the ledger starts again at [1]."""
        with self._write() as db:
            for table in ("search_hit", "quote", "attempt", "passage", "text_chunk", "alias",
                          "version", "source"):
                db.execute(f"DELETE FROM {table}")
            db.execute("INSERT INTO passage_fts (passage_fts) VALUES ('delete-all')")
        with self._errors():
            self.db.execute("VACUUM")

    def claim(self, holder: str, want: Sequence[str], finished: Sequence[tuple[str, str, str]],
              *, lease: float, since: datetime | None,
              gone: Sequence[str] = ()) -> ClaimRound | None:
        """None: an SQLite ledger is written from one machine, whose batch takes every
        input it is given (claims share work between machines: PostgreSQL)."""
        return None

    def import_rows(self, batches: Iterable[CopyBatch]) -> None:
        """Fill this EMPTY ledger with another's rows in one transaction, ids unchanged,
        then index the passages of each source's latest version."""
        with self._write() as db:
            held = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                    for t in ("source", "attempt")}
            if any(held.values()):
                raise InvalidArgument(
                    f"the ledger {self.path} is not empty ({held['source']} sources, "
                    f"{held['attempt']} attempts): copy goes into an empty ledger only",
                    hint="name a new file, or an empty PostgreSQL database")
            for table, found in batches:
                if table == "identity_key":  # the source's key, so identities stay equal
                    db.execute("DELETE FROM identity_key")
                marks = ", ".join("?" * len(COPY_COLUMNS[table]))
                db.executemany(f"INSERT INTO {table} ({quoted_columns(table)}) "
                               f"VALUES ({marks})", found)
            # Each latest version's text read once, its passages cut from it here: a
            # substr per passage reads the whole stored text each time (quadratic).
            latest = db.execute("SELECT v.id FROM source s JOIN version v "
                                "ON v.id = s.latest_version ORDER BY v.id").fetchall()
            for (version_id,) in latest:
                (text,) = db.execute("SELECT text FROM version WHERE id = ?",
                                     (version_id,)).fetchone()
                spans = db.execute('SELECT id, start, "end" FROM passage '
                                   "WHERE version_id = ? ORDER BY id", (version_id,)).fetchall()
                db.executemany("INSERT INTO passage_fts (rowid, body) VALUES (?, ?)",
                               [(passage_id, text[start:end]) for passage_id, start, end in spans])

    # --- reads --------------------------------------------------------------------

    def source(self, source_id: int, version_number: int | None = None) -> Source | None:
        """A source as of one version (the latest by default); None if unknown."""
        with self._errors():
            if version_number is None:
                row = self.db.execute(
                    f"SELECT {SOURCE_COLUMNS} FROM source s "
                    "JOIN version v ON v.id = s.latest_version WHERE s.id = ?", (source_id,)
                ).fetchone()
            else:
                row = self.db.execute(
                    f"SELECT {SOURCE_COLUMNS} FROM source s JOIN version v "
                    "ON v.source_id = s.id AND v.number = ? WHERE s.id = ?",
                    (version_number, source_id),
                ).fetchone()
        return source_from_row(row) if row else None

    def sources(self) -> list[Source]:
        with self._errors():
            rows = self.db.execute(
                f"SELECT {SOURCE_COLUMNS} FROM source s "
                "JOIN version v ON v.id = s.latest_version ORDER BY s.id"
            ).fetchall()
        return [source_from_row(row) for row in rows]

    def source_id_for(self, locators: Sequence[str]) -> int | None:
        """The id of the source any of these locators names, if one does."""
        if not locators:
            return None
        marks = ",".join("?" * len(locators))
        with self._errors():
            row = self.db.execute(
                f"SELECT min(source_id) FROM alias WHERE locator IN ({marks})", tuple(locators)
            ).fetchone()
        return int(row[0]) if row and row[0] is not None else None

    def version(self, source_id: int, number: int | None = None) -> VersionText | None:
        """One version of a source (the latest by default)."""
        if number is None:
            sql = ("SELECT v.id, v.number, v.text FROM source s "
                   "JOIN version v ON v.id = s.latest_version WHERE s.id = ?")
            params: tuple[int, ...] = (source_id,)
        else:
            sql = "SELECT id, number, text FROM version WHERE source_id = ? AND number = ?"
            params = (source_id, number)
        with self._errors():
            row = self.db.execute(sql, params).fetchone()
        return VersionText(*row) if row else None

    def versions(self, source_id: int) -> list[VersionText]:
        """Every version of a source, newest first."""
        with self._errors():
            rows = self.db.execute(
                "SELECT id, number, text FROM version WHERE source_id = ? ORDER BY number DESC",
                (source_id,),
            ).fetchall()
        return [VersionText(*row) for row in rows]

    def version_details(self, source_id: int) -> list[dict[str, Any]]:
        """Everything but the text and raw bytes of each version, oldest first."""
        with self._errors():
            rows = self.db.execute(
                f"SELECT {VERSION_DETAIL_COLUMNS} FROM version WHERE source_id = ? "
                "ORDER BY number", (source_id,)
            ).fetchall()
        return version_details_from_rows(rows)

    def aliases(self, source_id: int) -> list[str]:
        with self._errors():
            rows = self.db.execute(
                "SELECT locator FROM alias WHERE source_id = ? ORDER BY locator", (source_id,)
            ).fetchall()
        return [row[0] for row in rows]

    def searches(self, source_id: int) -> list[SearchHit]:
        """The search hits that found a source, oldest first."""
        with self._errors():
            rows = self.db.execute(
                "SELECT query, engine, rank, title, snippet, at FROM search_hit "
                "WHERE source_id = ? ORDER BY id", (source_id,)).fetchall()
        return [SearchHit(q or None, e or None, r, t, s, at) for q, e, r, t, s, at in rows]

    def quote_count(self, source_id: int) -> int:
        with self._errors():
            row = self.db.execute(
                "SELECT count(*) FROM quote WHERE source_id = ?", (source_id,)).fetchone()
        return int(row[0])

    def raw_bytes(self, source_id: int, version_number: int) -> bytes:
        """The stored raw bytes of one version (possibly capped; see ``raw_stored``)."""
        with self._errors():
            row = self.db.execute(
                "SELECT raw FROM version WHERE source_id = ? AND number = ?",
                (source_id, version_number),
            ).fetchone()
        return zlib.decompress(row[0]) if row and row[0] else b""

    def stored_raw(self, source_id: int, number: int | None = None) -> StoredRaw | None:
        """One version's raw bytes and the facts to extract them again (latest by default)."""
        which = "v.id = s.latest_version" if number is None else "v.number = ?"
        with self._errors():
            row = self.db.execute(
                "SELECT v.number, s.kind, s.locator, s.display, v.raw, v.raw_size, "
                "v.retrieved_at, v.text_sha256, v.extractor, v.extractor_version, v.meta "
                f"FROM source s JOIN version v ON v.source_id = s.id AND {which} "
                "WHERE s.id = ?", (source_id,) if number is None else (number, source_id),
            ).fetchone()
        if row is None:
            return None
        number, kind, locator, display, raw, size, at, sha, extractor, version, meta = row
        return StoredRaw(source_id, number, kind, locator, display,
                         zlib.decompress(raw) if raw else b"", size, at, sha, extractor,
                         version, json.loads(meta))

    def passages(self, version_id: int) -> list[Passage]:
        with self._errors():
            rows = self.db.execute(
                "SELECT start, end, page, page_label FROM passage WHERE version_id = ? "
                "ORDER BY start", (version_id,)
            ).fetchall()
        return [Passage(*row) for row in rows]

    def search(self, words: Sequence[str], limit: int, context: int = 40) -> Candidates:
        """Up to ``limit`` passages holding any of ``words`` (the rule of every backend:
        :mod:`.search`), and how many passages hold each word, from one snapshot."""
        with self._read() as db:
            return sqlite_search(lambda sql, params: db.execute(sql, tuple(params)).fetchall(),
                                 words, limit, context)

    def attempts(self, *, failed_only: bool = False) -> list[Attempt]:
        sql = "SELECT locator, at, status, message, kind, source_id FROM attempt"
        if failed_only:
            sql += " WHERE status != 'ok'"
        with self._errors():
            rows = self.db.execute(sql + " ORDER BY id").fetchall()
        return [Attempt(*row) for row in rows]

    def recorded_quotes(self, source_id: int | None = None) -> list[Quote]:
        """Every quote handed out or confirmed (of one source), by source, version, start."""
        sql = ("SELECT q.source_id, v.number, q.start, q.end, q.page, q.page_label, q.text, "
               "q.first_at FROM quote q JOIN version v ON v.id = q.version_id")
        params: tuple[int, ...] = ()
        if source_id is not None:
            sql += " WHERE q.source_id = ?"
            params = (source_id,)
        with self._errors():
            rows = self.db.execute(
                sql + " ORDER BY q.source_id, v.number, q.start, q.end", params).fetchall()
        return [Quote(*row) for row in rows]

    def version_pages(
        self, source_id: int, version_number: int
    ) -> list[tuple[int, int, int, str | None]]:
        """``(start, end, number, label)`` of each page of a paged version (else empty)."""
        with self._errors():
            row = self.db.execute(
                "SELECT pages FROM version WHERE source_id = ? AND number = ?",
                (source_id, version_number),
            ).fetchone()
        if not row or not row[0]:
            return []
        return [(int(a), int(b), int(n), label) for a, b, n, label in json.loads(row[0])]

    def counts(self) -> dict[str, int]:
        """Row counts of the main tables (for tests, stats and benchmarks)."""
        with self._read() as db:
            return {
                table: db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for table in ("source", "version", "passage", "quote", "attempt", "alias",
                              "search_hit")
            }

    def export_rows(self, batch: int = 500) -> Iterator[CopyBatch]:
        """Every row of the ledger, table by table and by id, from one snapshot."""
        with self._read() as db:
            for table in COPY_COLUMNS:
                order = COPY_ORDER.get(table, "id")
                cursor = db.execute(f"SELECT {quoted_columns(table)} FROM {table} "
                                    f"ORDER BY {order}")
                while found := cursor.fetchmany(batch):
                    yield table, found

    def integrity_check(self) -> str:
        with self._errors():
            return str(self.db.execute("PRAGMA integrity_check").fetchone()[0])


def _holds_commits(wal: Path) -> bool:
    """Whether a write-ahead log holds frames (past its 32-byte header)."""
    try:
        return wal.stat().st_size > 32
    except OSError:
        return False
