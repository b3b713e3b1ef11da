"""Append-only, named schema migrations of the SQLite ledger.

Each migration runs once, in one transaction together with the row that
records it. Never edit or reorder a published migration: add a new one.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Callable

from ..identity.upgrade import SourceRow, changed_meta, plan_upgrade, upgraded_display

__all__ = ["MIGRATIONS"]


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


MIGRATIONS: tuple[tuple[str, Callable[[sqlite3.Connection], None]], ...] = (
    ("0001_initial", _initial),
    ("0002_keyed_identity", _keyed_identity),
)
