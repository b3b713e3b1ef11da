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

Baselines of the same run, to read the rate against: the load average before and
after each run; the CPU each registration cost, in the writers (their own process
time over the run) and, on PostgreSQL when the server is on this machine, in their
server processes (``/proc``), both from the writers that were not killed; one writer
alone (the same registrations, no contention); on PostgreSQL the same 16 writers with
the registration as of migration 0018 (before 0019 its commit was flushed while it held
the id counter, and no flush followed), and the same 16 writers
with the id counter replaced by a sequence — ids with gaps, NOT dense, so not
fetchledger: what the registration's work allows once the counter costs nothing.

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
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).parent))
from fetchledger import Ledger

from _common import add_pg_option, median_ms, percentile_ms, pg_ledger, table

WRITER = textwrap.dedent(
    """
    import os, sys, time
    from fetchledger import Document, Ledger
    location, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if location.endswith("#0018"):  # as before 0019: no flush after the registration
        from fetchledger.store.postgres import PostgresStore
        location, plain = location.removesuffix("#0018"), PostgresStore._exec_prepared
        PostgresStore._exec_prepared = lambda self, *args, flushed=False: plain(self, *args)

    def server_cpu(pid):  # the CPU seconds of this writer's server process, if local
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, TypeError):
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    with Ledger(location) as ledger:
        store = ledger._store
        pid = store._connection().info.backend_pid if hasattr(store, "_connection") else None
        print("ready", flush=True)
        sys.stdin.readline()  # all start together
        cpu, server = time.process_time(), server_cpu(pid)
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
        print(f"cpu {time.process_time() - cpu:.6f} {server_cpu(pid) - server:.6f} {count}",
              flush=True)
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


class Cpu(NamedTuple):
    """CPU seconds the writers that finished spent over the run, in their own process
    and in their server processes, and how many registrations that was."""

    writers: float = 0.0
    servers: float = 0.0
    registrations: int = 0

    def per(self) -> tuple[float | str, float | str]:
        """CPU ms per registration: writers', servers' ("-" where not measured)."""
        if not self.registrations:
            return "-", "-"
        return (self.writers / self.registrations * 1000,
                self.servers / self.registrations * 1000 if self.servers else "-")


LAST_CPU = [Cpu()]  # the CPU of the last run() of WRITER


def run(script: str, location: str, processes: int, per: int, kill: int,
        rng: random.Random) -> tuple[float, list[tuple[float, int, str]], int]:
    """Start the writers together, kill ``kill`` of them at random moments; the wall
    time, every registration reported, and how many writers were killed (the CPU of
    the writers that finished: ``LAST_CPU``)."""
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
    cpu = Cpu()
    for writer in writers:
        assert writer.stdout is not None
        for line in writer.stdout:
            if line.startswith("cpu "):
                _, own, server, count = line.split()
                cpu = Cpu(cpu.writers + float(own), cpu.servers + float(server),
                          cpu.registrations + int(count))
                continue
            seconds, source_id, locator = line.split(" ", 2)
            reported.append((float(seconds), int(source_id), locator.strip()))
        writer.wait()
    LAST_CPU[0] = cpu
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


def no_counter(location: str) -> bool:
    """Replace the id counter of a PostgreSQL ledger's registration by a sequence (ids
    with gaps: NOT dense, only the ceiling of the registration's work); False if the
    function does not take the counter as this expects."""
    import psycopg

    from fetchledger.store.pg_functions import COUNTER_QUEUE, REGISTER_FUNCTION

    counter = ("UPDATE counter SET value = value + new_count WHERE name = 'source'\n"
               "        RETURNING value - new_count INTO base;")
    if counter not in REGISTER_FUNCTION:
        return False
    with psycopg.connect(location, autocommit=True) as db:
        db.execute("CREATE SEQUENCE bench_ids")
        db.execute(REGISTER_FUNCTION.replace(COUNTER_QUEUE, "")  # nothing to queue for
                   .replace(counter, "base := nextval('bench_ids') * 1000;"))
    return True


def as_of_0018(location: str) -> str:
    """The registration of a PostgreSQL ledger as it was before 0019 (its commit flushed
    while it holds the id counter, no flush after): the location to give WRITER."""
    import psycopg

    from fetchledger.store.pg_functions import REGISTER_FUNCTION_0018

    with psycopg.connect(location, autocommit=True) as db:
        db.execute(REGISTER_FUNCTION_0018)
    return location + "#0018"


def measured(label: str, script: str, location: str, processes: int, per: int, kill: int,
             rng: random.Random) -> tuple[list[object], list[tuple[float, int, str]], int]:
    """One run as a table row (rate, latencies, CPU per registration, load before and
    after), with what the writers reported and how many were killed."""
    before = os.getloadavg()[0]
    elapsed, reported, killed = run(script, location, processes, per, kill, rng)
    times = [t for t, _, _ in reported]
    writers, servers = LAST_CPU[0].per() if script is WRITER else ("-", "-")
    return ([label, len(reported) / elapsed, median_ms(times), percentile_ms(times, 0.99),
             writers, servers, f"{before:.1f} → {os.getloadavg()[0]:.1f}"], reported, killed)


def baselines(rows: list[list[object]], fresh: Callable[[str], str], p: int, per: int,
              rng: random.Random) -> bool:
    """The PostgreSQL rows beside fetchledger's: its registration as of 0018, and with
    the counter replaced by a sequence; whether one of them went wrong."""
    failed = False
    before = fresh("")
    Ledger(before).close()
    row, reported, _ = measured(
        f"the same as of 0018 (each commit flushed while it holds the counter), "
        f"{p} writers", WRITER, as_of_0018(before), p, per, 0, rng)
    rows.append(row)
    failed |= check(before, reported) != ("ok", True, 0)
    ceiling = fresh("")
    Ledger(ceiling).close()
    if no_counter(ceiling):
        row, reported, _ = measured(
            f"the same, the counter replaced by a sequence (ids NOT dense: not "
            f"fetchledger), {p} writers", WRITER, ceiling, p, per, 0, rng)
        rows.append(row)
        failed |= check(ceiling, reported)[2] != 0
    return failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--processes", type=int, default=16)
    parser.add_argument("--per-process", type=int, default=300)
    parser.add_argument("--kill", type=int, default=3, help="writers killed mid-run")
    add_pg_option(parser)
    args = parser.parse_args()
    rng = random.Random(5)
    p, per = args.processes, args.per_process
    rows: list[list[object]] = []
    verdicts, failed = [], False
    with tempfile.TemporaryDirectory() as folder:
        for name in ["SQLite"] + (["PostgreSQL"] if args.pg else []):
            with contextlib.ExitStack() as stack:
                def fresh(file: str, name: str = name,
                          stack: contextlib.ExitStack = stack) -> str:
                    """A new ledger location: a database, or a file of the folder."""
                    if name == "PostgreSQL":
                        return stack.enter_context(pg_ledger(args.pg))
                    return str(Path(folder) / file)

                location, bare = fresh("ledger.db"), fresh("bare.db")
                Ledger(location).close()
                row, reported, killed = measured(f"fetchledger on {name}, {p} writers",
                                                 WRITER, location, p, per, args.kill, rng)
                rows.append(row)
                integrity, dense, wrong = check(location, reported)
                failed |= integrity != "ok" or not dense or bool(wrong)
                verdicts.append(f"{name}: {killed} of {p} writers killed; integrity "
                                f"{integrity}; ids dense 1..N: {dense}; reports that "
                                f"disagree with the ledger: {wrong}")
                alone = fresh("alone.db")
                Ledger(alone).close()
                row, reported, _ = measured(f"fetchledger on {name}, 1 writer alone",
                                            WRITER, alone, 1, per, 0, rng)
                rows.append(row)
                failed |= check(alone, reported) != ("ok", True, 0)
                if name == "PostgreSQL":
                    failed |= baselines(rows, fresh, p, per, rng)
                bare_table(bare)
                rows.append(measured(f"bare insert on {name}, {p} writers", BARE, bare, p,
                                     per, 0, rng)[0])
                if name == "PostgreSQL":  # what dense ids cost at least: the counter row
                    counted = fresh("")
                    bare_table(counted)
                    rows.append(measured(f"bare insert + counter row on {name}, {p} writers",
                                         BARE, counted + "#counter", p, per, 0, rng)[0])
    print(f"{p} writer processes x {per} registrations, one in ten on a locator all "
          "share; writers killed with SIGKILL mid-run\n")
    print("\n".join(verdicts) + "\n")
    print("goal on PostgreSQL: >= 1,000 registrations/s from 16 writers\n")
    print(table(["run", "registrations/s", "median (ms)", "p99 (ms)",
                 "writer CPU ms/registration", "server CPU ms/registration",
                 "load average"], rows))
    print("\nCPU per registration: the writers that were not killed, over the run; server "
          "CPU only for a PostgreSQL server on this machine (its processes in /proc)")
    if failed:
        sys.exit("FAILED: ids not dense, a report disagrees with the ledger, or integrity")


if __name__ == "__main__":
    main()
