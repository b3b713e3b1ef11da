"""Command output as a citable source: `run` and `read -`."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path

import pytest

from fetchledger import (
    CommandFailed,
    EmptyContent,
    InvalidArgument,
    InvalidPath,
    Ledger,
    Limits,
    RetrievalTimeout,
    TooLarge,
    UnsupportedType,
)
from procs import wait_gone

from conftest import rows, table_counts

PY = sys.executable


def py(code: str) -> list[str]:
    return [PY, "-c", code]


# --- registering output ---------------------------------------------------------------


def test_output_registers_with_argv_cwd_exit_code_and_duration(
    tmp_path: Path, ledger: Ledger, ledger_path: Path
) -> None:
    argv = py("print('Water boils at 100 degrees at sea level.'); print('Second line here.')")
    got = ledger.run(argv, cwd=tmp_path)
    assert got.source.kind == "command" and got.source.id == 1
    assert got.source.locator == f"{shlex.join(argv)} (in {tmp_path.resolve()})"
    assert got.source.header() == f"[1] {shlex.join(argv)} (exit 0)"
    assert [s.quote for s in got.snippets] == [
        "Water boils at 100 degrees at sea level.", "Second line here."]
    meta = json.loads(rows(ledger_path, "SELECT meta FROM version")[0][0])  # type: ignore[arg-type]
    assert meta["argv"] == argv and meta["cwd"] == str(tmp_path.resolve())
    assert meta["exit_code"] == 0 and isinstance(meta["duration"], float)
    assert rows(ledger_path, "SELECT kind, status FROM attempt") == [("command", "ok")]
    assert ledger.text(1) == "Water boils at 100 degrees at sea level.\nSecond line here."


def test_same_command_same_id_changed_output_new_version(tmp_path: Path, ledger: Ledger) -> None:
    (tmp_path / "state.txt").write_text("first state of the file")
    argv = py("print(open('state.txt').read())")
    first = ledger.run(argv, cwd=tmp_path)
    again = ledger.run(argv, cwd=tmp_path)
    assert (again.source.id, again.source.versions, again.new_version) == (1, 1, False)
    (tmp_path / "state.txt").write_text("second state of the file")
    changed = ledger.run(argv, cwd=tmp_path)
    assert (changed.source.id, changed.source.versions, changed.new_version) == (1, 2, True)
    assert first.snippets[0].quote == "first state of the file"
    assert ledger.text(1) == "second state of the file"
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    (elsewhere / "state.txt").write_text("another folder")
    assert ledger.run(argv, cwd=elsewhere).source.id == 2  # the folder is part of the identity


def test_non_zero_exit_still_registers_with_its_status(tmp_path: Path, ledger: Ledger) -> None:
    got = ledger.run(py("import sys; print('partial results before failing'); "
                        "print('boom', file=sys.stderr); sys.exit(3)"))
    assert got.source.header().endswith("(exit 3)")
    assert got.warnings[0] == 'the command exited with status 3; stderr: "boom"'


def test_require_success_turns_a_failure_into_command_failed(
    ledger: Ledger, ledger_path: Path
) -> None:
    with pytest.raises(CommandFailed, match="exited with status 3"):
        ledger.run(py("print('output'); raise SystemExit(3)"), require_success=True)
    assert table_counts(ledger_path)["source"] == 0
    assert ledger.attempts(failed=True)[0].status == "command_failed"
    assert ledger.run(py("print('fine')"), require_success=True).source.id == 1


def test_missing_command_is_command_failed_without_an_id(ledger: Ledger, ledger_path) -> None:
    with pytest.raises(CommandFailed, match="command not found: no-such-command-xyz"):
        ledger.run(["no-such-command-xyz", "--help"])
    with pytest.raises(CommandFailed, match="could not be run"):
        ledger.run(["no-such-command-xyz"], shell=True)  # the shell's exit status 127
    assert table_counts(ledger_path)["source"] == 0
    assert [a.status for a in ledger.attempts()] == ["command_failed", "command_failed"]


def test_timeout_kills_the_whole_process_group(tmp_path: Path, ledger: Ledger) -> None:
    pidfile = tmp_path / "grandchild.pid"
    script = f"sleep 30 & echo $! > {pidfile}; wait"
    started = time.monotonic()
    with pytest.raises(RetrievalTimeout, match=r"timeout of 0\.5 s"):
        ledger.run(["sh", "-c", script], timeout=0.5)
    assert time.monotonic() - started < 3
    grandchild = int(pidfile.read_text())
    assert wait_gone(grandchild), "the grandchild outlived the timeout"
    assert ledger.attempts(failed=True)[0].status == "timeout"


def test_background_holders_of_the_output_are_stopped(tmp_path: Path, ledger: Ledger) -> None:
    pidfile = tmp_path / "bg.pid"
    started = time.monotonic()
    got = ledger.run(["sh", "-c", f"sleep 30 & echo $! > {pidfile}; echo started it"])
    assert time.monotonic() - started < 3
    assert got.snippets[0].quote == "started it"
    assert any("background processes" in w for w in got.warnings)
    assert wait_gone(int(pidfile.read_text()))


def test_output_over_the_cap_is_too_large(ledger_path: Path) -> None:
    with Ledger(ledger_path, limits=Limits(max_command_output=1000)) as ledger:
        with pytest.raises(TooLarge, match="cap of 1,000 bytes"):
            ledger.run(py("import sys\nfor i in range(10**6): sys.stdout.write('x' * 100)"))
        assert ledger.attempts(failed=True)[0].status == "too_large"
        assert table_counts(ledger_path)["source"] == 0


def test_killed_by_a_signal_is_shown(ledger: Ledger) -> None:
    got = ledger.run(["sh", "-c", "echo last words before the end; kill -9 $$"])
    assert got.source.header().endswith("(killed by SIGKILL)")


# --- decoding and lines --------------------------------------------------------------------


def test_latin1_output_is_decoded_with_a_warning(ledger: Ledger) -> None:
    got = ledger.run(py(r"import sys; sys.stdout.buffer.write('Le café servait une crème "
                        r"brûlée très appréciée des étudiants.\n'.encode('latin-1'))"))
    assert ledger.text(got.source.id) == ("Le café servait une crème brûlée très appréciée "
                                          "des étudiants.")
    assert any("not UTF-8" in w for w in got.warnings)


def test_stray_bytes_in_utf8_output_become_replacement_characters(ledger: Ledger) -> None:
    got = ledger.run(py(r"import sys; sys.stdout.buffer.write('naïve café '.encode() + "
                        r"b'\xff' + ' déjà vu\n'.encode())"))
    assert ledger.text(got.source.id) == "naïve café \ufffd déjà vu"
    assert any("1 undecodable byte became U+FFFD" in w for w in got.warnings)


def test_binary_output_is_unsupported(ledger: Ledger) -> None:
    with pytest.raises(UnsupportedType, match="binary"):
        ledger.run(py(r"import sys; sys.stdout.buffer.write(b'\x00\x01\x02' * 100)"))


def test_terminal_codes_progress_bars_and_blank_lines(ledger: Ledger) -> None:
    code = (r"print('\x1b[1;32mPASSED\x1b[0m all tests'); print(); "
            r"print('progress 10%\rprogress 50%\rprogress 100%'); "
            r"print('\x1b]0;window title\x07b\bbo\bol\bld text'); print('  indented  ')")
    got = ledger.run(py(code))
    assert ledger.text(got.source.id).split("\n") == [
        "PASSED all tests", "progress 100%", "bold text", "indented"]


def test_nothing_printed_is_empty_content_unless_stderr_is_captured(ledger: Ledger) -> None:
    argv = py("import sys; print('only an error message here', file=sys.stderr); sys.exit(2)")
    with pytest.raises(EmptyContent, match="printed nothing") as caught:
        ledger.run(argv)
    assert caught.value.hint and "--stderr" in caught.value.hint
    got = ledger.run(argv, stderr=True)
    assert got.snippets[0].quote == "only an error message here"


def test_stderr_is_merged_in_order(ledger: Ledger) -> None:
    got = ledger.run(py("import sys\nfor i in range(3):\n print('out', i, flush=True)\n "
                        "print('err', i, file=sys.stderr, flush=True)"), stderr=True)
    assert ledger.text(got.source.id).split("\n") == [
        "out 0", "err 0", "out 1", "err 1", "out 2", "err 2"]


# --- shell, identity, secrets -------------------------------------------------------------


def test_shell_mode_is_the_same_source_as_sh_dash_c(tmp_path: Path, ledger: Ledger) -> None:
    via_shell = ledger.run(["echo alpha beta | tr a-z A-Z"], shell=True, cwd=tmp_path)
    assert via_shell.snippets[0].quote == "ALPHA BETA"
    assert via_shell.source.header() == "[1] echo alpha beta | tr a-z A-Z (exit 0)"
    direct = ledger.run(["sh", "-c", "echo alpha beta | tr a-z A-Z"], cwd=tmp_path)
    assert direct.source.id == 1


def test_no_shell_by_default(ledger: Ledger) -> None:
    got = ledger.run(["echo", "$HOME", "|", "wc"])
    assert got.snippets[0].quote == "$HOME | wc"


def test_secrets_never_reach_the_ledger(ledger: Ledger, ledger_path: Path) -> None:
    secret = "tok-9f8e7d6c5b4a"
    argv = py(f"import sys; print('authenticated with {secret}'); print('done')")
    argv += [f"--token={secret}", "-H", f"Authorization: Bearer {secret}x",
             f"https://user:{secret}@example.org/?api_key={secret}"]
    got = ledger.run(argv)
    assert secret not in got.source.locator
    assert "--token=REDACTED" in got.source.locator
    assert "'Authorization: REDACTED'" in got.source.locator
    assert ledger.text(got.source.id) == "authenticated with REDACTED\ndone"
    with pytest.raises(CommandFailed):  # the failed attempt's locator is redacted too
        ledger.run(["no-such-command", f"--password={secret}"])
    with sqlite_dump(ledger_path) as dump:
        assert secret not in dump
    # only the secret differs: two sources (identity keeps a keyed hash of each
    # value, DESIGN §4), shown alike; the same secret again: the same source
    other = ledger.run([a.replace(secret, "tok-0000000000") for a in argv]).source
    assert other.id != got.source.id and other.locator == got.source.locator
    assert ledger.run(argv).source.id == got.source.id


class sqlite_dump:
    """Every value in the ledger file as one string, and the raw file bytes."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> str:
        import sqlite3
        import zlib

        with sqlite3.connect(self.path) as db:
            parts = [" ".join(db.iterdump())]
            parts += [zlib.decompress(r[0]).decode("utf-8", "replace")
                      for r in db.execute("SELECT raw FROM version") if r[0]]
        return "\n".join(parts)

    def __exit__(self, *exc: object) -> None:
        return None


def test_bad_input_records_nothing(tmp_path: Path, ledger: Ledger, ledger_path: Path) -> None:
    with pytest.raises(InvalidPath):
        ledger.run(["echo", "hi"], cwd=tmp_path / "missing")
    with pytest.raises(InvalidArgument):
        ledger.run([])
    with pytest.raises(InvalidArgument):
        ledger.run(["echo", "hi"], timeout=0)
    assert table_counts(ledger_path) == {t: 0 for t in table_counts(ledger_path)}


# --- piped text: read - --label --------------------------------------------------------------


def test_piped_text_is_a_command_source_named_by_its_label(
    tmp_path: Path, ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    got = ledger.read_piped(b"commit 1: fix the boiling point table.\n", label="git log -1")
    assert got.source.kind == "command"
    assert got.source.locator == f"stdin: git log -1 (in {tmp_path.resolve()})"
    assert got.source.header() == "[1] git log -1"
    assert ledger.read_piped(b"commit 1: fix the boiling point table.\n",
                             label="git log -1").source.versions == 1
    changed = ledger.read_piped(b"commit 2: more.\n", label="git log -1")
    assert (changed.source.id, changed.source.versions) == (1, 2)
    assert ledger.read_piped(b"x y z\n", label="other").source.id == 2
    with pytest.raises(EmptyContent):
        ledger.read_piped(b"  \n", label="git log -1")
    with pytest.raises(InvalidArgument):
        ledger.read_piped(b"text", label="   ")


# --- the CLI -------------------------------------------------------------------------------------


def test_cli_run_prints_header_and_snippets(tmp_path: Path, run_cli, ledger_path) -> None:
    result = run_cli("run", "--cwd", str(tmp_path), "--", PY, "-c",
                     "print('The answer is 42.')")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"[1] {shlex.join([PY, '-c', 'print(' + repr('The answer is 42.') + ')'])} (exit 0)",
        '[1] "The answer is 42."']
    assert rows(ledger_path, "SELECT id, kind FROM source") == [(1, "command")]


def test_cli_run_without_double_dash_passes_options_to_the_command(run_cli) -> None:
    result = run_cli("run", "--json", PY, "-c", "import sys; print(sys.argv[1:])", "--json", "-k")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data[0]["snippets"][0]["quote"] == "['--json', '-k']"


def test_cli_non_zero_exit_is_exit_0_with_a_warning(run_cli, ledger_path) -> None:
    result = run_cli("run", "--", PY, "-c", "print('some output'); raise SystemExit(4)")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0].endswith("(exit 4)")
    assert "fetchledger: warning: [1] the command exited with status 4" in result.stderr
    failing = run_cli("run", "--require-success", "--", PY, "-c",
                      "print('some output'); raise SystemExit(4)")
    assert failing.exit_code == 3
    assert "command_failed: the command exited with status 4" in failing.stderr
    assert rows(ledger_path, "SELECT status FROM attempt ORDER BY id") == [
        ("ok",), ("command_failed",)]


def test_cli_failures_exit_3_or_2_and_record_accordingly(tmp_path: Path, run_cli,
                                                         ledger_path) -> None:
    missing = run_cli("run", "--", "no-such-command-xyz")
    assert missing.exit_code == 3
    assert missing.stderr.startswith(
        "fetchledger: error: no-such-command-xyz: command_failed: command not found")
    timeout = run_cli("run", "--timeout", "0.3", "--", "sleep", "5")
    assert timeout.exit_code == 3 and "timeout" in timeout.stderr
    assert rows(ledger_path, "SELECT status FROM attempt ORDER BY id") == [
        ("command_failed",), ("timeout",)]
    for bad in (["run", "--cwd", str(tmp_path / "nope"), "--", "echo", "x"],
                ["run", "--timeout", "0", "--", "echo", "x"], ["run"]):
        result = run_cli(*bad)
        assert result.exit_code == 2, bad
        assert "Traceback" not in result.stderr
    assert rows(ledger_path, "SELECT count(*) FROM attempt") == [(2,)]
    assert rows(ledger_path, "SELECT count(*) FROM source") == [(0,)]


def test_cli_error_line_never_shows_a_secret(run_cli) -> None:
    result = run_cli("run", "--", "no-such-command-xyz", "--api-key", "sk-live-123456")
    assert "sk-live-123456" not in result.stderr
    assert "--api-key REDACTED" in result.stderr


def test_cli_read_stdin_with_label(tmp_path: Path, run_cli, ledger_path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    log = "a1b2c3 Fix the boiling point of water at altitude.\nd4e5f6 Add Everest data.\n"
    first = run_cli("read", "-", "--label", "git log --oneline -2", input=log)
    assert first.exit_code == 0, first.stderr
    assert first.stdout.splitlines() == [
        "[1] git log --oneline -2",
        '[1] "a1b2c3 Fix the boiling point of water at altitude."',
        '[1] "d4e5f6 Add Everest data."']
    again = run_cli("read", "-", "--label", "git log --oneline -2", input=log)
    assert again.stdout.splitlines()[0] == "[1] git log --oneline -2"
    run_cli("read", "-", "--label", "git log --oneline -2", input=log + "0a0a0a Older.\n")
    assert rows(ledger_path, "SELECT s.id, s.kind, s.locator, count(v.id) FROM source s "
                             "JOIN version v ON v.source_id = s.id GROUP BY s.id") == [
        (1, "command", f"stdin: git log --oneline -2 (in {tmp_path.resolve()})", 2)]
    note = tmp_path / "note.txt"
    note.write_text("A file read beside piped text.\n")
    both = run_cli("read", str(note), "-", "--label", "uname -a", "--json",
                   input="Linux host 6.1.0 x86_64 GNU/Linux\n")
    assert [item["source"]["id"] for item in json.loads(both.stdout)] == [2, 3]


def test_cli_read_stdin_bad_input(run_cli, ledger_path) -> None:
    no_label = run_cli("read", "-", input="some text")
    assert no_label.exit_code == 2 and "--label" in no_label.stderr
    stray_label = run_cli("read", "x.txt", "--label", "y")
    assert stray_label.exit_code == 2
    twice = run_cli("read", "-", "-", "--label", "y", input="text")
    assert twice.exit_code == 2
    empty = run_cli("read", "-", "--label", "nothing", input="")
    assert empty.exit_code == 3 and "empty_content" in empty.stderr
    assert rows(ledger_path, "SELECT status FROM attempt") == [("empty_content",)]
    assert rows(ledger_path, "SELECT count(*) FROM source") == [(0,)]


def test_cli_piped_text_over_the_cap_is_too_large(tmp_path: Path, monkeypatch) -> None:
    """Through the real console script: stdin is a pipe, the cap a small Limits value."""
    import subprocess

    monkeypatch.setenv("FETCHLEDGER_LEDGER", str(tmp_path / "l.db"))
    code = ("import sys; from fetchledger import Ledger, Limits\n"
            "l = Ledger(limits=Limits(max_command_output=100))\n"
            "try:\n l.read_piped(sys.stdin.buffer, label='big')\n"
            "except Exception as e: print(type(e).__name__, e.status)")
    done = subprocess.run([PY, "-c", code], input=b"x" * 1000, capture_output=True,
                          check=True, env={**os.environ})
    assert done.stdout.decode().strip() == "TooLarge too_large"


def test_piped_read_from_a_terminal_is_bad_input(ledger: Ledger, ledger_path: Path) -> None:
    leader, follower = os.openpty()
    try:
        with open(follower, "rb", closefd=False) as terminal, \
                pytest.raises(InvalidArgument, match="stdin is a terminal"):
            ledger.read_piped(terminal, label="git status")
    finally:
        os.close(leader)
        os.close(follower)
    assert table_counts(ledger_path)["attempt"] == 0
