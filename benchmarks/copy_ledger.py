"""``copy`` of a ledger holding one giant source, SQLite -> PostgreSQL.

An SQLite ledger is made (once per size; kept in ``--work`` so that two runs,
e.g. before and after a change, copy the same file) holding one text source of
``--mb`` megabytes: short paragraphs of one or two sentences, so a great many
passages. Timed, in this order:

- **baseline: read every row** — ``export_rows()`` of the SQLite ledger walked
  to the end, nothing written (what any copy pays to read its source);
- **baseline: copy SQLite -> SQLite** — the same rows into a new file (its
  FTS5 index built as the passages go in);
- **copy SQLite -> PostgreSQL** — ``fetchledger copy`` into a new, empty
  database: the rows inserted, then the search index of the latest version's
  passages made (their terms, from the stored text). Each copy runs in a child
  process, stopped after ``--timeout`` seconds.

    python benchmarks/copy_ledger.py [--mb 50 [--mb 5 ...]] [--pg URL] [--work DIR]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fetchledger import Document, Ledger

from _common import add_pg_option, pg_ledger, table

WORDS = ("harbour", "tide", "station", "survey", "gauge", "river", "flood", "wall", "coast",
         "spring", "autumn", "reading", "metres", "observers", "north", "shore", "night",
         "storm", "pressure", "wind", "beacon", "channel", "pier", "lighthouse", "keeper")


def giant_text(megabytes: float, seed: int = 12) -> str:
    """Paragraphs of one or two sentences, about ``megabytes`` MB of UTF-8."""
    rng = random.Random(seed)
    parts: list[str] = []
    size = 0
    n = 0
    while size < megabytes * 1_000_000:
        n += 1
        first = (f"Station {n} recorded the {rng.choice(WORDS)} {rng.choice(WORDS)} "
                 f"at {n % 97} metres.")
        second = (f" The {rng.choice(WORDS)} held near the {rng.choice(WORDS)}."
                  if n % 2 else "")
        parts.append(first + second)
        size += len(first) + len(second) + 1
    return "\n".join(parts)


def ledger_with_giant(folder: Path, megabytes: float) -> tuple[Path, int]:
    """The SQLite ledger with one source of ``megabytes`` MB (made if absent)."""
    path = folder / f"giant-{megabytes:g}mb.db"
    if not path.exists():
        text = giant_text(megabytes)
        building = path.with_suffix(".building")
        building.unlink(missing_ok=True)
        with Ledger(building) as ledger:
            ledger.register(Document(kind="web", locator="https://giant.example/text",
                                     display="https://giant.example/text", text=text,
                                     raw=text.encode()))
        building.rename(path)
    with sqlite3.connect(path) as db:
        return path, int(db.execute("SELECT count(*) FROM passage").fetchone()[0])


def timed_copy(source: Path, destination: str, timeout: float) -> float | None:
    """Seconds ``fetchledger copy`` took in a child process, None if stopped."""
    started = time.perf_counter()
    try:
        subprocess.run([sys.executable, "-m", "fetchledger", "copy", str(source), destination],
                       check=True, timeout=timeout, capture_output=True)
    except subprocess.TimeoutExpired:
        return None
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, action="append",
                        help="size of the one source in MB (repeatable; default 50)")
    parser.add_argument("--work", type=Path, help="where the SQLite ledgers are kept")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds before a copy is stopped (default %(default)s)")
    add_pg_option(parser)
    args = parser.parse_args()
    if not args.pg:
        print("skipped: this benchmark needs a PostgreSQL server (--pg URL)")
        return 0
    sizes = args.mb or [50.0]
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.work or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for megabytes in sizes:
            path, passages = ledger_with_giant(folder, megabytes)
            with Ledger(path) as ledger:
                started = time.perf_counter()
                read = sum(len(found) for _, found in ledger._store.export_rows())
                rows.append([f"baseline: read every row ({read:,} rows)", megabytes, passages,
                             time.perf_counter() - started])
            into = folder / f"copy-{megabytes:g}mb.db"
            into.unlink(missing_ok=True)
            rows.append(["baseline: copy SQLite -> SQLite", megabytes, passages,
                         timed_copy(path, str(into), args.timeout) or "stopped"])
            into.unlink(missing_ok=True)
            with pg_ledger(args.pg) as url:
                seconds = timed_copy(path, url, args.timeout)
                if seconds is None:
                    rows.append(["copy SQLite -> PostgreSQL", megabytes, passages,
                                 f"stopped after {args.timeout:g} s"])
                    continue
                with Ledger(url) as target:
                    check = target.integrity_check()
                    indexed = target.quotes("lighthouse keeper", k=1)
                rows.append([f"copy SQLite -> PostgreSQL (integrity {check}, quotes "
                             f"{'found' if indexed else 'NONE'})", megabytes, passages,
                             seconds])
    print(table(["case", "MB", "passages", "seconds"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
