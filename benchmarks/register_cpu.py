"""Client CPU of one registration (``Ledger.register(Document)``), this tree beside a
baseline commit, on SQLite and on PostgreSQL.

The writers are exactly ``shared_ledger.py``'s (its ``WRITER``: the same documents, one
in ten under a locator all writers share, one registration a transaction); each reports
its own process time over its registrations and, on PostgreSQL when the server is on this
machine, the CPU of its server process (``/proc``). Every round runs the baseline's code
(``src/`` of ``--against``, from a ``git archive``) and this tree's, one after the other,
each on a new ledger that its own code created, with 1 writer and with ``--writers``
writers at once; the table gives the median of the rounds and every round's figure. The
floor row is the same writer's loop without the registration (the documents built and
the report lines printed): what the benchmark itself costs a registration.

    python benchmarks/register_cpu.py [--against REV] [--count 2000] [--rounds 3]
                                      [--writers 16] [--pg URL]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from shared_ledger import WRITER

from _common import ROOT, add_pg_option, git_source, pg_ledger, table

BASELINE = "9fd7b02"  # main at the start of this work (session 6): client CPU before it
_REGISTER = "got = ledger.register("
# the writer's loop with the registration replaced by a stand-in of what it hands back
FLOOR = WRITER.replace(_REGISTER, "got = Stand(") + (
    "\n" if _REGISTER in WRITER else "\nraise SystemExit('WRITER changed: no floor')\n")
FLOOR = FLOOR.replace("with Ledger(location) as ledger:", (
    "class Stand:\n"
    "    def __init__(self, document):\n"
    "        self.source = type('S', (), {'id': 0})()\n"
    "with Ledger(location) as ledger:"))

CREATE = "import sys\nfrom fetchledger import Ledger\nLedger(sys.argv[1]).close()\n"


def writers_cpu(script: str, location: str, source: Path, processes: int,
                count: int) -> tuple[float, float | None]:
    """Run ``processes`` writers of ``count`` registrations each with the code in
    ``source``: client and server CPU ms a registration (server None when not local)."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    subprocess.run([sys.executable, "-c", CREATE, location], env=env, check=True)
    writers = [subprocess.Popen([sys.executable, "-c", script, location, str(w), str(count)],
                                env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                text=True) for w in range(processes)]
    for writer in writers:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.close()
    own = server = 0.0
    done = 0
    for writer in writers:
        assert writer.stdout is not None
        for line in writer.stdout:
            if line.startswith("cpu "):
                _, mine, theirs, n = line.split()
                own, server, done = own + float(mine), server + float(theirs), done + int(n)
        if writer.wait() != 0:
            raise SystemExit(f"a writer failed (exit {writer.returncode})")
    if done != processes * count:
        raise SystemExit(f"{done} registrations reported of {processes * count}")
    return own / done * 1000, (server / done * 1000 if server else None)


@contextlib.contextmanager
def ledgers(backend: str, server: str, folder: Path) -> Iterator[str]:
    """A new, empty ledger location of ``backend``."""
    if backend == "PostgreSQL":
        with pg_ledger(server) as url:
            yield url
    else:
        with tempfile.TemporaryDirectory(dir=folder) as where:
            yield str(Path(where) / "ledger.db")


def cell(figures: list[float | None]) -> str:
    """``median (each round)`` in ms."""
    got = [f for f in figures if f is not None]
    if not got:
        return "—"
    rounds = ", ".join(f"{f:.3f}" for f in got)
    return f"{statistics.median(got):.3f} ({rounds})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", default=BASELINE, metavar="REV",
                        help="the baseline commit (default %(default)s); '' runs this tree only")
    parser.add_argument("--count", type=int, default=2000,
                        help="registrations per writer alone (16 writers: count/8 each)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--writers", type=int, default=16)
    add_pg_option(parser)
    args = parser.parse_args()
    backends = ["SQLite"] + (["PostgreSQL"] if args.pg else [])
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        trees: list[tuple[str, Path]] = []
        if args.against:
            baseline = git_source(args.against, folder / "baseline")
            if baseline is None:
                print(f"note: no git archive of {args.against} here: this tree only\n")
            else:
                trees.append((args.against, baseline))
        trees.append(("this tree", ROOT / "src"))
        shapes = [(1, args.count), (args.writers, max(1, args.count // 8))]
        started = os.getloadavg()[0]
        for backend in backends:
            for processes, count in shapes:
                figures: dict[str, list[tuple[float, float | None]]] = {t: [] for t, _ in trees}
                floors: list[float | None] = []
                for _ in range(args.rounds):
                    for label, source in trees:
                        with ledgers(backend, args.pg, folder) as location:
                            figures[label].append(
                                writers_cpu(WRITER, location, source, processes, count))
                    if processes == 1:
                        with ledgers(backend, args.pg, folder) as location:
                            floors.append(writers_cpu(FLOOR, location, ROOT / "src", 1,
                                                      count)[0])
                for label, _ in trees:
                    client = [c for c, _ in figures[label]]
                    server = [s for _, s in figures[label]]
                    rows.append([backend, f"{processes} × {count}", label, cell(list(client)),
                                 cell(server)])
                if floors:
                    rows.append([backend, f"1 × {count}", "floor: the writer's loop without "
                                 "the registration", cell(floors), "—"])
        load = f"{started:.1f} → {os.getloadavg()[0]:.1f}"
    at = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    print(f"CPU ms per registration, median of {args.rounds} rounds (each round's figure in "
          f"brackets); load average over the run {load}; {at} UTC\n")
    print(table(["backend", "writers × registrations", "code", "client CPU ms",
                 "server CPU ms"], rows))
    print("\nclient: the writers' own process time over their registrations (user + "
          "system); server: their PostgreSQL backends' (when the server runs here)")


if __name__ == "__main__":
    main()
