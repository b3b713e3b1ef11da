"""Faults beyond tests/test_faults.py and tests/test_processes.py: SIGKILL at many
random points of long runs of registrations (several writers, varied sizes, new
sources and new versions), then integrity, dense ids and a consistent full-text
index; a ledger written by a newer schema refused by every verb (exit 4, untouched);
a full disk and a read-only ledger through the Python API.

``make hardening`` (FETCHLEDGER_HARDENING=1) kills 40 times instead of 5.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from fetchledger import Ledger
from fetchledger.errors import LedgerError
from fetchledger.text.passages import split_passages

from conftest import needs_mount_namespace
from measured import HEAVY

KILLS = 40 if HEAVY else 5

# A writer that never stops: documents of varied sizes (a line to ~100 kB), one in
# three a new version of an earlier locator; it reports each completed registration.
WRITER = textwrap.dedent("""
    import random, sys, time
    from fetchledger import Document, Ledger
    ledger_path, name, seed, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    sizes = [int(size) for size in sys.argv[5].split(",")]
    rng = random.Random(seed)
    words = "tide gauge harbour water level north bank spring rose fell".split()
    with Ledger(ledger_path) as ledger:
        print("ready", flush=True)
        for n in range(count):
            size = rng.choice(sizes)
            lines = [" ".join(rng.choice(words) for _ in range(9)).capitalize()
                     + f" record {name}-{n}-{i}." for i in range(size)]
            locator = f"/{name}/{rng.randrange(n + 1) if n and n % 3 == 0 else n}"
            got = ledger.register(Document(kind="file", locator=locator, display=locator,
                                           text="\\n".join(lines), raw=b"raw"),
                                  query="harbour", k=2)
            print("done", got.source.id, flush=True)
    time.sleep(3600)  # done: wait for the kill like the others
""")
# Under make hardening: more kills, fewer registrations each, smaller documents
# (a ledger that grows without end only measures the disk).
PER_WRITER, SIZES = ("200", "1,5,40,400") if HEAVY else ("100000", "1,5,40,400,1500")


def start_writer(ledger_path: Path, name: str, seed: int) -> subprocess.Popen[str]:
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(ledger_path), name, str(seed),
                              PER_WRITER, SIZES],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready", child.stderr.read() if child.stderr \
        else ""
    return child


def check_ledger(ledger_path: Path) -> dict[str, int]:
    """Everything a kill must never leave behind: a damaged file, a gap in the ids, a
    source without its version, passages or index rows, a quote that is not verbatim.
    (One read transaction: the other writers go on writing meanwhile.)"""
    db = sqlite3.connect(ledger_path, isolation_level=None, timeout=60)
    try:
        # the index's own check is a write statement: it waits its turn among the writers
        db.execute("INSERT INTO passage_fts(passage_fts) VALUES('integrity-check')")
        db.execute("BEGIN")

        def one(sql: str) -> Any:
            return db.execute(sql).fetchone()[0]

        assert one("PRAGMA integrity_check") == "ok"
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
        ids = [r[0] for r in db.execute("SELECT id FROM source ORDER BY id")]
        assert ids == list(range(1, len(ids) + 1))  # dense: no id lost to a kill
        assert one("SELECT count(*) FROM source WHERE latest_version IS NULL "
                   "OR latest_version NOT IN (SELECT id FROM version)") == 0
        versions = db.execute("SELECT source_id, group_concat(number) FROM version "
                              "GROUP BY source_id").fetchall()
        for _, numbers in versions:
            found = sorted(int(n) for n in numbers.split(","))
            assert found == list(range(1, len(found) + 1))  # versions dense too
        latest = one("SELECT count(*) FROM passage p JOIN source s "
                     "ON s.latest_version = p.version_id")
        assert one("SELECT count(*) FROM passage_fts") == latest  # no passage missing or orphan
        for version_id, text in db.execute(
                "SELECT v.id, v.text FROM version v JOIN source s ON s.latest_version = v.id"):
            stored = db.execute("SELECT count(*) FROM passage WHERE version_id = ?",
                                (version_id,)).fetchone()[0]
            assert stored == len(split_passages(text))  # every passage of a version, or none
        for start, end, quoted, text in db.execute(
                "SELECT q.start, q.end, q.text, v.text FROM quote q "
                "JOIN version v ON v.id = q.version_id"):
            assert text[start:end] == quoted
        db.execute("COMMIT")
        return {"sources": len(ids), "passages": int(one("SELECT count(*) FROM passage"))}
    finally:
        db.close()


def test_sigkill_at_random_points_of_many_writers(tmp_path: Path) -> None:
    """Three writers on one ledger; one of them is killed at a random moment, again
    and again (KILLS times), and replaced; after every kill the ledger is whole."""
    ledger_path = tmp_path / "killed.db"
    Ledger(ledger_path).close()
    rng = random.Random(11)
    writers = [start_writer(ledger_path, f"w{i}", i) for i in range(3)]
    completed = 0
    try:
        for kill in range(KILLS):
            time.sleep(rng.uniform(0.05, 0.3))
            victim = rng.randrange(len(writers))
            os.kill(writers[victim].pid, signal.SIGKILL)
            out, _ = writers[victim].communicate()
            completed += out.count("done ")
            # the others keep writing while the ledger is checked
            check_ledger(ledger_path)
            writers[victim] = start_writer(ledger_path, f"w{victim}k{kill}", 100 + kill)
    finally:
        for writer in writers:
            writer.kill()
            out, _ = writer.communicate()
            completed += out.count("done ")
    counts = check_ledger(ledger_path)
    assert completed > KILLS and counts["sources"] > 0


# --- a ledger written by a newer fetchledger --------------------------------------------------


@pytest.mark.parametrize("verb", [
    ["list"], ["show", "1"], ["quotes", "water"], ["read", "NOTE"], ["quote", "1", "water"],
    ["render", "DRAFT"], ["check", "DRAFT"], ["export", "--format", "pack", "-o", "OUT"],
])
def test_a_newer_ledger_is_exit_4_for_every_verb_and_untouched(
        tmp_path: Path, ledger_path: Path, run_cli: Any, verb: list[str]) -> None:
    note = tmp_path / "note.txt"
    note.write_text("Water boils at 100 degrees at sea level.\n")
    draft = tmp_path / "draft.md"
    draft.write_text("Water boils at 100 degrees.[1]\n")
    with Ledger(ledger_path) as ledger:
        ledger.read(note)
    with sqlite3.connect(ledger_path) as db:
        db.execute("INSERT INTO migration VALUES ('9999_from_the_future', 'x')")
    before = ledger_path.read_bytes()
    args = [{"NOTE": str(note), "DRAFT": str(draft), "OUT": str(tmp_path / "pack.zip")}.get(
        a, a) for a in verb]
    result = run_cli(*args)
    assert result.exit_code == 4, (verb, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("fetchledger: error: the ledger ")
    assert "newer fetchledger" in lines[0] and "9999_from_the_future" in lines[0]
    assert "Traceback" not in result.stderr
    assert ledger_path.read_bytes() == before
    assert not (tmp_path / "pack.zip").exists()


# --- full disk and read-only through the Python API --------------------------------------------



FILL_UP = textwrap.dedent("""
    import json, random, sys
    from fetchledger import Document, Ledger
    from fetchledger.errors import LedgerError
    rng = random.Random(2)
    outcome = {"registered": 0}
    with Ledger(sys.argv[1]) as ledger:
        for n in range(10**4):
            text = "\\n".join(" ".join("".join(rng.choices("abcdefghij", k=7))
                              for _ in range(12)) + "." for _ in range(300))
            try:
                ledger.register(Document(kind="file", locator=f"/doc/{n}", display="d",
                                         text=text, raw=text.encode()))
                outcome["registered"] += 1
            except LedgerError as error:
                outcome.update(error=type(error).__name__, message=error.message,
                               exit_code=error.exit_code)
                break
        outcome["readable"] = len(ledger.sources())
    print(json.dumps(outcome))
""")


@needs_mount_namespace
def test_a_disk_filling_up_mid_run_stops_cleanly_with_the_ledger_sound(tmp_path: Path) -> None:
    small = tmp_path / "small"
    small.mkdir()
    ledger = small / "l.db"
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c",
         f"mount -t tmpfs -o size=3m tmpfs {small} && {sys.executable} -c '{FILL_UP}' "
         f"{ledger} && cp {small}/l.db* {tmp_path}/"],
        capture_output=True, text=True, check=False, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    import json

    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome["error"] == "LedgerReadOnly" and outcome["exit_code"] == 4
    assert "is full" in outcome["message"]
    assert outcome["registered"] > 0 and outcome["readable"] == outcome["registered"]
    copied = tmp_path / "l.db"
    assert check_ledger(copied)["sources"] == outcome["registered"]


@needs_mount_namespace
def test_a_ledger_on_a_read_only_mount_reads_and_refuses_writes(tmp_path: Path) -> None:
    """On read-only media the verbs that only read work (the ledger is opened read-only,
    immutable when its WAL shared memory cannot be made); a write is one clear exit-4
    line."""
    folder = tmp_path / "ro"
    note = tmp_path / "note.txt"
    note.write_text("A sentence to register here.\n")
    with Ledger(folder / "l.db") as ledger:
        ledger.read(note)
    before = (folder / "l.db").read_bytes()
    cli = f"{sys.executable} -m fetchledger --ledger {folder / 'l.db'}"
    done = subprocess.run(["unshare", "-m", "sh", "-c", f"""
        mount --bind {folder} {folder} && mount -o remount,bind,ro {folder} || exit 90
        {cli} list; echo "list=$?"
        {cli} read {note}; echo "read=$?"
    """], capture_output=True, text=True, check=False, timeout=60)
    assert "list=0" in done.stdout and "read=4" in done.stdout, done.stderr
    assert "[1] note.txt" in done.stdout
    errors = [line for line in done.stderr.splitlines() if line.startswith("fetchledger:")]
    assert len(errors) == 1 and "cannot be written" in errors[0]
    assert "Traceback" not in done.stderr
    assert (folder / "l.db").read_bytes() == before


def test_api_errors_of_an_unusable_ledger_are_ledger_errors(tmp_path: Path) -> None:
    path = tmp_path / "garbage.db"
    path.write_bytes(b"SQLite format 3\x00" + os.urandom(4096))
    with pytest.raises(LedgerError) as caught:
        Ledger(path)
    assert caught.value.exit_code == 4
