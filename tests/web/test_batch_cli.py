"""``fetchledger batch``: output, summary, exit codes, rows in the ledger file, and a
batch killed with SIGKILL and resumed."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fetchledger import Ledger
from procs import alive, children_of

from .batchserver import BatchServer, Gauge
from .webserver import Reply
from conftest import ledger_exists, rows, table_counts

pytestmark = pytest.mark.both_backends

SNIPPET = re.compile(r'^\[(\d+)\] "(.*)"( \(p\. [^)]+\))?$')
SUMMARY = re.compile(r"^fetchledger: batch: (\d+) inputs?: (.*) in \d+\.\d s$", re.M)


@pytest.fixture
def hosts() -> Iterator[list[BatchServer]]:
    shared = Gauge()
    started = [BatchServer(f"127.0.0.{n}", shared=shared).start() for n in (1, 2, 3)]
    yield started
    for server in started:
        server.stop()


def write(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def summary_of(stderr: str) -> tuple[int, str]:
    found = SUMMARY.search(stderr)
    assert found, stderr
    return int(found.group(1)), found.group(2)


def test_text_output_summary_exit_code_and_rows(
        run_cli: Any, hosts: list[BatchServer], tmp_path: Path, ledger_path: Path) -> None:
    a, b, _ = hosts
    urls = write(tmp_path / "urls.txt", "# chapter 2", "", a.url("/gen/1"), b.url("/gen/2"),
                 b.url("/status/404"))
    result = run_cli("batch", "--allow-private", "-k", "2", str(urls))
    assert result.exit_code == 3
    lines = result.stdout.splitlines()
    ids = dict(rows(ledger_path, "SELECT locator, id FROM source"))
    assert sorted(ids.values()) == [1, 2]
    assert sorted(line for line in lines if not SNIPPET.match(line)) == sorted([
        f"[{ids[a.url('/gen/1')]}] Survey report 1 — 127.0.0.1",
        f"[{ids[b.url('/gen/2')]}] Survey report 2 — 127.0.0.2"])
    assert sum(1 for line in lines if SNIPPET.match(line)) == 4
    assert f"fetchledger: error: {b.url('/status/404')}: http_error: HTTP 404" in result.stderr
    assert summary_of(result.stderr) == (3, "2 ok (2 new sources), 1 http_error")
    assert rows(ledger_path, "SELECT status, locator FROM attempt WHERE status != 'ok'") == [
        ("http_error", b.url("/status/404"))]


def test_json_lines_one_per_input_then_skipped_on_rerun(
        run_cli: Any, hosts: list[BatchServer], tmp_path: Path, ledger_path: Path) -> None:
    a, b, c = hosts
    urls = write(tmp_path / "urls.txt", a.url("/gen/1"), c.url("/status/500"), "nope://x",
                 b.url("/gen/2"))
    first = run_cli("--json", "batch", "--allow-private", str(urls))
    assert first.exit_code == 2  # a bad line wins over a failed retrieval
    objects = [json.loads(line) for line in first.stdout.splitlines()]
    assert len(objects) == 4
    by_input = {o["input"]: o for o in objects}
    assert set(by_input) == {a.url("/gen/1"), c.url("/status/500"), "nope://x", b.url("/gen/2")}
    page = by_input[a.url("/gen/1")]
    assert set(page) == {"input", "source", "snippets"}
    assert set(page["source"]) == {"id", "kind", "locator", "title", "retrieved_at", "sha256"}
    text = rows(ledger_path, "SELECT text FROM version v JOIN source s ON s.latest_version = v.id "
                             "WHERE s.id = ?", page["source"]["id"])[0][0]
    for snippet in page["snippets"]:
        assert text[snippet["start"]: snippet["end"]] == snippet["quote"]
    assert by_input[c.url("/status/500")]["error"]["status"] == "http_error"
    assert by_input["nope://x"]["error"]["status"] == "invalid_url"
    assert by_input["nope://x"]["error"]["message"].startswith("line 3: ")

    again = run_cli("batch", "--allow-private", "--json", str(urls))
    objects = [json.loads(line) for line in again.stdout.splitlines()]
    skipped = [o for o in objects if o.get("skipped")]
    assert sorted(o["input"] for o in skipped) == sorted([a.url("/gen/1"), b.url("/gen/2")])
    assert all(set(o) == {"input", "skipped", "source"} for o in skipped)
    assert c.paths_hit("/status/500") == ["/status/500"] * 2  # failed input retried
    assert summary_of(again.stderr) == (4, "2 skipped, 1 http_error, 1 invalid_url")
    assert rows(ledger_path, "SELECT count(*) FROM source") == [(2,)]


def test_stdin_json_lines_with_their_own_query(
        run_cli: Any, hosts: list[BatchServer], ledger_path: Path) -> None:
    a = hosts[0]
    lines = "\n".join([json.dumps({"url": a.url("/gen/5"), "query": "autumn survey", "k": 1}),
                       a.url("/gen/6")])
    result = run_cli("batch", "--allow-private", "-q", "harbour wall", "-k", "1", "-",
                     input=lines)
    assert result.exit_code == 0, result.stderr
    snippets = {int(m.group(1)): m.group(2) for m in map(SNIPPET.match, result.stdout.splitlines())
                if m}
    assert len(snippets) == 2
    assert sorted("autumn" in s for s in snippets.values()) == [False, True]
    assert sorted("harbour wall" in s for s in snippets.values()) == [False, True]
    assert table_counts(ledger_path)["source"] == 2


def test_refresh_fetches_again_and_prints_snippets(
        run_cli: Any, hosts: list[BatchServer], tmp_path: Path) -> None:
    a = hosts[0]
    urls = write(tmp_path / "urls.txt", a.url("/gen/1"))
    assert run_cli("batch", "--allow-private", str(urls)).exit_code == 0
    skipped = run_cli("batch", "--allow-private", str(urls))
    assert skipped.stdout.splitlines() == ["[1] Survey report 1 — 127.0.0.1"]
    refreshed = run_cli("batch", "--allow-private", "--refresh", str(urls))
    assert refreshed.stdout.splitlines()[0] == "[1] Survey report 1 — 127.0.0.1"
    assert len(refreshed.stdout.splitlines()) == 4
    assert a.paths_hit("/gen/") == ["/gen/1", "/gen/1"]
    assert summary_of(refreshed.stderr) == (1, "1 ok (0 new sources)")


def test_robots_denial_and_no_robots(run_cli: Any, hosts: list[BatchServer], tmp_path: Path,
                                     ledger_path: Path) -> None:
    a = hosts[0]
    a.replies["robots"] = Reply(200, {"Content-Type": "text/plain"},
                                b"User-agent: fetchledger\nDisallow: /\n")
    urls = write(tmp_path / "urls.txt", a.url("/gen/1"))
    denied = run_cli("batch", "--allow-private", str(urls))
    assert denied.exit_code == 3
    assert "robots_denied: robots.txt of 127.0.0.1 disallows" in denied.stderr
    assert rows(ledger_path, "SELECT status FROM attempt") == [("robots_denied",)]
    allowed = run_cli("batch", "--allow-private", "--no-robots", str(urls))
    assert allowed.exit_code == 0
    assert table_counts(ledger_path)["source"] == 1


def test_the_address_policy_applies(run_cli: Any, hosts: list[BatchServer], tmp_path: Path,
                                    ledger_path: Path) -> None:
    urls = write(tmp_path / "urls.txt", hosts[0].url("/gen/1"))
    result = run_cli("batch", str(urls))
    assert result.exit_code == 3
    assert "blocked_address" in result.stderr
    assert hosts[0].hits == []
    assert rows(ledger_path, "SELECT status FROM attempt") == [("blocked_address",)]


@pytest.mark.parametrize(("content", "message"), [
    (b"# only a comment\n\n", "no URLs in"),
    (b"", "no URLs in"),
    (b"\xff\xfehttp://x\n", "is not UTF-8 text"),
])
def test_unusable_input_files_are_bad_input(run_cli: Any, tmp_path: Path, ledger_path: Path,
                                            content: bytes, message: str) -> None:
    path = tmp_path / "urls.txt"
    path.write_bytes(content)
    result = run_cli("batch", str(path))
    assert result.exit_code == 2
    assert message in result.stderr
    assert not ledger_exists(ledger_path)


def test_usage_errors_exit_2(run_cli: Any, tmp_path: Path, ledger_path: Path) -> None:
    assert run_cli("batch", str(tmp_path / "missing.txt")).exit_code == 2
    urls = write(tmp_path / "urls.txt", "https://example.org/")
    for option in ("--concurrency", "--per-host", "-k"):
        result = run_cli("batch", option, "0", str(urls))
        assert result.exit_code == 2, option
    assert not ledger_exists(ledger_path)


def test_help_names_the_input_forms(run_cli: Any) -> None:
    result = run_cli("batch", "--help")
    assert result.exit_code == 0
    for words in ("FILE|-", '{"url"', "--per-host", "--refresh", "--no-robots", "Retry-After"):
        assert words in result.stdout


def test_progress_bar_only_on_a_terminal(run_cli: Any, hosts: list[BatchServer],
                                         tmp_path: Path, ledger_path: Path) -> None:
    urls = write(tmp_path / "urls.txt", *(hosts[0].url(f"/gen/{n}") for n in range(3)))
    piped = run_cli("batch", "--allow-private", str(urls))
    assert "\x1b" not in piped.stderr and "━" not in piped.stderr
    with Ledger(ledger_path) as emptied:
        emptied.reset()
    import pty

    controller, terminal = pty.openpty()
    child = subprocess.Popen([sys.executable, "-m", "fetchledger", "batch", "--allow-private",
                              str(urls)], stdout=subprocess.PIPE, stderr=terminal,
                             env={**os.environ, "COLUMNS": "100", "TERM": "xterm"})
    os.close(terminal)
    stdout, _ = child.communicate(timeout=60)
    shown = b""
    with contextlib.suppress(OSError):  # EIO once the child has closed the terminal
        while chunk := os.read(controller, 65536):
            shown += chunk
    os.close(controller)
    assert child.returncode == 0
    assert "━".encode() in shown and re.search(rb"\d/3", shown)  # the bar, on the terminal
    assert b"fetchledger: batch: 3 inputs: 3 ok" in shown
    assert b"\x1b" not in stdout and len(stdout.decode().splitlines()) == 12


# --- kill -9 and resume ---------------------------------------------------------------------


def descendants(pid: int) -> list[int]:
    found, queue = [], [pid]
    while queue:
        children = children_of(queue.pop())
        found.extend(children)
        queue.extend(children)
    return found


def test_kill_9_mid_batch_then_resume(run_cli: Any, hosts: list[BatchServer], tmp_path: Path,
                                      ledger_path: Path) -> None:
    urls = [server.url(f"/gen/{h * 100 + i}?delay=0.05") for h, server in enumerate(hosts)
            for i in range(20)]
    listing = write(tmp_path / "urls.txt", *urls)
    batch = subprocess.Popen(
        [sys.executable, "-m", "fetchledger", "batch", "--allow-private", "--concurrency", "3",
         str(listing)], env={**os.environ, "FETCHLEDGER_LEDGER": str(ledger_path)},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    registered = 0
    while registered < 8 and time.monotonic() < deadline and batch.poll() is None:
        time.sleep(0.02)
        if ledger_exists(ledger_path):
            with contextlib.suppress(sqlite3.OperationalError):  # not created yet
                registered = int(rows(ledger_path, "SELECT count(*) FROM source")[0][0])  # type: ignore[call-overload]
    workers = descendants(batch.pid)
    assert batch.poll() is None, batch.stderr.read() if batch.stderr else ""
    os.kill(batch.pid, signal.SIGKILL)
    batch.wait()
    assert batch.stderr is not None
    batch.stderr.close()
    assert workers, "the batch had no worker processes to orphan"
    deadline = time.monotonic() + 5
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [pid for pid in workers if alive(pid)] == [], "orphans survived the kill"

    with Ledger(ledger_path) as after_kill:
        assert after_kill.integrity_check() == "ok"
    ids = [r[0] for r in rows(ledger_path, "SELECT id FROM source ORDER BY id")]
    before = len(ids)
    assert 8 <= before < len(urls)
    assert ids == list(range(1, before + 1))

    resumed = run_cli("batch", "--allow-private", str(listing))
    assert resumed.exit_code == 0, resumed.stderr
    count, statuses = summary_of(resumed.stderr)
    assert count == len(urls)
    assert statuses == (f"{len(urls) - before} ok ({len(urls) - before} new sources), "
                        f"{before} skipped")
    stored = rows(ledger_path, "SELECT id, locator FROM source ORDER BY id")
    assert [r[0] for r in stored] == list(range(1, len(urls) + 1))
    assert sorted(r[1] for r in stored) == sorted(urls)  # every input once, no duplicate
    assert rows(ledger_path, "SELECT count(*) FROM version") == [(len(urls),)]
