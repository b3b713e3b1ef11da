"""Append-only, named schema migrations of each backend's ledger.

Each migration runs once, in one transaction together with the row that
records it in the ``migration`` table. Never edit or reorder a published
migration: add a new one. Both backends hold the same tables and columns
(``fetchledger copy`` moves rows between them as they are); PostgreSQL adds
what only a shared ledger needs (the id counter row, batch claims).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

__all__ = ["MIGRATIONS", "POSTGRES_MIGRATIONS"]


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


MIGRATIONS: tuple[tuple[str, Callable[[sqlite3.Connection], None]], ...] = (
    ("0001_initial", _initial),
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

POSTGRES_MIGRATIONS: tuple[tuple[str, str], ...] = (
    ("0001_initial", _POSTGRES_INITIAL),
)
