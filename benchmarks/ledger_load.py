"""Load: 16 processes x 500 registrations on one ledger file.

Each worker registers 500 documents, one in ten under a locator other workers
also register (so dedupe is exercised under contention). Reported: total
throughput, latency median and p99, and the check that no id was lost or
duplicated (ids dense 1..N, one per distinct locator). Baselines in the same
run: the same registrations by one process, and 16 processes doing bare
SQLite inserts (BEGIN IMMEDIATE + one row) on a separate file.

    python benchmarks/ledger_load.py [--processes 16] [--per-process 500]
"""

from __future__ import annotations

import argparse
import multiprocessing
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from fetchledger import Document, Ledger

from _common import median_ms, percentile_ms, table

Timings = list[tuple[float, str, int]]  # (seconds, locator, source id)
Job = tuple[str, int, int, object]  # (ledger path, worker number, count, barrier)


def text_for(worker: int, n: int) -> str:
    return (f"Report {worker}-{n} states that the river rose by {n % 97} centimetres. "
            f"Observers at station {worker} confirmed the reading on day {n}.\n"
            "The gauge was calibrated last spring. Rainfall upstream was heavy.")


def locator_for(worker: int, n: int) -> str:
    shared = n % 10 == 0  # one in ten is registered by every worker
    return f"https://gauges.example/shared/{n}" if shared else f"https://gauges.example/{worker}/{n}"


def register_worker(args: Job) -> Timings:
    path, worker, count, barrier = args
    out = []
    with Ledger(path) as ledger:
        barrier.wait()  # type: ignore[attr-defined]
        for n in range(count):
            locator = locator_for(worker, n)
            text = text_for(0 if "shared" in locator else worker, n)
            started = time.perf_counter()
            got = ledger.register(Document(kind="web", locator=locator, display=locator,
                                           text=text, raw=text.encode()))
            out.append((time.perf_counter() - started, locator, got.source.id))
    return out


def sqlite_worker(args: Job) -> Timings:
    path, worker, count, barrier = args
    db = sqlite3.connect(path, isolation_level=None, timeout=60)
    db.execute("PRAGMA busy_timeout = 60000")
    db.execute("PRAGMA synchronous = NORMAL")
    barrier.wait()  # type: ignore[attr-defined]
    out = []
    for n in range(count):
        started = time.perf_counter()
        db.execute("BEGIN IMMEDIATE")
        cursor = db.execute("INSERT OR IGNORE INTO doc (locator, text) VALUES (?, ?)",
                            (locator_for(worker, n), text_for(worker, n)))
        db.execute("COMMIT")
        out.append((time.perf_counter() - started, "", int(cursor.lastrowid or 0)))
    return out


def run(worker: object, path: str, processes: int, per: int) -> tuple[float, Timings]:
    with multiprocessing.Manager() as manager:
        barrier = manager.Barrier(processes)
        started = time.perf_counter()
        with multiprocessing.Pool(processes) as pool:
            results = pool.map(worker, [(path, w, per, barrier) for w in range(processes)])
        elapsed = time.perf_counter() - started
    return elapsed, [item for chunk in results for item in chunk]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--processes", type=int, default=16)
    parser.add_argument("--per-process", type=int, default=500)
    args = parser.parse_args()
    p, per = args.processes, args.per_process
    with tempfile.TemporaryDirectory() as folder:
        ledger_path = str(Path(folder) / "ledger.db")
        Ledger(ledger_path).close()
        many_time, many = run(register_worker, ledger_path, p, per)
        with Ledger(ledger_path) as ledger:
            ids = [s.id for s in ledger.sources()]
            integrity = ledger.integrity_check()
        by_locator: dict[str, set[int]] = {}
        for _, locator, source_id in many:
            by_locator.setdefault(locator, set()).add(source_id)
        duplicated = sum(1 for v in by_locator.values() if len(v) > 1)
        lost = len(by_locator) - len(ids)
        dense = ids == list(range(1, len(ids) + 1))

        single_path = str(Path(folder) / "single.db")
        Ledger(single_path).close()
        one_time, one = run(register_worker, single_path, 1, p * per)

        bare_path = str(Path(folder) / "bare.db")
        db = sqlite3.connect(bare_path)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("CREATE TABLE doc (id INTEGER PRIMARY KEY, locator TEXT UNIQUE, text TEXT)")
        db.close()
        bare_time, bare = run(sqlite_worker, bare_path, p, per)

    total = p * per
    print(f"{p} processes x {per} registrations on one ledger ({len(by_locator):,} distinct "
          f"locators); integrity {integrity}; ids dense 1..N: {dense}; lost {lost}; "
          f"duplicated {duplicated}\n")
    rows = [
        [f"fetchledger, {p} processes", total / many_time, median_ms([t for t, _, _ in many]),
         percentile_ms([t for t, _, _ in many], 0.99)],
        ["fetchledger, 1 process", total / one_time, median_ms([t for t, _, _ in one]),
         percentile_ms([t for t, _, _ in one], 0.99)],
        [f"bare SQLite insert, {p} processes", total / bare_time,
         median_ms([t for t, _, _ in bare]), percentile_ms([t for t, _, _ in bare], 0.99)],
    ]
    print(table(["run", "registrations/s", "median (ms)", "p99 (ms)"], rows))
    if lost or duplicated or not dense or integrity != "ok":
        sys.exit("FAILED: ids lost, duplicated or not dense")


if __name__ == "__main__":
    main()
