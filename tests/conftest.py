"""Shared fixtures: every test gets its own ledger file through $FETCHLEDGER_LEDGER."""

from __future__ import annotations

import functools
import sqlite3
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from fetchledger import Ledger, Limits
from fetchledger.adapters.pdf import PDF_ENGINES
from fetchledger.cli import cli


@pytest.fixture(autouse=True)
def _isolated_ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "ledger.db"
    monkeypatch.setenv("FETCHLEDGER_LEDGER", str(path))
    monkeypatch.delenv("FETCHLEDGER_ALLOW_PRIVATE", raising=False)
    return path


@pytest.fixture
def ledger_path(_isolated_ledger: Path) -> Path:
    return _isolated_ledger


@pytest.fixture
def ledger(ledger_path: Path) -> Iterator[Ledger]:
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
    "http_request": ({"method", "url"}, {"headers", "body", "query"}),
    "read_file": ({"path"}, {"query", "pages", "password"}),
    "run_command": ({"argv"}, {"timeout"}),
    "search_quotes": ({"query"}, {"k", "source"}),
    "get_source": ({"id"}, set()),
    "render": ({"text"}, {"style"}),
    "check": ({"text"}, set()),
}


def _can_mount() -> bool:
    """True where `unshare -m` may mount (root in a sandbox): full-disk and read-only tests."""
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs tmpfs /mnt"],
                           capture_output=True, check=False)
    return probe.returncode == 0


needs_mount_namespace = pytest.mark.skipif(
    not _can_mount(), reason="needs `unshare -m` and mount (root in a sandbox)")


def rows(path: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    """Rows straight from the SQLite file (tests assert what is stored, not only printed)."""
    with sqlite3.connect(path) as db:
        return list(db.execute(sql, params).fetchall())


def table_counts(path: Path) -> dict[str, int]:
    if not path.exists():
        return {}
    tables = ("source", "version", "passage", "quote", "attempt", "alias")
    return {t: rows(path, f"SELECT count(*) FROM {t}")[0][0] for t in tables}  # type: ignore[misc]
