"""Issue 13, clean errors: bounded numbers, one JSON error shape, read-only verbs.

- Every numeric option (snippet counts, ids, timeouts, concurrency) is bounded:
  out of range, absurd, `inf` or `nan` is exit 2 with one clear line.
- Under `--json` every failure of every verb prints one JSON object on stdout:
  `{"error": {"status", "message", "hint"}}` (with `"input"` when one input
  failed); per-input verbs keep their §5 array.
- Read-only verbs (list, show, quotes, check, render, export) never create a
  ledger or its folders ("no ledger at PATH", exit 4), never wait for the write
  lock, and work on a read-only mounted ledger.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from fetchledger import BadInput, Ledger
from test_faults import FETCHLEDGER, in_mount_namespace

from conftest import needs_mount_namespace, rows

HUGE = "99999999999999999999999"


@pytest.fixture
def filled(tmp_path: Path, ledger_path: Path) -> Path:
    note = tmp_path / "note.txt"
    note.write_text("At sea level, water boils at 100 degrees. Ice melts at zero degrees.\n")
    with Ledger(ledger_path) as ledger:
        ledger.read(note)
    return note


@pytest.mark.parametrize("args", [
    ["quotes", "water", "-k", HUGE], ["quotes", "water", "-k", "0"],
    ["quotes", "water", "-k", "1001"], ["quotes", "water", "--source", HUGE],
    ["quotes", "water", "--source", "-3"], ["show", HUGE], ["show", "-1"], ["quote", HUGE, "x"],
    ["read", "-k", HUGE, "note.txt"], ["fetch", "-k", "100000", "https://example.org/"],
    ["run", "--timeout", "inf", "--", "true"], ["run", "--timeout", "nan", "--", "true"],
    ["run", "--timeout", "1e300", "--", "true"], ["run", "--timeout", "86401", "--", "true"],
    ["run", "--timeout", "0", "--", "true"], ["batch", "--concurrency", HUGE, "-"],
    ["batch", "--concurrency", "5000", "-"], ["batch", "--per-host", "0", "-"],
    ["batch", "--per-host", "100000", "-"], ["curl", "-m", "inf", "https://example.org/"],
    ["curl", "--max-time", "1e400", "https://example.org/"],
    ["curl", "--snippets", HUGE, "https://example.org/"],
    ["read", "--pages", f"{HUGE}-", "note.txt"],
    # issue 13, third pass: numbers Python's int() reads that are not ASCII digits
    ["show", "1_0"], ["show", "\uff11"], ["show", " 1"], ["quotes", "water", "-k", "\u0661\u0662"],
    ["quotes", "water", "-k", "1_0"], ["quotes", "water", "--source", "\u0661"],
    ["run", "--timeout", "1_0", "--", "true"], ["run", "--timeout", "\u0661", "--", "true"],
    ["read", "--pages", "\u0661", "note.txt"], ["show", "1", "--passages", "\u0663"],
    ["refresh", "\uff13"], ["batch", "--concurrency", "\u0664", "-"],
])
def test_numbers_out_of_range_are_exit_2_with_one_line(run_cli: Any, filled: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       args: list[str]) -> None:
    monkeypatch.chdir(filled.parent)
    result = run_cli(*args, input="https://example.org/\n")
    assert result.exit_code == 2, (args, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("fetchledger: error: ") and len(lines) <= 2, lines


def test_the_library_bounds_its_numbers_too(ledger_path: Path, filled: Path) -> None:
    with Ledger(ledger_path) as ledger:
        for call in (lambda: ledger.quotes("water", k=10**30),
                     lambda: ledger.read(filled, k=10**6),
                     lambda: ledger.run(["true"], timeout=float("inf")),
                     lambda: ledger.run(["true"], timeout=float("nan")),
                     lambda: ledger.quotes("water", source=10**30)):
            with pytest.raises(BadInput):  # exit 2
                call()


def _error_object(stdout: str) -> dict[str, Any]:
    data = json.loads(stdout)
    assert isinstance(data, dict) and set(data) <= {"input", "error"}, data
    error = data["error"]
    assert set(error) >= {"status", "message", "hint"}, error
    assert isinstance(error["status"], str) and error["message"]
    return data


@pytest.mark.parametrize(("args", "code", "status"), [
    (["--json", "show", "99"], 2, "unknown_source"),
    (["--json", "quote", "99", "boils"], 2, "unknown_source"),
    (["--json", "quote", "1", "water freezes"], 1, "not_verbatim"),
    (["--json", "check", "missing.md"], 2, "invalid_path"),
    (["--json", "render", "missing.md"], 2, "invalid_path"),
    (["--json", "reset"], 2, "invalid_argument"),
    (["--json", "export", "--format", "pack", "-o", "full"], 2, "invalid_argument"),
    (["--json", "quotes", "water", "-k", "0"], 2, "invalid_argument"),
    (["--json", "no-such-verb"], 2, "invalid_argument"),
    (["--json", "show"], 2, "invalid_argument"),
    (["show", "abc", "--json"], 2, "invalid_argument"),
    (["--json", "--ledger", "notes.txt", "list"], 4, "ledger_error"),
    (["--json", "--ledger", "nowhere/l.db", "list"], 4, "no_ledger"),
])
def test_every_failure_under_json_is_one_error_object(
        run_cli: Any, filled: Path, monkeypatch: pytest.MonkeyPatch, args: list[str],
        code: int, status: str) -> None:
    monkeypatch.chdir(filled.parent)
    (filled.parent / "full").mkdir()
    (filled.parent / "full" / "x").write_text("x")
    (filled.parent / "notes.txt").write_text("not a database, only some words\n" * 20)
    result = run_cli(*args)
    assert result.exit_code == code, (result.stdout, result.stderr)
    data = _error_object(result.stdout)
    assert data["error"]["status"] == status, data
    assert result.stderr.startswith("fetchledger: error: ")  # stderr keeps its line


def test_per_input_verbs_keep_their_array(run_cli: Any, filled: Path) -> None:
    result = run_cli("--json", "read", str(filled), str(filled.parent / "missing.txt"))
    assert result.exit_code == 2
    first, second = json.loads(result.stdout)
    assert first["source"]["id"] == 1 and second["error"]["status"] == "invalid_path"
    timed = run_cli("--json", "run", "--timeout", "inf", "--", "true")
    assert timed.exit_code == 2
    assert json.loads(timed.stdout)[0]["error"]["status"] == "invalid_argument"


READ_ONLY = [["list"], ["list", "--failed"], ["show", "1"], ["quotes", "water"],
             ["check", "draft.md"], ["render", "draft.md"],
             ["export", "--format", "csl-json", "-o", "out.json"]]


@pytest.mark.parametrize("args", READ_ONLY)
def test_read_only_verbs_never_create_a_ledger(tmp_path: Path, args: list[str],
                                               monkeypatch: pytest.MonkeyPatch,
                                               run_cli: Any) -> None:
    monkeypatch.delenv("FETCHLEDGER_LEDGER")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "draft.md").write_text("Water boils at 100 degrees.[1]\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    result = run_cli(*args)
    assert result.exit_code == 4, result.stderr
    assert result.stderr.startswith(f"fetchledger: error: no ledger at {tmp_path}")
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    given = tmp_path / "sub" / "l.db"
    named = run_cli("--ledger", str(given), *args)
    assert named.exit_code == 4 and not given.parent.exists()
    assert json.loads(run_cli("--json", "--ledger", str(given), *args).stdout)[
        "error"]["status"] == "no_ledger"


@pytest.mark.parametrize("args", READ_ONLY)
def test_read_only_verbs_never_wait_for_the_write_lock(
        filled: Path, ledger_path: Path, args: list[str], tmp_path: Path) -> None:
    (tmp_path / "draft.md").write_text("Water boils at 100 degrees.[1]\n")
    holder = sqlite3.connect(ledger_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # a writer holds the lock for the whole call
    try:
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "fetchledger", "--ledger",
                               str(ledger_path), *args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=60, check=False)
        took = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert done.returncode == 0, done.stderr
    assert took < 20, took  # the busy timeout is 60 s: it did not wait for the lock
    if args[0] == "quotes":
        assert "boils" in done.stdout and "not recorded" in done.stderr


@needs_mount_namespace
def test_read_only_verbs_work_on_a_read_only_mounted_ledger(tmp_path: Path,
                                                            filled: Path) -> None:
    folder = tmp_path / "ro"
    with Ledger(folder / "l.db") as ledger:
        ledger.read(filled)
    (tmp_path / "draft.md").write_text("Water boils at 100 degrees.[1]\n")
    before = (folder / "l.db").read_bytes()
    calls = "\n".join(
        f"{FETCHLEDGER} --ledger {folder / 'l.db'} {' '.join(args)} > /dev/null;"
        f" echo \"{args[0]}=$?\"" for args in READ_ONLY)
    done = in_mount_namespace(f"""
        cd {tmp_path}
        mount --bind {folder} {folder} && mount -o remount,bind,ro {folder} || exit 90
        {calls}
    """)
    for args in READ_ONLY:
        assert f"{args[0]}=0" in done.stdout, (args, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert (folder / "l.db").read_bytes() == before


def test_a_batch_line_with_an_absurd_k_is_bad_input_for_that_line(run_cli: Any,
                                                                  filled: Path) -> None:
    result = run_cli("--json", "batch", "-", input=f'{{"url": "https://example.org/", '
                                                   f'"k": {HUGE}}}\n')
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    line = json.loads(result.stdout.splitlines()[0])
    assert line["error"]["status"] == "invalid_argument" and "1,000" in line["error"]["message"]


# --- issue 13, third pass: outputs that would destroy the ledger or a special file, outputs
# that cannot be written, a PostgreSQL URL that does not parse, a log read-only media hold --


def _ledger_sound(ledger_path: Path) -> None:
    db = sqlite3.connect(ledger_path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("SELECT count(*) FROM source").fetchone() == (1,)
    finally:
        db.close()


def _writers(target: str) -> list[list[str]]:
    return [["export", "--format", form, "-o", target] for form in ("csl-json", "bibtex", "warc")] \
        + [["render", "draft.md", "-o", target], ["render", "draft.md", "--style", "bibtex",
                                                  "-o", target]]


@pytest.mark.sqlite_only
@pytest.mark.parametrize("suffix", ["", "-wal", "-shm", "-journal", " (a link to it)"])
def test_an_output_never_replaces_the_ledger(run_cli: Any, filled: Path, ledger_path: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             suffix: str) -> None:
    monkeypatch.chdir(filled.parent)
    (filled.parent / "draft.md").write_text("Water boils at 100 degrees.[1]\n")
    target = Path(f"{ledger_path}{suffix}")
    if suffix.startswith(" "):
        target = filled.parent / "link.db"
        target.symlink_to(ledger_path)
    for args in (*_writers(str(target)), ["copy", str(ledger_path), str(target)]):
        result = run_cli("--json", *args)
        assert result.exit_code == 2, (args, result.stdout, result.stderr)
        assert _error_object(result.stdout)["error"]["status"] in ("invalid_path",
                                                                  "invalid_argument")
        assert "ledger" in result.stderr.splitlines()[0], result.stderr
        _ledger_sound(ledger_path)


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_an_output_never_replaces_a_special_file(run_cli: Any, filled: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 kind: str) -> None:
    import os
    import stat

    monkeypatch.chdir(filled.parent)
    (filled.parent / "draft.md").write_text("Water boils at 100 degrees.[1]\n")
    target = filled.parent / f"out.{kind}"
    if kind == "fifo":
        os.mkfifo(target)
    else:  # a null device of our own: never a real one of the machine's /dev
        try:
            os.mknod(target, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        except PermissionError:
            pytest.skip("making a device node needs root")
    for args in _writers(str(target)):
        result = run_cli("--json", *args)
        assert result.exit_code == 2, (args, result.stdout, result.stderr)
        assert _error_object(result.stdout)["error"]["status"] == "invalid_path"
        assert "not a regular file" in result.stderr
        mode = target.stat().st_mode
        assert stat.S_ISFIFO(mode) if kind == "fifo" else stat.S_ISCHR(mode)


@pytest.mark.parametrize("target", ["/proc/fetchledger-out", "/sys/fetchledger-out"])
def test_an_output_that_cannot_be_written_is_one_clean_line(run_cli: Any, filled: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            target: str) -> None:
    monkeypatch.chdir(filled.parent)
    (filled.parent / "draft.md").write_text("Water boils at 100 degrees.[1]\n")
    for args in _writers(target):
        result = run_cli("--json", *args)
        assert result.exit_code == 2, (args, result.stdout, result.stderr)
        assert _error_object(result.stdout)["error"]["status"] == "invalid_path"
        lines = result.stderr.strip().splitlines()
        assert lines[0].startswith(f"fetchledger: error: cannot write {target}"), lines
        assert len(lines) <= 2 and "Traceback" not in result.stderr


@pytest.mark.parametrize("url", ["postgres://u:%zz@h/x", "postgresql://[::1", "postgresql://h:x/d",
                                 "postgresql://u@h/d?sslmode=bogus&connect_timeout=nan"])
def test_a_postgresql_url_that_does_not_parse_is_exit_4_in_one_line(run_cli: Any,
                                                                   url: str) -> None:
    for verb in (["list"], ["fetch", "https://example.org/"]):
        result = run_cli("--json", "--ledger", url, *verb)
        assert result.exit_code == 4, (url, verb, result.stdout, result.stderr)
        assert _error_object(result.stdout)["error"]["status"] == "ledger_error"
        assert result.stderr.startswith("fetchledger: error: ")
        assert "Traceback" not in result.stderr and "%zz" not in result.stderr


WAL_ONLY = """
import os, sqlite3, subprocess, sys
holder = sqlite3.connect(sys.argv[1])  # keeps the file open: nothing checkpoints the log
holder.execute("PRAGMA wal_autocheckpoint = 0")
holder.execute("SELECT count(*) FROM source").fetchone()
subprocess.run([sys.executable, "-m", "fetchledger", "--ledger", sys.argv[1], "read",
                sys.argv[2]], check=True, capture_output=True)
os._exit(0)  # dies with the log still holding the second source
"""


@needs_mount_namespace
@pytest.mark.parametrize("index", ["kept", "lost"])
def test_read_only_media_show_what_the_write_ahead_log_holds(tmp_path: Path, filled: Path,
                                                              index: str) -> None:
    """A ledger copied to read-only media with its -wal (and with or without its -shm:
    the log's index, which read-only media cannot make): every committed source is
    there, none silently missing."""
    folder = tmp_path / "ro"
    with Ledger(folder / "l.db") as ledger:
        ledger.read(filled)
    second = tmp_path / "second.txt"
    second.write_text("The moon was full over the harbour that night.\n")
    subprocess.run([sys.executable, "-c", WAL_ONLY, str(folder / "l.db"), str(second)],
                   check=True)
    assert (folder / "l.db-wal").stat().st_size > 0
    if index == "lost":
        (folder / "l.db-shm").unlink()
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    calls = "\n".join(
        f"{FETCHLEDGER} --ledger {folder / 'l.db'} {args}; echo \"rc=$?\""
        for args in ("--json list", "show 2", "quotes moon"))
    done = in_mount_namespace(f"""
        cd {tmp_path}
        mount --bind {folder} {folder} && mount -o remount,bind,ro {folder} || exit 90
        {calls}
    """)
    assert done.stdout.count("rc=0") == 3, (done.stdout, done.stderr)
    assert '"id": 2' in done.stdout and "second.txt" in done.stdout, done.stdout
    assert "moon was full" in done.stdout
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


@pytest.mark.parametrize("args", [["check", "/dev/zero"], ["render", "/dev/zero"],
                                  ["export", "--format", "csl-json", "--cited-by", "/dev/zero",
                                   "-o", "out.json"],
                                  ["batch", "/dev/zero"], ["ingest", "/dev/zero"]])
def test_an_endless_input_is_refused_at_its_cap(run_cli: Any, filled: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                args: list[str]) -> None:
    """A draft or an input list that never ends (a device: /dev/zero) was read for ever,
    its memory growing. A device is now refused before it is opened (session 11: every
    named input is a regular file, `fetchledger.inputs`); a regular file stops at the
    cap (64 MiB of draft, 256 MiB of inputs), exit 2 (below)."""
    monkeypatch.chdir(filled.parent)
    started = time.monotonic()
    result = run_cli("--json", *args)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert "not a regular file" in _error_object(result.stdout)["error"]["message"]
    assert time.monotonic() - started < 30
    assert not (filled.parent / "out.json").exists()


@pytest.mark.parametrize("verb", [["check"], ["render"],
                                  ["export", "--format", "csl-json", "-o", "out.json",
                                   "--cited-by"]])
def test_a_draft_over_its_cap_is_refused(run_cli: Any, filled: Path,
                                         monkeypatch: pytest.MonkeyPatch,
                                         verb: list[str]) -> None:
    monkeypatch.chdir(filled.parent)
    huge = filled.parent / "huge.md"
    with huge.open("wb") as out:  # sparse: one byte over 64 MiB of zeros
        out.truncate((64 << 20) + 1)
    result = run_cli("--json", *verb, str(huge))
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert "too large" in _error_object(result.stdout)["error"]["message"]
    assert not (filled.parent / "out.json").exists()


def test_a_pack_that_cannot_be_written_is_one_clean_line(run_cli: Any, filled: Path) -> None:
    result = run_cli("--json", "export", "--format", "pack", "-o", "/proc/fetchledger-pack")
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert _error_object(result.stdout)["error"]["status"] == "invalid_path"
    assert result.stderr.startswith("fetchledger: error: cannot write /proc/fetchledger-pack")


def test_mcp_numbers_are_json_integers_only(filled: Path, ledger_path: Path,
                                            tmp_path: Path) -> None:
    """A tool's id, k, start or limit is a JSON integer: the string "1_0" was read as 10 and
    `true` as id 1 (pydantic's lax coercion); now each is a tool error naming the field."""
    from mcp_session import McpSession, text_of

    session = McpSession(["mcp", "--ledger", str(ledger_path)], cwd=tmp_path,
                         workdir=tmp_path / "logs")
    try:
        for name, arguments in (("get_source", {"id": True}), ("get_source", {"id": "1"}),
                                ("search_quotes", {"query": "water", "k": "1_0"}),
                                ("search_quotes", {"query": "water", "k": 2.5}),
                                ("search_quotes", {"query": "water", "source": "1"}),
                                ("read_source", {"id": 1, "start": "1"}),
                                ("refresh", {"ids": [True]})):
            result = session.call(name, **arguments)
            assert result.is_error, (name, arguments, text_of(result))
            assert text_of(result).startswith("invalid_argument: "), text_of(result)
        assert not session.call("get_source", id=1).is_error
    finally:
        session.close()


# --- timeouts below the documented minimum, pages past the end ------------------------------

TINY = ["1e-300", "1e-9", "0.000001", "0.0099", "5e-324"]


@pytest.mark.parametrize("args", [
    *(["run", "--timeout", tiny, "--", "true"] for tiny in TINY),
    *(["curl", "-m", tiny, "https://example.org/"] for tiny in TINY[:2]),
    *(["curl", "--connect-timeout", tiny, "https://example.org/"] for tiny in TINY[:2]),
    ["curl", "--max-time", "1e-300", "https://example.org/"],
])
def test_a_timeout_below_the_minimum_is_exit_2_and_records_nothing(
        run_cli: Any, filled: Path, ledger_path: Path, monkeypatch: pytest.MonkeyPatch,
        args: list[str]) -> None:
    monkeypatch.chdir(filled.parent)
    before = rows(ledger_path, "SELECT count(*) FROM attempt"), rows(
        ledger_path, "SELECT count(*) FROM source")
    result = run_cli("--ledger", str(ledger_path), *args)
    assert result.exit_code == 2, (args, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("fetchledger: error: ") and len(lines) <= 2, lines
    assert "0.01" in lines[0], lines  # the documented minimum is named
    assert (rows(ledger_path, "SELECT count(*) FROM attempt"), rows(
        ledger_path, "SELECT count(*) FROM source")) == before
    timed = run_cli("--ledger", str(ledger_path), "--json", *args)
    printed = json.loads(timed.stdout)
    error = (printed[0] if isinstance(printed, list) else printed)["error"]
    assert timed.exit_code == 2 and error["status"] == "invalid_argument", printed


def test_the_minimum_timeout_itself_is_accepted(run_cli: Any, ledger_path: Path) -> None:
    result = run_cli("--ledger", str(ledger_path), "run", "--timeout", "0.01", "--",
                     "sh", "-c", "exit 0")
    assert result.exit_code in (0, 3), result.stderr  # it ran, or it timed out: not bad input
    assert run_cli("--ledger", str(ledger_path), "run", "--timeout", "2", "--",
                   "echo", "fine").exit_code == 0


def test_the_library_refuses_tiny_timeouts_too(ledger_path: Path) -> None:
    with Ledger(ledger_path) as ledger:
        for call in (lambda: ledger.run(["true"], timeout=1e-300),
                     lambda: ledger.run(["true"], timeout=0.001),
                     lambda: ledger.http_request("GET", "https://example.org/", timeout=1e-9)):
            with pytest.raises(BadInput, match=r"from 0\.01 to"):
                call()
        assert ledger.attempts() == [] and ledger.sources() == []


def test_mcp_run_command_refuses_a_tiny_timeout(ledger_path: Path, tmp_path: Path) -> None:
    from mcp_session import McpSession, text_of

    session = McpSession(["mcp", "--ledger", str(ledger_path), "--allow-command", "echo"],
                         cwd=tmp_path, workdir=tmp_path / "logs")
    try:
        for timeout in (1e-300, 1e-9, 0.001, 0.0):
            result = session.call("run_command", argv=["echo", "x"], timeout=timeout)
            assert result.is_error, (timeout, text_of(result))
            assert text_of(result).startswith("invalid_argument: "), text_of(result)
        assert not session.call("run_command", argv=["echo", "x"], timeout=5).is_error
    finally:
        session.close()
    # the one good call's source and its `ok` attempt; nothing of the refused ones
    assert rows(ledger_path, "SELECT status FROM attempt") == [("ok",)]
    assert rows(ledger_path, "SELECT count(*) FROM source") == [(1,)]
