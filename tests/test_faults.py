"""Faults: a full disk, a read-only ledger, a ledger locked past the timeout."""

from __future__ import annotations

import functools
import random
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import fetchledger.ledger
from fetchledger import Document, Ledger, LedgerLocked, Limits

from conftest import needs_mount_namespace, rows

FETCHLEDGER = f"{shlex.quote(sys.executable)} -m fetchledger"


def in_mount_namespace(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True,
                          check=False, timeout=120)


@needs_mount_namespace
def test_a_full_disk_is_exit_4_and_leaves_the_ledger_sound(tmp_path: Path) -> None:
    small = tmp_path / "small"
    small.mkdir()
    note = tmp_path / "note.txt"
    note.write_text("A small note that fits on the disk.\n")
    rng = random.Random(1)
    big = tmp_path / "big.txt"
    big.write_text(" ".join("".join(rng.choices("abcdefghij klmnop.", k=8))
                            for _ in range(300_000)))
    ledger = small / "l.db"
    done = in_mount_namespace(f"""
        mount -t tmpfs -o size=400k tmpfs {small}
        {FETCHLEDGER} --ledger {ledger} read {note} > /dev/null || exit 90
        {FETCHLEDGER} --ledger {ledger} read {big}; echo "big=$?"
        {FETCHLEDGER} --ledger {ledger} --json list
        {sys.executable} -c "import sqlite3; print(sqlite3.connect('{ledger}')
            .execute('pragma integrity_check').fetchone()[0])"
    """.replace("\n            .", "."))
    assert "big=4" in done.stdout, done.stderr
    assert "fetchledger: error: the disk holding" in done.stderr
    assert "is full" in done.stderr
    assert '"id": 1' in done.stdout and '"id": 2' not in done.stdout
    assert done.stdout.strip().endswith("ok")


@needs_mount_namespace
def test_a_read_only_ledger_is_exit_4(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    note = tmp_path / "note.txt"
    note.write_text("A sentence to register here.\n")
    with Ledger(folder / "l.db") as ledger:
        ledger.read(note)
    before = (folder / "l.db").read_bytes()
    done = in_mount_namespace(f"""
        mount --bind {folder} {folder} && mount -o remount,bind,ro {folder} || exit 90
        {FETCHLEDGER} --ledger {folder / 'l.db'} read {note}; echo "read=$?"
    """)
    assert "read=4" in done.stdout, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("fetchledger: error: the ledger ")
    assert "cannot be written" in lines[0]
    assert (folder / "l.db").read_bytes() == before


def test_a_ledger_locked_past_the_timeout_is_exit_4(ledger_path: Path, run_cli,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    Ledger(ledger_path).close()
    holder = sqlite3.connect(ledger_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with (Ledger(ledger_path, limits=Limits(ledger_busy_timeout=0.2)) as ledger,
              pytest.raises(LedgerLocked)):
            ledger.register(Document(kind="file", locator="/x", display="/x",
                                     text="A sentence here.", raw=b"x"))
        monkeypatch.setattr(fetchledger.ledger, "Limits",
                            functools.partial(Limits, ledger_busy_timeout=0.2))
        note = tmp_path / "note.txt"
        note.write_text("A sentence to register here.\n")
        result = run_cli("read", str(note))
        assert result.exit_code == 4
        assert result.stderr.startswith("fetchledger: error: the ledger ")
        assert "locked" in result.stderr
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert rows(ledger_path, "SELECT count(*) FROM source") == [(0,)]
