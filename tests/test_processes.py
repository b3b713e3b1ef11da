"""Many processes on one ledger, and processes killed mid-write (DESIGN §2.3, §2.5)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from fetchledger import Ledger
from fetchledger.text.passages import split_passages

from conftest import (
    pg_backend_gone,
    pg_clients_gone,
    pg_writer_inside,
    rows,
    stall_pg_writes,
)

pytestmark = pytest.mark.both_backends

WRITER = textwrap.dedent(
    """
    import sys
    from fetchledger import Ledger
    ledger_path, *files = sys.argv[1:]
    with Ledger(ledger_path) as ledger:
        for path in files:
            got = ledger.read(path)
            print(got.source.id, path, flush=True)
    """
)


def test_eight_processes_registering_overlapping_files(tmp_path: Path, ledger_path: Path) -> None:
    files = []
    for i in range(40):
        path = tmp_path / f"doc{i:02}.txt"
        path.write_text(f"Document number {i} says water boils at {100 - i} degrees.\n")
        files.append(str(path))
    rng = random.Random(7)
    workers = []
    for _ in range(8):
        chosen = rng.sample(files, 25)
        workers.append(subprocess.Popen([sys.executable, "-c", WRITER, str(ledger_path), *chosen],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True))
    seen: dict[str, set[int]] = {}
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        for line in out.splitlines():
            source_id, path = line.split(" ", 1)
            seen.setdefault(path, set()).add(int(source_id))
    # each file got exactly one id, in every process that registered it
    assert all(len(ids) == 1 for ids in seen.values())
    ids = sorted(next(iter(v)) for v in seen.values())
    assert ids == list(range(1, len(seen) + 1))  # unique, dense, from 1
    stored = rows(ledger_path, "SELECT id, locator FROM source ORDER BY id")
    assert [(i, str(Path(p).resolve())) for i, p in stored] == sorted(
        (next(iter(v)), str(Path(p).resolve())) for p, v in seen.items())
    assert rows(ledger_path, "SELECT count(*) FROM version") == [(len(seen),)]
    with Ledger(ledger_path) as ledger:
        assert ledger.integrity_check() == "ok"


KILLED_WRITER = textwrap.dedent(
    """
    import sys
    from fetchledger import Document, Ledger
    ledger_path, size, run = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    text = "\\n".join(f"Sentence {i} of the big document says {i * 7} things." for i in range(size))
    with Ledger(ledger_path) as ledger:
        print("ready", flush=True)
        for n in range(1000):
            ledger.register(Document(kind="file", locator=f"/big/{run}/{n}", display="big",
                                     text=text + f" Version {n}.", raw=b"x"))
            print("done", n, flush=True)
    """
)


def _check_consistent(ledger_path: Path | str) -> int:
    """Integrity ok, ids dense, and every source complete (version, passages, index)."""
    with Ledger(ledger_path) as ledger:
        assert ledger.integrity_check() == "ok"
        sources = ledger.sources()
        assert [s.id for s in sources] == list(range(1, len(sources) + 1))
        for source in sources:
            text = ledger.text(source.id)
            (count,) = rows(ledger_path, "SELECT count(*) FROM passage p JOIN source s "
                                         "ON s.latest_version = p.version_id WHERE s.id = ?",
                            source.id)[0]
            assert count == len(split_passages(text))
        for source in sources:  # the search index holds every complete source
            assert ledger.quotes("Version", source=source.id)
        assert ledger._store.search(["version"], 1).holding["version"] == len(sources)
        if isinstance(ledger_path, Path):
            assert rows(ledger_path, "INSERT INTO passage_fts(passage_fts) "
                                     "VALUES('integrity-check')") == []
        return len(sources)


def test_sigkill_mid_registration_leaves_before_or_after(ledger_path: Path | str) -> None:
    rng = random.Random(3)
    counts = []
    for attempt in range(6):
        child = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(ledger_path), "3000",
                                  str(attempt)],
                                 stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        waited = []
        if attempt % 2:  # after a finished registration: on a loaded machine one may take
            waited.append(child.stdout.readline())  # longer than every sleep below
            assert waited[0].startswith("done")
        time.sleep(rng.uniform(0.0, 0.4) + 0.05 * attempt)
        os.kill(child.pid, signal.SIGKILL)
        reported = waited + child.stdout.read().split("\n")
        child.wait()
        if isinstance(ledger_path, str):
            # a registration is one statement, sent whole: the server finishes (commits)
            # or rolls back the one in flight on its own, then notices its client gone
            pg_clients_gone(ledger_path)
        finished = sum(1 for line in reported if line.startswith("done"))
        count = _check_consistent(ledger_path)
        # this run's sources (counted by their locators: the child may register before
        # the test could count what stood before it): every completed registration, and
        # at most the one in flight
        (mine,) = rows(ledger_path, "SELECT count(*) FROM source WHERE locator LIKE ?",
                       f"/big/{attempt}/%")[0]
        assert finished <= mine <= finished + 1
        counts.append(count)
    assert counts[-1] > 0  # the kills did land between registrations' starts and ends


INSIDE_TRANSACTION = textwrap.dedent(
    """
    import sys, time
    from fetchledger import Document, Ledger
    with Ledger(sys.argv[1]) as ledger:
        store = type(ledger._store)
        if store.__name__ == "PostgresStore":
            # the write is one statement: the server stalls it (the test's trigger) once
            # source, version and passages are written, before the commit; the server
            # checks every 50 ms that its client is still there
            ledger._store._connection().execute(
                "SET client_connection_check_interval = '50ms'")
        else:
            original = store._index_version
            def index_then_stall(*args):
                original(*args)
                print("inside", flush=True)  # source, version, passages written, not committed
                time.sleep(60)
            store._index_version = index_then_stall
        ledger.register(Document(kind="file", locator="/stalled", display="stalled",
                                 text="A sentence that never commits. Version x.", raw=b"x"))
    """
)


def test_sigkill_inside_the_transaction_leaves_the_ledger_as_before(
        ledger_path: Path | str) -> None:
    with Ledger(ledger_path) as ledger:
        from fetchledger import Document

        ledger.register(Document(kind="file", locator="/kept", display="kept",
                                 text="A sentence that was committed. Version k.", raw=b"k"))
    before = {t: rows(ledger_path, f"SELECT count(*) FROM {t}") for t in
              ("source", "version", "passage", "quote", "attempt", "alias")}
    if isinstance(ledger_path, str):
        stall_pg_writes(ledger_path)
    child = subprocess.Popen([sys.executable, "-c", INSIDE_TRANSACTION, str(ledger_path)],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    if isinstance(ledger_path, str):
        backend = pg_writer_inside(ledger_path)
    else:
        assert child.stdout.readline().strip() == "inside"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    if isinstance(ledger_path, str):  # the server saw its client go and rolled back
        pg_backend_gone(ledger_path, backend)
        rows(ledger_path, "DROP TRIGGER test_stall_write ON attempt")
    assert _check_consistent(ledger_path) == 1
    after = {t: rows(ledger_path, f"SELECT count(*) FROM {t}") for t in before}
    assert after == before
