"""Shared fixtures: every test gets its own ledger through $FETCHLEDGER_LEDGER.

A module (or test) marked ``both_backends`` runs each test twice: on an SQLite
file and on a PostgreSQL database of its own (created from
``$FETCHLEDGER_TEST_PG`` and dropped after; ``sqlite_only`` tests in it run
once). Without that variable the PostgreSQL runs are skipped; with it, an
unreachable server fails them.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import subprocess
import uuid
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from click.testing import CliRunner

from fetchledger import Ledger, Limits
from fetchledger.adapters.pdf import PDF_ENGINES
from fetchledger.cli import cli

PG_ENV = "FETCHLEDGER_TEST_PG"
PG_HOWTO = (f"to run them, name a server: "
            f"{PG_ENV}=postgresql://postgres@127.0.0.1:5432 make test")
LedgerLocation = Path | str  # an SQLite file or a PostgreSQL URL
_PG_LEFT_OUT = pytest.StashKey[int]()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    definition = metafunc.definition
    if (definition.get_closest_marker("both_backends")
            and not definition.get_closest_marker("sqlite_only")):
        # module scope: module-wide fixtures (a server and its ledger) run once per backend
        metafunc.parametrize("backend", ["sqlite", "postgres"], indirect=True, scope="module")


def _on_postgres(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    return (item.get_closest_marker("postgres") is not None
            or (callspec is not None and callspec.params.get("backend") == "postgres"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without a PostgreSQL server to test on, its tests are left out (one line says so)."""
    if os.environ.get(PG_ENV):
        return
    left_out = [item for item in items if _on_postgres(item)]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if not _on_postgres(item)]
        config.stash[_PG_LEFT_OUT] = len(left_out)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    if config.stash.get(_PG_LEFT_OUT, 0):
        terminalreporter.write_line(
            f"{config.stash[_PG_LEFT_OUT]} PostgreSQL tests not run; {PG_HOWTO}")


@pytest.fixture(scope="module")
def backend(request: pytest.FixtureRequest) -> str:
    """The ledger backend of this test: ``sqlite`` unless parametrized."""
    return str(getattr(request, "param", "sqlite"))


def pg_admin_url() -> str:
    """The server of the PostgreSQL tests (their runs are left out without one)."""
    return os.environ[PG_ENV]


def pg_database_url(admin: str, name: str, *, schema: str | None = None) -> str:
    """The URL of database ``name`` on the server of ``admin`` (its schema ``schema``:
    a ledger lives in the first schema of the connection's search path)."""
    parts = urlsplit(admin)
    query = [parts.query] if parts.query else []
    if schema:
        query.append(f"options=-csearch_path%3D{schema}")
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, "&".join(query), ""))


@pytest.fixture(scope="session")
def pg_session_database() -> Iterator[str]:
    """One database for the session's PostgreSQL tests (each takes a schema of it)."""
    import psycopg

    admin = pg_admin_url()
    name = f"fltest_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_database_url(admin, "postgres"), autocommit=True) as db:
        db.execute(f"CREATE DATABASE {name}")
    try:
        yield pg_database_url(admin, name)
    finally:
        with psycopg.connect(pg_database_url(admin, "postgres"), autocommit=True) as db:
            db.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@contextmanager
def pg_schema(database: str) -> Iterator[str]:
    """A new, empty schema of ``database`` for one test (a ledger URL), dropped after."""
    import psycopg

    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(database, autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {schema}")
    try:
        yield pg_database_url(database, urlsplit(database).path.lstrip("/"), schema=schema)
    finally:
        with psycopg.connect(database, autocommit=True) as db:
            db.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture
def pg_ledger_url(pg_session_database: str) -> Iterator[str]:
    """The URL of a new, empty PostgreSQL ledger (its own schema), dropped after the test."""
    with pg_schema(pg_session_database) as url:
        yield url


@pytest.fixture(autouse=True)
def _isolated_ledger(backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                     request: pytest.FixtureRequest) -> LedgerLocation:
    monkeypatch.delenv("FETCHLEDGER_ALLOW_PRIVATE", raising=False)
    location: LedgerLocation = tmp_path / "ledger.db"
    if backend == "postgres":
        location = request.getfixturevalue("pg_ledger_url")
    monkeypatch.setenv("FETCHLEDGER_LEDGER", str(location))
    return location


@pytest.fixture
def ledger_path(_isolated_ledger: LedgerLocation) -> LedgerLocation:
    """Where this test's ledger lives: an SQLite file, or a PostgreSQL URL."""
    return _isolated_ledger


@pytest.fixture
def ledger(ledger_path: LedgerLocation) -> Iterator[Ledger]:
    with Ledger(ledger_path) as opened:
        yield opened


@pytest.fixture(params=PDF_ENGINES)
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A PDF engine setting (auto, pdfium, pypdf) for every ledger opened without
    explicit limits (the ``ledger`` fixture, the CLI); a test that builds its own
    ``Limits`` passes ``pdf_engine=engine`` too. Modules opt in with
    ``pytestmark = pytest.mark.usefixtures("engine")``."""
    monkeypatch.setattr("fetchledger.ledger.Limits",
                        functools.partial(Limits, pdf_engine=request.param))
    return str(request.param)


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


@pytest.fixture
def run_cli() -> object:
    """Run the CLI in-process: ``run_cli("read", "x.md")`` -> CliResult."""

    def run(*args: str, input: str | None = None) -> CliResult:
        runner = CliRunner()
        result = runner.invoke(cli, list(args), input=input, prog_name="fetchledger")
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        return CliResult(result.exit_code, result.stdout, result.stderr)

    return run


# DESIGN §6, the MCP tools: name -> (required arguments, optional arguments)
MCP_TOOL_CONTRACT: dict[str, tuple[set[str], set[str]]] = {
    "fetch": ({"url"}, {"query", "k", "render"}),
    "http_request": ({"method", "url"}, {"headers", "body", "query", "k"}),
    "read_file": ({"path"}, {"query", "k", "pages", "password"}),
    "run_command": ({"argv"}, {"timeout"}),
    "search_quotes": ({"query"}, {"k", "source"}),
    "get_source": ({"id"}, set()),
    "read_source": ({"id"}, {"start", "limit", "pages", "version", "outline"}),
    "render": ({"text"}, {"style"}),
    "check": ({"text"}, set()),
    "refresh": (set(), {"ids", "all"}),
    "ingest": ({"results"}, {"query", "k", "search_query", "engine"}),
}


def _can_mount() -> bool:
    """True where `unshare -m` may mount (root in a sandbox): full-disk and read-only tests."""
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs tmpfs /mnt"],
                           capture_output=True, check=False)
    return probe.returncode == 0


needs_mount_namespace = pytest.mark.skipif(
    not _can_mount(), reason="needs `unshare -m` and mount (root in a sandbox)")


def rows(location: LedgerLocation, sql: str, *params: object) -> list[tuple[object, ...]]:
    """Rows straight from the ledger (tests assert what is stored, not only printed):
    the SQLite file, or the PostgreSQL database (``?`` placeholders either way)."""
    if isinstance(location, str):
        import psycopg

        with psycopg.connect(location, autocommit=True) as pg:
            cursor = pg.execute(sql.replace("?", "%s"), params or None)
            return list(cursor.fetchall()) if cursor.description else []
    with sqlite3.connect(location) as db:
        return list(db.execute(sql, params).fetchall())


def ledger_exists(location: LedgerLocation) -> bool:
    """True once the ledger has been created (a file, or a migrated database)."""
    if isinstance(location, str):
        return bool(rows(location, "SELECT to_regclass('migration') IS NOT NULL")[0][0])
    return location.exists()


def stored_bytes(location: LedgerLocation) -> bytes:
    """Everything the ledger keeps, as stored: the SQLite file with its WAL and shared
    memory, or every row of every table of the PostgreSQL schema in text form."""
    if isinstance(location, Path):
        return b"".join(p.read_bytes() for p in sorted(location.parent.iterdir())
                        if p.name.startswith(location.name))
    tables = [t for (t,) in rows(location, "SELECT table_name FROM information_schema.tables "
                                           "WHERE table_schema = current_schema()")]
    return b"\n".join(str(text).encode() for table in tables for (text,) in rows(
        location, f"SELECT coalesce(string_agg(t::text, E'\\n'), '') FROM {table} t"))


def stored_decoded(path: Path) -> bytes:
    """Every byte an SQLite ledger holds a source by, its raw bytes decompressed: text,
    raw, metadata, titles, locators, attempts and names (what an echoed secret would
    reach)."""
    db = sqlite3.connect(path)
    try:
        parts = [str(row).encode() for row in db.execute(
            "SELECT s.locator, s.display, s.title, v.text, v.meta FROM source s "
            "JOIN version v ON v.source_id = s.id")]
        parts += [zlib.decompress(raw) for (raw,) in db.execute("SELECT raw FROM version")]
        parts += [str(row).encode() for row in db.execute("SELECT * FROM attempt")]
        parts += [str(row).encode() for row in db.execute("SELECT * FROM alias")]
    finally:
        db.close()
    return b"\n".join(parts)


def table_counts(path: LedgerLocation) -> dict[str, int]:
    if not ledger_exists(path):
        return {}
    tables = ("source", "version", "passage", "quote", "attempt", "alias")
    return {t: rows(path, f"SELECT count(*) FROM {t}")[0][0] for t in tables}  # type: ignore[misc]


# --- a PostgreSQL write stalled on the server, for tests that cut it off ------------------

_STALL = """
CREATE FUNCTION test_stall_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_sleep(60); RETURN NULL; END $$;
CREATE TRIGGER test_stall_write AFTER INSERT ON attempt
FOR EACH STATEMENT EXECUTE FUNCTION test_stall_write();
"""


def stall_pg_writes(url: str) -> None:
    """From now on, every registration of the PostgreSQL ledger ``url`` stalls on the
    server once all of its rows are written, before its commit: a trigger after its last
    insert (its ``ok`` attempt) sleeps for a minute. A registration is one statement,
    sent whole, so a write is cut off inside its transaction on the server's side."""
    rows(url, _STALL)


def pg_writer_inside(url: str, timeout: float = 60) -> int:
    """The server process of the fetchledger write stalled inside its transaction
    (:func:`stall_pg_writes`): its rows written, not committed."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = rows(url, "SELECT pid FROM pg_stat_activity WHERE application_name = "
                          "'fetchledger' AND wait_event = 'PgSleep' AND backend_xid IS NOT "
                          "NULL AND datname = current_database()")
        if found:
            return int(found[0][0])  # type: ignore[call-overload]
        time.sleep(0.02)
    raise AssertionError("no fetchledger write stalled inside its transaction")


def pg_backend_gone(url: str, pid: int, timeout: float = 30) -> None:
    """Wait until server process ``pid`` has ended (its transaction rolled back)."""
    import time

    deadline = time.monotonic() + timeout
    while rows(url, "SELECT 1 FROM pg_stat_activity WHERE pid = ?", pid):
        assert time.monotonic() < deadline, f"server process {pid} is still there"
        time.sleep(0.02)


def pg_clients_gone(url: str, timeout: float = 60) -> None:
    """Wait until no fetchledger connection to the database of ``url`` is left (a killed
    client's write finished or rolled back on the server)."""
    import time

    deadline = time.monotonic() + timeout
    while rows(url, "SELECT 1 FROM pg_stat_activity WHERE application_name = "
                    "'fetchledger' AND datname = current_database()"):
        assert time.monotonic() < deadline, "a fetchledger connection is still there"
        time.sleep(0.02)
