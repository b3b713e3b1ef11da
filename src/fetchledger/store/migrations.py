"""Append-only, named schema migrations of each backend's ledger.

Each migration runs once, in one transaction together with the row that
records it in the ``migration`` table. Never edit or reorder a published
migration: add a new one. Both backends hold the same tables and columns
(``fetchledger copy`` moves rows between them as they are); PostgreSQL adds
what only a shared ledger needs (the id counter row, batch claims).
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import LedgerCorrupt, LedgerTooNew
from ..identity.upgrade import SourceRow, changed_meta, plan_upgrade, upgraded_display
from ..text.passages import Passage
from .pg_functions import (
    REGISTER_FUNCTION_0009,
    REGISTER_FUNCTION_0013,
    REGISTER_FUNCTION_0018,
    REGISTER_FUNCTION_0019,
    REGISTER_FUNCTION_0021,
)
from .windows import CHUNK_INSERT, chunk_rows, reading_columns

if TYPE_CHECKING:
    import psycopg

    PgConnection = psycopg.Connection[tuple[Any, ...]]

__all__ = ["MIGRATIONS", "POSTGRES_MIGRATIONS", "refuse_unknown"]


def refuse_unknown(applied: Sequence[str], known: Iterable[str], where: str) -> None:
    """LedgerTooNew when the ledger at ``where`` has migrations this fetchledger lacks."""
    names = set(known)
    unknown = [name for name in applied if name not in names]
    if unknown:
        raise LedgerTooNew(
            f"the ledger {where} was written by a newer fetchledger "
            f"(unknown migrations: {', '.join(unknown)})", path=where,
            hint="upgrade fetchledger to use this ledger")


def _run(db: sqlite3.Connection, script: str) -> None:
    """Execute each statement of ``script`` inside the caller's transaction
    (``executescript`` would commit it first)."""
    statement = ""
    for line in script.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            db.execute(statement)
            statement = ""
    if statement.strip():
        raise ValueError(f"incomplete SQL statement in migration: {statement!r}")


def _initial(db: sqlite3.Connection) -> None:
    _run(
        db,
        """
        CREATE TABLE source (
            id              INTEGER PRIMARY KEY,
            kind            TEXT NOT NULL,
            locator         TEXT NOT NULL UNIQUE,
            display         TEXT NOT NULL,
            title           TEXT,
            site            TEXT,
            author          TEXT,
            published       TEXT,
            first_retrieved TEXT NOT NULL,
            last_retrieved  TEXT NOT NULL,
            latest_version  INTEGER
        );
        -- every locator that names a source: its canonical one, redirect hops, ...
        CREATE TABLE alias (
            locator   TEXT PRIMARY KEY,
            source_id INTEGER NOT NULL REFERENCES source(id)
        ) WITHOUT ROWID;
        CREATE TABLE version (
            id                INTEGER PRIMARY KEY,
            source_id         INTEGER NOT NULL REFERENCES source(id),
            number            INTEGER NOT NULL,
            text_sha256       TEXT NOT NULL,
            raw_sha256        TEXT NOT NULL,
            retrieved_at      TEXT NOT NULL,
            extractor         TEXT NOT NULL,
            extractor_version TEXT NOT NULL,
            meta              TEXT NOT NULL,   -- JSON: HTTP status, file size, argv, ...
            pages             TEXT,            -- JSON: [[start, end, number, label], ...]
            text              TEXT NOT NULL,
            raw               BLOB,            -- zlib-compressed raw bytes (capped)
            raw_size          INTEGER NOT NULL,
            raw_stored        INTEGER NOT NULL,
            UNIQUE (source_id, number)
        );
        CREATE TABLE passage (
            id         INTEGER PRIMARY KEY,
            version_id INTEGER NOT NULL REFERENCES version(id),
            start      INTEGER NOT NULL,
            end        INTEGER NOT NULL,
            page       INTEGER,
            page_label TEXT
        );
        CREATE INDEX passage_by_version ON passage(version_id);
        -- the search index holds the passages of each source's latest version
        CREATE VIRTUAL TABLE passage_fts USING fts5(
            body, content='', tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TABLE quote (
            id         INTEGER PRIMARY KEY,
            source_id  INTEGER NOT NULL REFERENCES source(id),
            version_id INTEGER NOT NULL REFERENCES version(id),
            start      INTEGER NOT NULL,
            end        INTEGER NOT NULL,
            page       INTEGER,
            page_label TEXT,
            text       TEXT NOT NULL,
            first_at   TEXT NOT NULL,
            UNIQUE (version_id, start, end)
        );
        CREATE INDEX quote_by_source ON quote(source_id);
        CREATE TABLE attempt (
            id        INTEGER PRIMARY KEY,
            kind      TEXT NOT NULL,
            locator   TEXT NOT NULL,
            at        TEXT NOT NULL,
            status    TEXT NOT NULL,
            message   TEXT NOT NULL,
            source_id INTEGER REFERENCES source(id)
        );
        CREATE INDEX attempt_by_status ON attempt(status);
        """
    )


def _keyed_identity(db: sqlite3.Connection) -> None:
    """The ledger's own random identity key (redacted query and argv values enter
    identities as HMACs under it), and every stored identity, display and URL brought
    under today's rules (:mod:`fetchledger.identity.upgrade`): no id changes."""
    _run(db, "CREATE TABLE identity_key (id INTEGER PRIMARY KEY CHECK (id = 1), "
             "key BLOB NOT NULL);")
    key = secrets.token_bytes(32)
    db.execute("INSERT INTO identity_key (id, key) VALUES (1, ?)", (key,))
    _reidentify(db, key)


def _secret_rules(db: sqlite3.Connection) -> None:
    """Identities, displays and URLs brought under the secret rules of issue 13's second
    pass (session cookies and path parameters, program options, values inside
    options, JSON...): a source stored with such a secret in clear is found again
    under its old id, and the clear value leaves the ledger. No id changes."""
    _reidentify(db)


def _nested_secrets(db: sqlite3.Connection) -> None:
    """Identities, displays and URLs brought under the secret rules of issue 13's third
    pass (secrets of a URL nested in a parameter's value, unquoted ``NAME = V``, split
    words, setting commands, commands inside words): a source stored with such a secret
    in clear is found again under its old id, and the clear value leaves the ledger."""
    _reidentify(db)


def _credentials_not_identity(db: sqlite3.Connection) -> None:
    """Identities without URL user-info (issue 13, third pass: a credential, not
    identity; they held ``REDACTED@``): each source is found again under its old id."""
    _reidentify(db)


def _secret_shapes(db: sqlite3.Connection) -> None:
    """Identities, displays and URLs brought under the rules for credentials known by
    their shape (webhook URLs whose path is the secret, GitHub/Slack/AWS/... token
    formats: :mod:`fetchledger.identity.shapes`): a source stored with one in clear is
    found again under its old id (two webhooks stay two), and the clear value leaves its
    locator, display, aliases, attempts and version metadata."""
    _reidentify(db)


def _shell_quoting(db: sqlite3.Connection) -> None:
    """Identities, displays and URLs brought under the rule that a secret's name may be
    spelled with the shell's quoting (``sh -c 'x --tok\\en=V'``, ``TO''KEN=V``: the
    value was stored in clear): such a source is found again under its old id."""
    _reidentify(db)


def _more_secret_options(db: sqlite3.Connection) -> None:
    """Identities and displays brought under the secret options of session 6's red team
    (``--pw V``, ``plink -pw V``, ``http -a USER:PW``, ``zip -P V``, ``7z -pV``,
    ``ssh-keygen -N V``, ``mount -o user=u,password=V``: the value was stored in clear):
    such a source is found again under its old id."""
    _reidentify(db)


def _more_secret_forms(db: sqlite3.Connection) -> None:
    """Identities and displays brought under session 7's secret forms: passwords glued
    to a user (``smbclient -U USER%PW``, ``sqlplus USER/PW@DB``, ``lftp -u USER,PW``,
    ``curl USER:PW@HOST/PATH``) or standing by place (``htpasswd -b FILE USER PW``,
    ``net use \\\\SRV\\SHARE PW``, ``xfreerdp /p:PW``), and URL values that are secret
    by their name and shape (``?code=`` of an OAuth callback, ``/reset-password/TOKEN``):
    such a source is found again under its old id."""
    _reidentify(db)


def _fed_secrets(db: sqlite3.Connection) -> None:
    """Identities and displays brought under session 8's forms: a password fed on
    standard input (``echo PW | docker login --password-stdin``, ``echo u:PW |
    chpasswd``, ``CMD <<< PW``), typed by expect (``send "PW\\r"``), in SQL lines
    (``CONNECT u/PW@db``, ``IDENTIFIED BY PW``), by place (``isql DSN USER PW``, ``exp
    u/PW@db``, ``-hashes LM:NT``) or in code (``connect('h', 'u', 'PW')``): such a
    source is found again under its old id."""
    _reidentify(db)


def _held_out_secrets(db: sqlite3.Connection) -> None:
    """Identities and displays brought under session 9's held-out forms: a password fed
    through programs in between (``echo PW | tee log | docker login --password-stdin``),
    by ``yes`` or ``< <(echo PW)``, given as a default (``${PW:-V}``, ``getenv('X',
    'V')``), to a renamed call, after a prompt naming no password, in a JDBC or Go
    connection string, to ``oc``/``twine``/``vault write``, written to a credentials
    file (``.netrc``, ``.pgpass``) or through a variable (``P=V; sshpass -p "$P"``): such
    a source is found
    again under its old id. (URL user-info in a command line, held as ``REDACTED@``
    before, stays so: the value is gone, nothing can key it.)"""
    _reidentify(db)


def _stray_percent(db: sqlite3.Connection) -> None:
    """Identities and displays brought under issue 13's fourth pass: a stray ``%`` of a
    URL (one not followed by two hex digits: ``/50%``, ``/%zz``, ``/%b%41``) is escaped
    as ``%25``, so normalizing a normalized URL changes nothing: such a source is found
    again under its old id."""
    _reidentify(db)


def _url_characters(db: sqlite3.Connection) -> None:
    """Identities and displays brought under issue 13's session 11: a backslash before a
    URL's query is a slash (WHATWG: ``/a\\b`` is ``/a/b``, ``http://h\\@e/`` is host
    ``h``), and a character no URI holds raw (``|``, ``^``, a query's ``\\``) is escaped
    (``%7C``) as its escape is: such a source is found again under its old id."""
    _reidentify(db)


def _reidentify(db: sqlite3.Connection, key: bytes | None = None) -> None:
    """Every stored identity, display, attempt locator and URL of version metadata
    under today's rules (:mod:`fetchledger.identity.upgrade`), with ``key`` or else the
    ledger's own identity key."""
    if key is None:
        (stored,) = db.execute("SELECT key FROM identity_key WHERE id = 1").fetchone()
        key = bytes(stored)
    aliases: dict[int, list[str]] = {}
    for locator, source_id in db.execute("SELECT locator, source_id FROM alias"):
        aliases.setdefault(source_id, []).append(locator)
    rows = [SourceRow(i, kind, locator, display, tuple(aliases.get(i, ())))
            for i, kind, locator, display in db.execute(
                "SELECT id, kind, locator, display FROM source ORDER BY id")]
    plan = plan_upgrade(rows, key)
    db.executemany("DELETE FROM alias WHERE locator = ?", [(a,) for a in plan.drop_aliases])
    db.executemany("UPDATE source SET locator = ? WHERE id = ?",
                   [(locator, i) for i, locator in plan.locators.items()])
    db.executemany("INSERT OR IGNORE INTO alias (locator, source_id) VALUES (?, ?)",
                   plan.add_aliases)
    db.executemany("UPDATE source SET display = ? WHERE id = ?",
                   [(display, i) for i, display in plan.displays.items()])
    db.executemany("UPDATE attempt SET locator = ? WHERE id = ?", [
        (new, i) for i, kind, old in db.execute("SELECT id, kind, locator FROM attempt").fetchall()
        if (new := upgraded_display(kind, old)) != old])
    metas = [(i, kind, json.loads(meta)) for i, kind, meta in db.execute(
        "SELECT v.id, s.kind, v.meta FROM version v JOIN source s ON s.id = v.source_id")]
    db.executemany("UPDATE version SET meta = ? WHERE id = ?", [
        (json.dumps(meta, ensure_ascii=False, sort_keys=True), i)
        for i, meta in changed_meta(metas)])


_SEARCH_HITS = """
-- where a search found a source (ingest): '' for a query or engine the results did not name
CREATE TABLE search_hit (
    id        {id},
    source_id {source} NOT NULL REFERENCES source(id),
    query     TEXT NOT NULL,
    engine    TEXT NOT NULL,
    rank      INTEGER NOT NULL,
    title     TEXT,
    snippet   TEXT,
    at        TEXT NOT NULL,
    UNIQUE (source_id, query, engine, rank)
);
CREATE INDEX search_hit_by_source ON search_hit(source_id);
"""


def _search_hits(db: sqlite3.Connection) -> None:
    """Search provenance: the query, engine, rank, title and snippet of each hit."""
    _run(db, _SEARCH_HITS.format(id="INTEGER PRIMARY KEY", source="INTEGER"))


# Reading a source window by window (store/windows.py): each passage's number in its
# version and whether it is a heading, and the text again in compressed chunks.
_READING = """
ALTER TABLE passage ADD COLUMN ordinal INTEGER;
ALTER TABLE passage ADD COLUMN heading TEXT;  -- the passage's words when it is a heading
CREATE TABLE text_chunk (
    version_id {version} NOT NULL REFERENCES version(id),
    n          INTEGER NOT NULL,
    body       {blob} NOT NULL,
    PRIMARY KEY (version_id, n)
);
"""
_READING_INDEXES = """
CREATE INDEX passage_in_order ON passage(version_id, ordinal);
CREATE INDEX passage_on_pages ON passage(version_id, page, ordinal) WHERE page IS NOT NULL;
CREATE INDEX passage_headings ON passage(version_id, ordinal) WHERE heading IS NOT NULL;
"""


def _fill_reading(rows: Callable[[str, Sequence[Any]], list[Any]],
                  many: Callable[[str, list[tuple[Any, ...]]], None]) -> None:
    """Number the passages of every stored version, flag its headings and chunk its
    text, one version at a time (``rows`` and ``many`` run SQL written with ``{p}``)."""
    for version_id, kind in rows("SELECT v.id, s.kind FROM version v "
                                 "JOIN source s ON s.id = v.source_id ORDER BY v.id", ()):
        text = rows("SELECT text FROM version WHERE id = {p}", (version_id,))[0][0]
        found = rows('SELECT id, start, "end" FROM passage WHERE version_id = {p} '
                     "ORDER BY start, id", (version_id,))
        headings, chunks = reading_columns(kind, text, [Passage(a, b) for _, a, b in found])
        many("UPDATE passage SET ordinal = {p}, heading = {p} WHERE id = {p}",
             [(n, text[a:b] if flag else None, passage_id) for n, ((passage_id, a, b), flag)
              in enumerate(zip(found, headings, strict=True), start=1)])
        many(CHUNK_INSERT, chunk_rows(version_id, chunks))


def _reading(db: sqlite3.Connection) -> None:
    """Passages numbered and headings flagged, text chunked: reading by windows."""
    _run(db, _READING.format(version="INTEGER", blob="BLOB"))

    def many(sql: str, params: list[tuple[Any, ...]]) -> None:
        db.executemany(sql.format(p="?"), params)

    _fill_reading(lambda sql, params: db.execute(sql.format(p="?"), params).fetchall(), many)
    _run(db, _READING_INDEXES)


MIGRATIONS: tuple[tuple[str, Callable[[sqlite3.Connection], None]], ...] = (
    ("0001_initial", _initial),
    ("0002_keyed_identity", _keyed_identity),
    ("0005_search_hits", _search_hits),
    ("0007_secret_rules", _secret_rules),
    ("0008_reading", _reading),
    ("0010_credentials_not_identity", _credentials_not_identity),
    ("0011_nested_secrets", _nested_secrets),
    ("0012_secret_shapes", _secret_shapes),
    ("0014_shell_quoting", _shell_quoting),
    ("0016_more_secret_options", _more_secret_options),
    ("0017_more_secret_forms", _more_secret_forms),
    ("0020_fed_secrets", _fed_secrets),
    ("0022_held_out_secrets", _held_out_secrets),
    ("0023_stray_percent", _stray_percent),
    ("0024_url_characters", _url_characters),
)


# Ids: ``source.id`` comes from the counter row, updated in the same transaction as
# the insert (a sequence would leave gaps on conflict or rollback); other tables'
# ids are internal and may have gaps. Text columns are stored uncompressed
# (EXTERNAL) so that search reads a passage's context without the whole text.
_POSTGRES_INITIAL = """
CREATE TABLE counter (
    name  TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);
INSERT INTO counter (name, value) VALUES ('source', 0);
CREATE TABLE source (
    id              BIGINT PRIMARY KEY,
    kind            TEXT NOT NULL,
    locator         TEXT NOT NULL UNIQUE,
    display         TEXT NOT NULL,
    title           TEXT,
    site            TEXT,
    author          TEXT,
    published       TEXT,
    first_retrieved TEXT NOT NULL,
    last_retrieved  TEXT NOT NULL,
    latest_version  BIGINT
);
CREATE TABLE alias (
    locator   TEXT PRIMARY KEY,
    source_id BIGINT NOT NULL REFERENCES source(id)
);
CREATE INDEX alias_by_source ON alias(source_id);
CREATE TABLE version (
    id                BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    source_id         BIGINT NOT NULL REFERENCES source(id),
    number            INTEGER NOT NULL,
    text_sha256       TEXT NOT NULL,
    raw_sha256        TEXT NOT NULL,
    retrieved_at      TEXT NOT NULL,
    extractor         TEXT NOT NULL,
    extractor_version TEXT NOT NULL,
    meta              TEXT NOT NULL,
    pages             TEXT,
    text              TEXT NOT NULL,
    raw               BYTEA,
    raw_size          BIGINT NOT NULL,
    raw_stored        BIGINT NOT NULL,
    UNIQUE (source_id, number)
);
ALTER TABLE version ALTER COLUMN text SET STORAGE EXTERNAL;
-- terms: the passage's stemmed words (text.passages.tokenize), the search index;
-- NULL once its version is superseded, so every hit is current
CREATE TABLE passage (
    id         BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    version_id BIGINT NOT NULL REFERENCES version(id),
    start      INTEGER NOT NULL,
    "end"      INTEGER NOT NULL,
    page       INTEGER,
    page_label TEXT,
    terms      TSVECTOR
);
CREATE INDEX passage_by_version ON passage(version_id);
CREATE INDEX passage_terms ON passage USING GIN (terms);
CREATE TABLE quote (
    id         BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    source_id  BIGINT NOT NULL REFERENCES source(id),
    version_id BIGINT NOT NULL REFERENCES version(id),
    start      INTEGER NOT NULL,
    "end"      INTEGER NOT NULL,
    page       INTEGER,
    page_label TEXT,
    text       TEXT NOT NULL,
    first_at   TEXT NOT NULL,
    UNIQUE (version_id, start, "end")
);
CREATE INDEX quote_by_source ON quote(source_id);
CREATE TABLE attempt (
    id        BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    kind      TEXT NOT NULL,
    locator   TEXT NOT NULL,
    at        TEXT NOT NULL,
    status    TEXT NOT NULL,
    message   TEXT NOT NULL,
    source_id BIGINT REFERENCES source(id)
);
CREATE INDEX attempt_by_status ON attempt(status);
"""



def _postgres_initial(db: PgConnection) -> None:
    db.execute(_POSTGRES_INITIAL)


def _postgres_keyed_identity(db: PgConnection) -> None:
    """The ledger's own random identity key, as on SQLite (a new PostgreSQL ledger has
    no identities under older rules to bring up to date)."""
    db.execute("CREATE TABLE identity_key (id INTEGER PRIMARY KEY CHECK (id = 1), "
               "key BYTEA NOT NULL)")
    db.execute("INSERT INTO identity_key (id, key) VALUES (1, %s)", (secrets.token_bytes(32),))


def _postgres_secret_rules(db: PgConnection) -> None:
    """The SQLite migration of the same name: identities, displays, attempt locators
    and version metadata under today's secret rules, no id changed."""
    _postgres_reidentify(db)


def _postgres_nested_secrets(db: PgConnection) -> None:
    """The SQLite migration of the same name (issue 13's third pass), no id changed."""
    _postgres_reidentify(db)


def _postgres_reidentify(db: PgConnection) -> None:
    row = db.execute("SELECT key FROM identity_key WHERE id = 1").fetchone()
    assert row is not None  # 0002_keyed_identity made it
    key = row[0]
    aliases: dict[int, list[str]] = {}
    for locator, source_id in db.execute("SELECT locator, source_id FROM alias").fetchall():
        aliases.setdefault(source_id, []).append(locator)
    rows = [SourceRow(i, kind, locator, display, tuple(aliases.get(i, ())))
            for i, kind, locator, display in db.execute(
                "SELECT id, kind, locator, display FROM source ORDER BY id").fetchall()]
    plan = plan_upgrade(rows, bytes(key))
    with db.cursor() as cursor:
        cursor.executemany("DELETE FROM alias WHERE locator = %s",
                           [(a,) for a in plan.drop_aliases])
        cursor.executemany("UPDATE source SET locator = %s WHERE id = %s",
                           [(locator, i) for i, locator in plan.locators.items()])
        cursor.executemany("INSERT INTO alias (locator, source_id) VALUES (%s, %s) "
                           "ON CONFLICT DO NOTHING", plan.add_aliases)
        cursor.executemany("UPDATE source SET display = %s WHERE id = %s",
                           [(display, i) for i, display in plan.displays.items()])
        cursor.executemany("UPDATE attempt SET locator = %s WHERE id = %s", [
            (new, i) for i, kind, old in db.execute(
                "SELECT id, kind, locator FROM attempt").fetchall()
            if (new := upgraded_display(kind, old)) != old])
        metas = [(i, kind, meta if isinstance(meta, dict) else json.loads(meta))
                 for i, kind, meta in db.execute(
                     "SELECT v.id, s.kind, v.meta FROM version v "
                     "JOIN source s ON s.id = v.source_id").fetchall()]
        cursor.executemany("UPDATE version SET meta = %s WHERE id = %s", [
            (json.dumps(meta, ensure_ascii=False, sort_keys=True), i)
            for i, meta in changed_meta(metas)])


def _postgres_batch_claims(db: PgConnection) -> None:
    """Batch inputs claimed across machines: a lease while ``holder`` works on it
    (``expires``), then how it ended (``finished_at``, ``status``, ``message``)."""
    db.execute("""
        CREATE TABLE claim (
            locator     TEXT PRIMARY KEY,
            holder      TEXT,
            expires     TIMESTAMPTZ,
            finished_at TIMESTAMPTZ,
            status      TEXT,
            message     TEXT
        );
        CREATE INDEX claim_by_holder ON claim(holder) WHERE holder IS NOT NULL;
    """)


def _postgres_search_hits(db: PgConnection) -> None:
    """Search provenance, as on SQLite."""
    db.execute(_SEARCH_HITS.format(id="BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
                                   source="BIGINT"))


def _postgres_provisional_ids(db: PgConnection) -> None:
    """A new source is written under a provisional (negative) id from a sequence and
    numbered from the counter at the end of its transaction: the references to it
    follow its id (ON UPDATE CASCADE; attempts get an index for it)."""
    db.execute("CREATE SEQUENCE provisional_source")
    for table in ("alias", "version", "quote", "attempt", "search_hit"):
        db.execute(f"ALTER TABLE {table} DROP CONSTRAINT {table}_source_id_fkey, "
                   f"ADD CONSTRAINT {table}_source_id_fkey FOREIGN KEY (source_id) "
                   "REFERENCES source(id) ON UPDATE CASCADE")
    db.execute("CREATE INDEX attempt_by_source ON attempt(source_id)")


def _postgres_reading(db: PgConnection) -> None:
    """Reading by windows, as on SQLite."""
    db.execute(_READING.format(version="BIGINT", blob="BYTEA"))

    def many(sql: str, params: list[tuple[Any, ...]]) -> None:
        with db.cursor() as cursor:
            cursor.executemany(sql.format(p="%s"), params)

    _fill_reading(lambda sql, params: db.execute(sql.format(p="%s"), params).fetchall(), many)
    db.execute(_READING_INDEXES)


def _postgres_register_function(db: PgConnection) -> None:
    """A registration in two server-side statements, the id counter locked by the last
    one only (:mod:`fetchledger.store.pg_functions`): no new source's id is written
    anywhere before it is known, so none is renumbered. A new version waits for its
    source's row under a key no source has, its foreign key checked at the commit.
    ``passage_in_order`` (version, ordinal) serves every look-up by version, so
    ``passage_by_version`` goes: one index less to keep up at each passage written."""
    db.execute(REGISTER_FUNCTION_0009)
    db.execute("ALTER TABLE version ALTER CONSTRAINT version_source_id_fkey DEFERRABLE")
    db.execute("DROP INDEX passage_by_version")
    db.execute("DROP SEQUENCE provisional_source")  # 0006's provisional ids: none left


def _postgres_register_statement(db: PgConnection) -> None:
    """A registration is one statement in a transaction of its own
    (:mod:`fetchledger.store.pg_functions`): the function sets its lock timeout itself,
    answers from what it wrote (no query after the id counter, which the answer's join
    re-planned at every call), finds a source by its canonical name first, and a
    version's foreign key to its source is deferred by default (no ``SET CONSTRAINTS``
    at each call)."""
    db.execute("DROP FUNCTION fetchledger_register(bigint, text, jsonb, text[], bytea[], "
               "bytea[], integer[], jsonb)")
    db.execute("DROP FUNCTION fetchledger_register_quotes(bigint, bigint, jsonb, text)")
    db.execute(REGISTER_FUNCTION_0013)
    db.execute("ALTER TABLE version ALTER CONSTRAINT version_source_id_fkey "
               "DEFERRABLE INITIALLY DEFERRED")


def _postgres_fewer_index_writes(db: PgConnection) -> None:
    """Indexes no query needs, each one more write at every registration (most of them
    while the id counter is held): ``attempt_by_source`` served only 0006's renumbering
    (ids are never updated since 0009), ``attempt_by_status`` indexed every ``ok``
    attempt when only the failed ones are ever looked up (``attempt_failed``, partial),
    ``search_hit_by_source`` is the first column of the search hits' unique key, and a
    source's quotes are found through its versions (``version (source_id, number)``,
    then ``quote (version_id, start, end)``) so ``quote_by_source`` goes."""
    db.execute("DROP INDEX attempt_by_source")
    db.execute("DROP INDEX attempt_by_status")
    db.execute("CREATE INDEX attempt_failed ON attempt(status) WHERE status <> 'ok'")
    db.execute("DROP INDEX search_hit_by_source")
    db.execute("DROP INDEX quote_by_source")


def _postgres_counter_queue(db: PgConnection) -> None:
    """Writers of new sources queue for the id counter on an advisory lock before its
    row (:mod:`fetchledger.store.pg_functions`): waiting for the row itself, each
    found it updated by the writer before and evaluated its update again."""
    db.execute(REGISTER_FUNCTION_0018)


def _postgres_async_numbering(db: PgConnection) -> None:
    """The transaction that numbers new sources hands the id counter on at its commit
    without waiting for the disk; its writer waits for the flush after it, where many
    writers' flushes are one (:mod:`fetchledger.store.pg_functions`)."""
    db.execute(REGISTER_FUNCTION_0019)


# the foreign keys of the rows a registration writes by the dozen (passages, chunks,
# quotes): each was a trigger and a look-up query per row
_HOT_FOREIGN_KEYS = (("passage", "passage_version_id_fkey"),
                     ("text_chunk", "text_chunk_version_id_fkey"),
                     ("quote", "quote_version_id_fkey"), ("quote", "quote_source_id_fkey"))


def _postgres_fewer_checks(db: PgConnection) -> None:
    """Less server CPU per registration (issue 12: 16 writers and their 16 server
    processes share 2 cores). The foreign keys of passages, text chunks and quotes go:
    each row a registration writes of them (8 of a small page) fired a trigger that ran
    a look-up query of its version or source, about a tenth of the server's CPU per
    registration. Only ``fetchledger_register`` writes passages and chunks, with the
    version it writes in the same statement, and quotes name a version read from the
    ledger; nothing deletes a version. ``integrity_check`` finds any row of no version
    (and a quote whose source is not its version's). The function (:mod:`.pg_functions`)
    writes a new source's small version once it is numbered instead of under its key
    and updated, and the rows that name a new id in one statement."""
    row = db.execute("SELECT pg_get_serial_sequence('version', 'id')::regclass "
                     "= 'version_id_seq'::regclass").fetchone()
    if not (row and row[0]):  # the function takes a new version's id from it by name
        raise LedgerCorrupt("the ledger's version ids come from no sequence version_id_seq")
    for table, constraint in _HOT_FOREIGN_KEYS:
        db.execute(f"ALTER TABLE {table} DROP CONSTRAINT {constraint}")
    db.execute(REGISTER_FUNCTION_0021)


# the foreign keys to its source of the rows every registration writes (its names, its
# version, its ok attempt): three checks a registration, each a trigger and a query
# that locks the source row (a new source's, written by the same statement)
_SOURCE_FOREIGN_KEYS = (("alias", "alias_source_id_fkey"),
                        ("attempt", "attempt_source_id_fkey"),
                        ("version", "version_source_id_fkey"))


def _postgres_fewer_source_checks(db: PgConnection) -> None:
    """Less server CPU per registration (issue 12, as 0021): the foreign keys of the
    names, versions and attempts to their source go. Only ``fetchledger_register``
    writes them (and ``copy``, from a whole ledger), in the statement that writes or
    finds their source; nothing deletes or renumbers a source since 0006's ids stay.
    ``integrity_check`` finds any of them of no source (a large new version's key, which
    the function replaces by its id, among them). The function is unchanged."""
    for table, constraint in _SOURCE_FOREIGN_KEYS:
        db.execute(f"ALTER TABLE {table} DROP CONSTRAINT {constraint}")


POSTGRES_MIGRATIONS: tuple[tuple[str, Callable[[PgConnection], None]], ...] = (
    ("0001_initial", _postgres_initial),
    ("0002_keyed_identity", _postgres_keyed_identity),
    ("0003_batch_claims", _postgres_batch_claims),
    ("0005_search_hits", _postgres_search_hits),
    ("0006_provisional_ids", _postgres_provisional_ids),
    ("0007_secret_rules", _postgres_secret_rules),
    ("0008_reading", _postgres_reading),
    ("0009_register_function", _postgres_register_function),
    ("0010_credentials_not_identity", _postgres_secret_rules),  # the same re-identification
    ("0011_nested_secrets", _postgres_nested_secrets),
    ("0012_secret_shapes", _postgres_nested_secrets),  # the same re-identification
    ("0013_register_statement", _postgres_register_statement),
    ("0014_shell_quoting", _postgres_nested_secrets),  # the same re-identification
    ("0015_fewer_index_writes", _postgres_fewer_index_writes),
    ("0016_more_secret_options", _postgres_nested_secrets),  # the same again
    ("0017_more_secret_forms", _postgres_nested_secrets),  # the same again
    ("0018_counter_queue", _postgres_counter_queue),
    ("0019_async_numbering", _postgres_async_numbering),
    ("0020_fed_secrets", _postgres_nested_secrets),  # the same re-identification again
    ("0021_fewer_checks", _postgres_fewer_checks),
    ("0022_held_out_secrets", _postgres_nested_secrets),  # the same again
    ("0023_stray_percent", _postgres_nested_secrets),  # and again
    ("0024_url_characters", _postgres_nested_secrets),  # and again
    ("0025_fewer_source_checks", _postgres_fewer_source_checks),
)
