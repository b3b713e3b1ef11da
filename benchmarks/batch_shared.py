"""Several batch processes, one PostgreSQL ledger: every URL one source, the work shared.

The corpus pages (``../shared/corpus/html``) are served as in ``batch.py`` (30
loopback hosts, 200 ms per response). ``fetchledger batch`` runs into a fresh
PostgreSQL ledger once as one process with the whole list, then as ``--workers``
processes at once (standing for worker machines), each given the whole list in
another order (every URL in every list): they claim inputs through the ledger.
Reported per run: wall time from the first start to the last exit, sources in
the ledger (one per URL), how many inputs each process registered itself;
beside them, one process on an SQLite ledger.

    python benchmarks/batch_shared.py [--pages N] [--workers 3] [--pg URL]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from batch import HOSTS, loopback_pages
from fetchledger import Ledger

from _common import add_pg_option, corpus_or_skip, pg_ledger, table

HERE = Path(__file__).resolve().parent


def run(ledger: str, lists: list[Path]) -> tuple[float, list[int]]:
    """Every list at once, one batch process each: the wall time and how many inputs
    each process registered (the others it reports skipped: registered elsewhere)."""
    started = time.perf_counter()
    processes = [subprocess.Popen(
        [sys.executable, "-m", "fetchledger", "--json", "batch", "--allow-private",
         "--no-robots", str(listing)], env={**os.environ, "FETCHLEDGER_LEDGER": ledger},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for listing in lists]
    registered = []
    for process in processes:
        out, err = process.communicate()
        if process.returncode != 0:
            sys.exit(f"FAILED: a batch exited {process.returncode}: {err.strip()[-400:]}")
        registered.append(sum(1 for line in out.splitlines() if "snippets" in json.loads(line)))
    return time.perf_counter() - started, registered


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=330)
    parser.add_argument("--workers", type=int, default=3, help="batch processes at once")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per response")
    add_pg_option(parser)
    args = parser.parse_args()
    if not args.pg:
        print("skipped: this benchmark needs a PostgreSQL server (--pg URL)")
        return 0
    corpus = corpus_or_skip("html")
    manifest = [json.loads(line) for line in (corpus / "manifest.jsonl").open()]
    pages = [p for p in (corpus.parent / e["html"] for e in manifest) if p.is_file()]
    pages = pages[: args.pages]
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        with loopback_pages(pages, args.latency, work) as urls:
            whole = work / "all.txt"
            whole.write_text("\n".join(urls) + "\n")
            lists = []
            for n in range(args.workers):  # the same URLs, each list from another start
                cut = n * len(urls) // args.workers
                lists.append(work / f"list{n}.txt")
                lists[-1].write_text("\n".join(urls[cut:] + urls[:cut]) + "\n")
            for name, given in (("SQLite, 1 process", [whole]),
                                ("PostgreSQL, 1 process", [whole]),
                                (f"PostgreSQL, {args.workers} processes", lists)):
                with pg_ledger(args.pg) as url:
                    ledger = str(work / f"{len(rows)}.db") if name.startswith("SQLite") else url
                    seconds, registered = run(ledger, given)
                    with Ledger(ledger) as opened:
                        sources = opened.sources()
                        dense = [s.id for s in sources] == list(range(1, len(sources) + 1))
                    distinct = len({s.locator for s in sources})
                    rows.append([name, seconds, len(sources), distinct == len(sources) and dense,
                                 sum(registered), " + ".join(map(str, registered))])
    print(f"{len(pages)} pages on {HOSTS} loopback hosts, {args.latency * 1000:.0f} ms per "
          "response; the same machine (2 cores) stands for every worker machine\n")
    print(table(["run", "wall (s)", "sources", "one per URL, ids dense",
                 "registered (all)", "registered by each process"], rows))
    base = rows[1][1]
    print(f"\n{args.workers} processes vs 1 on PostgreSQL: {rows[2][1] / base:.2f}x the wall time")
    return 0 if all(row[2] == len(pages) and row[3] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
