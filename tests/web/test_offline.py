"""``--offline``: fetch, curl, batch and the MCP fetch tools answer from the ledger's stored
raw bytes and never open a socket. The ledger is built online from the loopback server;
the offline runs are real processes, watched by an audit hook that logs every network
socket, connect and name lookup (``tests/offline_guard``), and run inside ``unshare -n``,
where no network exists at all.

A PostgreSQL ledger is itself reached over the network: its runs stay outside the
namespace, and the audit hook (which libpq's own connection does not pass through)
still sees nothing else."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fetchledger import Ledger

from .webserver import LoopbackServer
from mcp_session import McpSession

pytestmark = pytest.mark.both_backends

GUARD = Path(__file__).resolve().parents[1] / "offline_guard"
PATHS = ["/pages/article", "/pages/news", "/pdf"]


def _unshare_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-n", "true"], capture_output=True,
                          check=False).returncode == 0


UNSHARE = _unshare_works()


@pytest.fixture
def built(web: LoopbackServer, ledger_path: Path) -> dict[str, object]:
    """A ledger built online: three pages fetched with a query, and their §5 JSON."""
    with Ledger(ledger_path, allow_private=True) as online:
        fetched = [online.fetch(web.url(p), query="tides water").to_json() for p in PATHS]
    return {"urls": [web.url(p) for p in PATHS], "json": fetched}


class Offline:
    """Runs ``fetchledger --offline ...`` as a process, optionally inside ``unshare -n``;
    every network socket any of its interpreters opens is logged."""

    def __init__(self, ledger: Path, folder: Path, *, isolated: bool) -> None:
        self.ledger = ledger
        self.log = folder / "sockets.log"
        self.prefix = ["unshare", "-n"] if isolated else []
        self.env = {**os.environ, "PYTHONPATH": str(GUARD), "FETCHLEDGER_LEDGER": str(ledger),
                    "FETCHLEDGER_TEST_SOCKETS": str(self.log)}

    def run(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.prefix, sys.executable, "-m", "fetchledger", "--offline",
                               *args], input=stdin, capture_output=True, text=True,
                              env=self.env, timeout=120, check=False)

    def sockets(self) -> list[str]:
        assert self.log.exists(), "the audit hook was not loaded"
        return self.log.read_text().splitlines()


def _snippets(data: list[dict[str, object]]) -> list[object]:
    return [(d["source"], d["snippets"]) for d in data]  # type: ignore[index]


def _offline_session(offline: Offline, built: dict[str, object], web: LoopbackServer) -> None:
    urls = list(built["urls"])  # type: ignore[call-overload]
    hits = len(web.hits)

    fetched = offline.run("--json", "fetch", *urls, "-q", "tides water")
    assert fetched.returncode == 0, fetched.stderr
    assert _snippets(json.loads(fetched.stdout)) == _snippets(built["json"])  # type: ignore[arg-type]

    missing = web.url("/pages/readme")
    batch = offline.run("--json", "batch", "--refresh", "-q", "tides water", "-",
                        stdin="\n".join([*urls, missing]))
    assert batch.returncode == 3, batch.stderr
    lines = [json.loads(line) for line in batch.stdout.splitlines()]
    answered = sorted((line for line in lines if "snippets" in line),
                      key=lambda line: line["source"]["id"])  # in the order they finish
    assert _snippets(answered) == _snippets(built["json"])  # type: ignore[arg-type]
    assert [line["error"]["status"] for line in lines if "error" in line] == ["offline_miss"]

    skipped = offline.run("--json", "batch", "-", stdin="\n".join(urls))
    assert skipped.returncode == 0 and all(
        json.loads(line)["skipped"] for line in skipped.stdout.splitlines())

    curl = offline.run("curl", urls[0])
    assert curl.returncode == 0 and curl.stdout.startswith("[1] ")
    miss = offline.run("fetch", missing)
    assert miss.returncode == 3 and "offline_miss" in miss.stderr

    assert offline.sockets() == []
    assert len(web.hits) == hits
    with Ledger(offline.ledger) as ledger:
        assert [s.versions for s in ledger.sources()] == [1, 1, 1]
        assert {a.status for a in ledger.attempts(failed=True)} == {"offline_miss"}


def test_offline_runs_open_no_socket(built: dict[str, object], web: LoopbackServer,
                                     ledger_path: Path, tmp_path: Path, backend: str) -> None:
    """Inside ``unshare -n`` where it works (no network exists there at all: a plain
    fetch fails), watched by the audit hook either way."""
    isolated = UNSHARE and backend == "sqlite"
    offline = Offline(ledger_path, tmp_path, isolated=isolated)
    if isolated:
        online = subprocess.run(
            ["unshare", "-n", sys.executable, "-m", "fetchledger", "--allow-private", "fetch",
             web.url("/pages/readme")], capture_output=True, text=True, timeout=120, check=False,
            env={**os.environ, "FETCHLEDGER_LEDGER": str(tmp_path / "probe.db")})
        assert online.returncode == 3 and "network_error" in online.stderr
    _offline_session(offline, built, web)


def test_refresh_is_refused_offline(built: dict[str, object], ledger_path: Path,
                                    tmp_path: Path) -> None:
    offline = Offline(ledger_path, tmp_path, isolated=False)
    refused = offline.run("refresh", "--all")
    assert refused.returncode == 2 and "--offline" in refused.stderr
    reextracted = offline.run("reextract", "--all")
    assert reextracted.returncode == 0, reextracted.stderr
    assert offline.sockets() == []


@pytest.fixture
def offline_server(built: dict[str, object], ledger_path: Path, tmp_path: Path,
                   backend: str) -> Iterator[McpSession]:
    args = ["--offline", "--ledger", str(ledger_path), "mcp", "--root", str(tmp_path)]
    isolated = UNSHARE and backend == "sqlite"
    session = McpSession(["-n", sys.executable, "-m", "fetchledger", *args]
                         if isolated else args, cwd=tmp_path, workdir=tmp_path / "mcp",
                         command="unshare" if isolated else None,
                         env={"PYTHONPATH": f"{GUARD}",
                              "FETCHLEDGER_TEST_SOCKETS": str(tmp_path / "sockets.log")})
    try:
        yield session
    finally:
        session.close()


def test_mcp_fetch_tools_offline(offline_server: McpSession, built: dict[str, object],
                                 web: LoopbackServer, tmp_path: Path) -> None:
    urls = list(built["urls"])  # type: ignore[call-overload]
    result = offline_server.call("fetch", url=urls[0], query="tides water")
    assert not result.is_error
    assert result.structured_content == built["json"][0]  # type: ignore[index]
    request = offline_server.call("http_request", method="GET", url=urls[1],
                                  query="tides water")
    assert request.structured_content == built["json"][1]  # type: ignore[index]
    miss = offline_server.call("fetch", url=web.url("/pages/readme"))
    assert miss.is_error and miss.content[0].text.startswith(  # type: ignore[union-attr]
        "offline_miss: ")
    assert (tmp_path / "sockets.log").read_text() == ""
