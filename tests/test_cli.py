"""The CLI: output formats, exit codes, one-line errors, and what lands in the SQLite file."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fetchledger import Limits
from fetchledger.cli import cli

from conftest import rows, table_counts

pytestmark = pytest.mark.both_backends

SNIPPET = re.compile(r'^\[(\d+)\] "(.*)"( \(p\. [^)]+\))?$')
HEADER = re.compile(r"^\[(\d+)\] [^\"]")


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "water.md").write_text(
        "# Water\n\nAt sea level, water boils at 100 °C. The boiling point decreases "
        "with altitude.\n\nOn Everest it boils at about 70 °C.\n")
    (folder / "ice.txt").write_text("Ice melts at 0 °C under standard pressure.\n")
    return folder


def test_read_prints_header_and_snippet_lines(run_cli, notes: Path) -> None:
    result = run_cli("read", str(notes / "water.md"), str(notes / "ice.txt"))
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "[1] Water — water.md"
    assert lines[-2] == "[2] ice.txt"
    for line in lines:
        assert SNIPPET.match(line) or HEADER.match(line)
    assert result.stderr == ""


def test_json_quotes_are_text_slices(run_cli, notes: Path, ledger_path: Path) -> None:
    result = run_cli("--json", "read", str(notes / "water.md"), "-q", "altitude", "-k", "1")
    (item,) = json.loads(result.stdout)
    (snippet,) = item["snippets"]
    (text,) = rows(ledger_path, "SELECT text FROM version WHERE source_id = 1")[0]
    assert text[snippet["start"] : snippet["end"]] == snippet["quote"]  # type: ignore[index]
    assert snippet["quote"] == "The boiling point decreases with altitude."
    assert item["source"]["sha256"] == rows(ledger_path, "SELECT text_sha256 FROM version")[0][0]


@pytest.mark.parametrize("position", ["before", "after"])
def test_global_options_before_or_after_the_verb(run_cli, notes: Path, tmp_path: Path,
                                                 position: str) -> None:
    other = tmp_path / "other.db"
    options = ["--ledger", str(other), "--json"]
    args = [*options, "read", str(notes / "ice.txt")] if position == "before" else [
        "read", str(notes / "ice.txt"), *options]
    result = run_cli(*args)
    assert json.loads(result.stdout)[0]["source"]["id"] == 1
    assert rows(other, "SELECT count(*) FROM source") == [(1,)]


def test_mixed_inputs_register_the_good_ones_and_exit_2(run_cli, notes: Path,
                                                        ledger_path: Path) -> None:
    (notes / "empty.txt").write_text("")
    result = run_cli("--json", "read", str(notes / "missing.md"), str(notes / "ice.txt"),
                     str(notes / "empty.txt"))
    assert result.exit_code == 2
    data = json.loads(result.stdout)
    assert [("error" in d, d.get("error", {}).get("status")) for d in data] == [
        (True, "invalid_path"), (False, None), (True, "empty_content")]
    assert rows(ledger_path, "SELECT id FROM source") == [(1,)]
    assert rows(ledger_path, "SELECT status FROM attempt ORDER BY id") == [
        ("ok",), ("empty_content",)]


def test_failed_retrieval_alone_exits_3(run_cli, notes: Path) -> None:
    (notes / "empty.txt").write_text("")
    result = run_cli("read", str(notes / "empty.txt"))
    assert result.exit_code == 3
    assert result.stderr.startswith("fetchledger: error: ")
    assert "empty_content" in result.stderr


def test_quotes_and_quote_and_list_and_show(run_cli, notes: Path, ledger_path: Path) -> None:
    run_cli("read", str(notes / "water.md"), str(notes / "ice.txt"))
    found = run_cli("quotes", "melts")
    assert found.stdout.splitlines() == [
        "[2] ice.txt", '[2] "Ice melts at 0 °C under standard pressure."']
    confirmed = run_cli("--json", "quote", "1", "boils at about 70 °C")
    data = json.loads(confirmed.stdout)
    assert data["snippets"][0]["quote"] == "boils at about 70 °C"
    assert ("boils at about 70 °C",) in rows(ledger_path, "SELECT text FROM quote")
    listed = json.loads(run_cli("list", "--json").stdout)
    assert [(s["id"], s["versions"]) for s in listed] == [(1, 1), (2, 1)]
    shown = run_cli("show", "2", "--text")
    assert shown.stdout == "Ice melts at 0 °C under standard pressure."
    details = json.loads(run_cli("show", "1", "--json").stdout)
    assert details["versions"][0]["extractor"] == "markdown"


def test_quote_not_verbatim_exits_1_and_registers_nothing(run_cli, notes: Path,
                                                          ledger_path: Path) -> None:
    run_cli("read", str(notes / "water.md"))
    before = table_counts(ledger_path)
    result = run_cli("quote", "1", "water boils at 90 °C")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == (
        "fetchledger: error: the text is not verbatim in source [1]")
    assert "nearest passage" in result.stderr
    assert table_counts(ledger_path) == before


def test_list_failed_json_shape(run_cli, notes: Path) -> None:
    (notes / "empty.txt").write_text("")
    run_cli("read", str(notes / "empty.txt"))
    (attempt,) = json.loads(run_cli("list", "--failed", "--json").stdout)
    assert set(attempt) == {"locator", "at", "status", "message"}
    assert attempt["status"] == "empty_content"


def test_reset_needs_yes(run_cli, notes: Path, ledger_path: Path) -> None:
    run_cli("read", str(notes / "ice.txt"))
    refused = run_cli("reset")
    assert refused.exit_code == 2
    assert table_counts(ledger_path)["source"] == 1
    assert run_cli("reset", "--yes").exit_code == 0
    assert table_counts(ledger_path)["source"] == 0


# --- bad input: documented exit code, one-line error, ledger unchanged -------------------


def _bad_inputs(folder: Path) -> list[tuple[str, list[str], int, str]]:
    (folder / "binary.dat").write_bytes(bytes(range(256)) * 64)
    (folder / "empty.txt").write_text("")
    (folder / "big.txt").write_text("x" * 2048)
    return [
        ("missing file", ["read", str(folder / "nope.txt")], 2, "no such file"),
        ("a directory", ["read", str(folder)], 2, "is a directory"),
        ("binary garbage", ["read", str(folder / "binary.dat")], 3, "unsupported_type"),
        ("empty file", ["read", str(folder / "empty.txt")], 3, "empty_content"),
        ("unknown id: show", ["show", "99"], 2, "no source [99]"),
        ("unknown id: quote", ["quote", "99", "x"], 2, "no source [99]"),
        ("unknown id: quotes", ["quotes", "x", "--source", "99"], 2, "no source [99]"),
        ("id not a number", ["show", "abc"], 2, "is not a valid integer"),
        ("k below 1", ["read", str(folder / "water.md"), "-k", "0"], 2, "-k"),
        ("bad page range", ["read", str(folder / "water.md"), "--pages", "5-2"], 2, "page range"),
        ("pages on text", ["read", str(folder / "water.md"), "--pages", "2"], 2, "paged"),
        ("unknown option", ["read", "--frobnicate", str(folder / "water.md")], 2, "No such option"),
        ("unknown verb", ["frobnicate"], 2, "No such command"),
        ("missing argument", ["read"], 2, "Missing argument"),
        ("query without words", ["quotes", "!!!"], 2, "no words"),
        ("empty quote", ["quote", "1", "…"], 2, "empty"),
        ("reset without --yes", ["reset"], 2, "--yes"),
    ]


def test_bad_input_table(run_cli, notes: Path, ledger_path: Path) -> None:
    run_cli("read", str(notes / "water.md"))
    for name, args, code, needle in _bad_inputs(notes):
        before = table_counts(ledger_path)
        result = run_cli(*args)
        assert result.exit_code == code, (name, result.stderr)
        error_lines = [line for line in result.stderr.splitlines()
                       if not line.startswith("hint: ")]
        assert len(error_lines) == 1, (name, result.stderr)
        assert error_lines[0].startswith("fetchledger: error: "), (name, result.stderr)
        assert needle in result.stderr, (name, result.stderr)
        assert "Traceback" not in result.stderr
        after = table_counts(ledger_path)
        if code == 2:
            assert after == before, name
        else:  # a failed retrieval adds exactly one attempt and nothing else
            assert {k: after[k] - before[k] for k in after} == {
                "source": 0, "version": 0, "passage": 0, "quote": 0, "attempt": 1, "alias": 0}


def test_unreadable_file_is_bad_input(run_cli, notes: Path, ledger_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    run_cli("read", str(notes / "ice.txt"))
    before = table_counts(ledger_path)
    locked = notes / "locked.txt"
    locked.write_text("secret sentence here.")
    real_open = os.open  # (the file adapter opens with os.open, non-blocking: session 11)

    def refuse(path: object, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        if os.fspath(path).endswith("locked.txt"):  # type: ignore[call-overload]
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", refuse)
    result = run_cli("read", str(locked))
    assert result.exit_code == 2
    assert "permission denied" in result.stderr
    assert table_counts(ledger_path) == before


def test_file_over_the_size_cap_is_too_large(notes: Path, ledger_path: Path) -> None:
    from fetchledger import Ledger, TooLarge

    big = notes / "big.txt"
    big.write_text("A sentence that repeats. " * 100)
    with Ledger(ledger_path, limits=Limits(max_file_bytes=1000)) as ledger:
        with pytest.raises(TooLarge):
            ledger.read(big)
        assert [a.status for a in ledger.attempts()] == ["too_large"]
        assert ledger.sources() == []


def test_a_corrupt_ledger_exits_4(run_cli, tmp_path: Path) -> None:
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"garbage" * 1000)
    result = run_cli("--ledger", str(broken), "list")
    assert result.exit_code == 4
    assert result.stderr.startswith("fetchledger: error: ")
    assert broken.read_bytes() == b"garbage" * 1000


# --- every command has help and is documented --------------------------------------------


def test_every_command_has_help_and_a_readme_entry() -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    for name, command in cli.commands.items():
        assert command.help, name
        assert f"`{name}" in readme, f"README does not document `{name}`"


def test_console_script_runs_as_a_real_process(notes: Path, ledger_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "fetchledger", "read", str(notes / "ice.txt")],
                            capture_output=True, text=True, env={**os.environ}, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1] == '[1] "Ice melts at 0 °C under standard pressure."'
    version = subprocess.run([sys.executable, "-m", "fetchledger", "--version"],
                             capture_output=True, text=True, check=False)
    assert version.stdout.startswith("fetchledger, version ")


def test_cli_reference_is_current() -> None:
    root = Path(__file__).parents[1]
    done = subprocess.run([sys.executable, str(root / "scripts" / "cli_reference.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
