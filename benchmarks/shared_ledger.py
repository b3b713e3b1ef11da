"""Shared ledger: 16 writer processes on one ledger, some killed with SIGKILL mid-run,
on an SQLite file and on PostgreSQL side by side.

Each writer registers documents one by one (``Ledger.register``: one transaction
each), one in ten under a locator every writer also registers (so the same
canonical source arrives from many processes at once). While they run,
``--kill`` of them are killed with SIGKILL at random moments. Then: ids dense
1..N, one id per locator (every surviving writer's report agrees with the
ledger), the backend's integrity check clean; registrations per second over
the run. Floors measured in the same run: the same bare insert (one row, one
transaction, one synchronous commit) from 16 processes, per backend; on PostgreSQL
also the bare insert taking its id from a counter row in its transaction (what
dense ids cost at least: the row stays locked through each commit).

    python benchmarks/shared_ledger.py [--processes 16] [--per-process 300] [--kill 3] [--pg URL]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from fetchledger import Ledger

from _common import add_pg_option, median_ms, percentile_ms, pg_ledger, table

WRITER = textwrap.dedent(
    """
    import sys, time
    from fetchledger import Document, Ledger
    location, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with Ledger(location) as ledger:
        print("ready", flush=True)
        sys.stdin.readline()  # all start together
        for n in range(count):
            shared = n % 10 == 0
            locator = (f"https://gauges.example/shared/{n}" if shared
                       else f"https://gauges.example/{worker}/{n}")
            text = (f"Report {0 if shared else worker}-{n} states that the river rose by "
                    f"{n % 97} centimetres. Observers confirmed the reading on day {n}.\\n"
                    "The gauge was calibrated last spring. Rainfall upstream was heavy.")
            started = time.perf_counter()
            got = ledger.register(Document(kind="web", locator=locator, display=locator,
                                           text=text, raw=text.encode()))
            print(f"{time.perf_counter() - started:.6f} {got.source.id} {locator}", flush=True)
    """
)

BARE = textwrap.dedent(
    """
    import sys, time
    location, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    counted = location.endswith("#counter")
    location = location.removesuffix("#counter")
    if location.startswith("postgresql://"):
        import psycopg
        db = psycopg.connect(location, autocommit=True)
        insert = "INSERT INTO doc (locator, text) VALUES (%s, %s)"
        if counted:  # the id from a counter row locked until the commit, as DESIGN §4 asks
            insert = ("WITH c AS (UPDATE counter SET value = value + 1 RETURNING value) "
                      "INSERT INTO doc (id, locator, text) SELECT value, %s, %s FROM c")
    else:
        import sqlite3
        db = sqlite3.connect(location, isolation_level=None, timeout=60)
        db.execute("PRAGMA busy_timeout = 60000")
        db.execute("PRAGMA synchronous = NORMAL")
        insert = "INSERT INTO doc (locator, text) VALUES (?, ?)"
    print("ready", flush=True)
    sys.stdin.readline()
    for n in range(count):
        started = time.perf_counter()
        db.execute(insert, (f"/{worker}/{n}", "The river rose by some centimetres."))
        print(f"{time.perf_counter() - started:.6f} 0 /{worker}/{n}", flush=True)
    """
)


def run(script: str, location: str, processes: int, per: int, kill: int,
        rng: random.Random) -> tuple[float, list[tuple[float, int, str]], int]:
    """Start the writers together, kill ``kill`` of them at random moments; the wall
    time, every registration reported, and how many writers were killed."""
    writers = [subprocess.Popen([sys.executable, "-c", script, location, str(w), str(per)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
               for w in range(processes)]
    for writer in writers:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
    started = time.perf_counter()
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.close()
    victims = rng.sample(writers, kill)
    for victim in victims:
        time.sleep(rng.uniform(0.2, 1.5))
        os.kill(victim.pid, signal.SIGKILL)
    reported: list[tuple[float, int, str]] = []
    for writer in writers:
        assert writer.stdout is not None
        for line in writer.stdout:
            seconds, source_id, locator = line.split(" ", 2)
            reported.append((float(seconds), int(source_id), locator.strip()))
        writer.wait()
    elapsed = time.perf_counter() - started
    killed = sum(1 for w in victims if w.returncode == -signal.SIGKILL)
    return elapsed, reported, killed


def check(location: str, reported: list[tuple[float, int, str]]) -> tuple[str, bool, int]:
    """Integrity, ids dense 1..N, and locators reported with another id than stored."""
    with Ledger(location) as ledger:
        integrity = ledger.integrity_check()
        sources = ledger.sources()
        stored = {s.locator: s.id for s in sources}
    ids = sorted(stored.values())
    wrong = sum(1 for _, source_id, locator in reported if stored.get(locator) != source_id)
    return integrity, ids == list(range(1, len(ids) + 1)), wrong


def bare_table(location: str) -> None:
    if location.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(location, autocommit=True) as db:
            db.execute("CREATE TABLE doc (id BIGSERIAL PRIMARY KEY, locator TEXT UNIQUE, "
                       "text TEXT)")
            db.execute("CREATE TABLE counter (value BIGINT NOT NULL)")
            db.execute("INSERT INTO counter VALUES (0)")
    else:
        import sqlite3

        db = sqlite3.connect(location)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("CREATE TABLE doc (id INTEGER PRIMARY KEY, locator TEXT UNIQUE, text TEXT)")
        db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--processes", type=int, default=16)
    parser.add_argument("--per-process", type=int, default=300)
    parser.add_argument("--kill", type=int, default=3, help="writers killed mid-run")
    add_pg_option(parser)
    args = parser.parse_args()
    rng = random.Random(5)
    p, per = args.processes, args.per_process
    rows, verdicts, failed = [], [], False
    with tempfile.TemporaryDirectory() as folder:
        backends = [("SQLite", str(Path(folder) / "ledger.db"), str(Path(folder) / "bare.db"))]
        if args.pg:
            backends.append(("PostgreSQL", "", ""))
        for name, location, bare in backends:
            with contextlib.ExitStack() as stack:
                if name == "PostgreSQL":
                    location = stack.enter_context(pg_ledger(args.pg))
                    bare = stack.enter_context(pg_ledger(args.pg))
                Ledger(location).close()
                elapsed, reported, killed = run(WRITER, location, p, per, args.kill, rng)
                integrity, dense, wrong = check(location, reported)
                failed |= integrity != "ok" or not dense or bool(wrong)
                verdicts.append(f"{name}: {killed} of {p} writers killed; integrity "
                                f"{integrity}; ids dense 1..N: {dense}; reports that "
                                f"disagree with the ledger: {wrong}")
                times = [t for t, _, _ in reported]
                rows.append([f"fetchledger on {name}, {p} writers", len(reported) / elapsed,
                             median_ms(times), percentile_ms(times, 0.99)])
                bare_table(bare)
                elapsed, reported, _ = run(BARE, bare, p, per, 0, rng)
                times = [t for t, _, _ in reported]
                rows.append([f"bare insert on {name}, {p} writers", len(reported) / elapsed,
                             median_ms(times), percentile_ms(times, 0.99)])
                if name == "PostgreSQL":  # what dense ids cost at least: the counter row
                    counted = stack.enter_context(pg_ledger(args.pg))
                    bare_table(counted)
                    elapsed, reported, _ = run(BARE, counted + "#counter", p, per, 0, rng)
                    times = [t for t, _, _ in reported]
                    rows.append([f"bare insert + counter row on {name}, {p} writers",
                                 len(reported) / elapsed, median_ms(times),
                                 percentile_ms(times, 0.99)])
    print(f"{p} writer processes x {per} registrations, one in ten on a locator all "
          "share; writers killed with SIGKILL mid-run\n")
    print("\n".join(verdicts) + "\n")
    print("goal on PostgreSQL: >= 1,000 registrations/s from 16 writers\n")
    print(table(["run", "registrations/s", "median (ms)", "p99 (ms)"], rows))
    if failed:
        sys.exit("FAILED: ids not dense, a report disagrees with the ledger, or integrity")


if __name__ == "__main__":
    main()
