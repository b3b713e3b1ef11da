"""Ledger scale: register time, search latency and file size at 100k sources / 1M passages.

Synthetic sources (ten sentences each, Zipf-distributed vocabulary) are
registered one by one through ``Ledger.register`` (prepare + one transaction,
as every adapter does), then searched with ``Ledger.quotes``. The baseline,
built from the same texts in the same run, is the floor any SQLite + FTS5
design pays: one table of texts and a contentless FTS5 index of the same
passages, inserted one source per transaction, searched with the same BM25
query; plus a linear scan of all texts (what a ledger without an index does).

The same registrations and searches run on PostgreSQL too (a fresh database on
the server of ``--pg``), in the same run.

    python benchmarks/ledger_scale.py [--sources 100000] [--queries 200] [--pg URL]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from fetchledger import Document, Ledger
from fetchledger.text.passages import search_words, split_passages

from _common import add_pg_option, median_ms, percentile_ms, pg_ledger, table


def vocabulary(size: int, rng: random.Random) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = {"".join(rng.choices(letters, k=rng.randint(3, 10))) for _ in range(size * 2)}
    return sorted(words)[:size]


def make_texts(count: int, per_source: int, rng: random.Random) -> tuple[list[str], list[str]]:
    words = vocabulary(50_000, rng)
    weights = [1 / (rank + 1) for rank in range(len(words))]  # Zipf
    cumulative = list(_accumulate(weights))
    texts = []
    for _ in range(count):
        sentences = []
        for _ in range(per_source):
            chosen = rng.choices(words, cum_weights=cumulative, k=rng.randint(8, 22))
            sentences.append(" ".join(chosen).capitalize() + ".")
        texts.append(" ".join(sentences[:5]) + "\n" + " ".join(sentences[5:]))
    mid = words[200:5000]  # neither stopword-common nor unseen
    queries = [" ".join(rng.sample(mid, rng.randint(2, 3))) for _ in range(1000)]
    return texts, queries


def _accumulate(values: list[float]) -> list[float]:
    total, out = 0.0, []
    for value in values:
        total += value
        out.append(total)
    return out


def file_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def bench_ledger(location: Path | str, texts: list[str], queries: list[str]) -> dict[str, float]:
    times = []
    with Ledger(location) as ledger:
        for n, text in enumerate(texts):
            document = Document(kind="web", locator=f"https://site{n % 997}.example/page/{n}",
                                display=f"https://site{n % 997}.example/page/{n}", text=text,
                                raw=text.encode(), title=f"Page {n}")
            started = time.perf_counter()
            ledger.register(document)
            times.append(time.perf_counter() - started)
        settle(location, ledger)
        searches = []
        for query in queries:
            started = time.perf_counter()
            ledger.quotes(query, k=3)
            searches.append(time.perf_counter() - started)
        passages = ledger._store.counts()["passage"]
    return {"register_median": median_ms(times), "register_p99": percentile_ms(times, 0.99),
            "search_median": median_ms(searches), "search_p99": percentile_ms(searches, 0.99),
            "size": size_of(location), "passages": passages}


def settle(location: Path | str, ledger: Ledger) -> None:
    """After the writes, before the searches: what each backend does in the background
    anyway (SQLite: a WAL checkpoint; PostgreSQL: autovacuum's VACUUM ANALYZE, which
    also merges the GIN index's pending list)."""
    if isinstance(location, Path):
        ledger._store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # type: ignore[attr-defined]
        return
    import psycopg

    with psycopg.connect(location, autocommit=True) as db:
        db.execute("VACUUM ANALYZE")


def size_of(location: Path | str) -> int:
    if isinstance(location, Path):
        return file_size(location)
    import psycopg

    with psycopg.connect(location) as db:
        row = db.execute("SELECT pg_database_size(current_database())").fetchone()
    return int(row[0]) if row else 0


def bench_baseline(folder: Path, texts: list[str], queries: list[str]) -> dict[str, float]:
    path = folder / "baseline.db"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE doc (id INTEGER PRIMARY KEY, locator TEXT UNIQUE, text TEXT)")
    db.execute("CREATE VIRTUAL TABLE fts USING fts5(body, content='', "
               "tokenize='porter unicode61 remove_diacritics 2')")
    times = []
    for n, text in enumerate(texts):
        started = time.perf_counter()
        spans = [(p.start, p.end) for p in split_passages(text)]
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO doc (locator, text) VALUES (?, ?)", (f"/page/{n}", text))
        db.executemany("INSERT INTO fts (rowid, body) VALUES (?, ?)",
                       [(n * 100 + i, text[a:b]) for i, (a, b) in enumerate(spans)])
        db.execute("COMMIT")
        times.append(time.perf_counter() - started)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    searches = []
    for query in queries:
        match = " OR ".join(f'"{w}"' for w in search_words(query))
        started = time.perf_counter()
        db.execute("SELECT rowid, bm25(fts) AS s FROM fts WHERE fts MATCH ? ORDER BY s LIMIT 20",
                   (match,)).fetchall()
        searches.append(time.perf_counter() - started)
    scans = []
    for query in queries[:5]:
        started = time.perf_counter()
        terms = query.lower().split()
        [t for t in texts if any(term in t.lower() for term in terms)]
        scans.append(time.perf_counter() - started)
    db.close()
    return {"register_median": median_ms(times), "register_p99": percentile_ms(times, 0.99),
            "search_median": median_ms(searches), "search_p99": percentile_ms(searches, 0.99),
            "size": file_size(path), "scan_median": median_ms(scans)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sources", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    add_pg_option(parser)
    args = parser.parse_args()
    rng = random.Random(42)
    started = time.perf_counter()
    texts, queries = make_texts(args.sources, 10, rng)
    queries = queries[: args.queries]
    text_bytes = sum(len(t.encode()) for t in texts)
    print(f"generated {len(texts):,} sources ({text_bytes / 1e6:.0f} MB of text) in "
          f"{time.perf_counter() - started:.0f} s")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        ours = bench_ledger(folder / "ledger.db", texts, queries)
        base = bench_baseline(folder, texts, queries)
    shared: dict[str, float] | None = None
    if args.pg:
        with pg_ledger(args.pg) as url:
            shared = bench_ledger(url, texts, queries)
    print(f"\n{args.sources:,} sources, {ours['passages']:,} passages, "
          f"{len(queries)} searches (2-3 word queries)")
    print("targets: SQLite register <= 2 ms median, search <= 50 ms; "
          "PostgreSQL register <= 3 ms median, search <= 50 ms\n")
    pg = shared or {}
    rows = [
        ["register, median (ms)", ours["register_median"], pg.get("register_median", ""),
         base["register_median"], ""],
        ["register, p99 (ms)", ours["register_p99"], pg.get("register_p99", ""),
         base["register_p99"], ""],
        ["search, median (ms)", ours["search_median"], pg.get("search_median", ""),
         base["search_median"], base["scan_median"]],
        ["search, p99 (ms)", ours["search_p99"], pg.get("search_p99", ""),
         base["search_p99"], ""],
        ["size (MB)", ours["size"] / 1e6, pg["size"] / 1e6 if pg else "", base["size"] / 1e6,
         text_bytes / 1e6],
    ]
    print(table(["measure", "fetchledger (SQLite)", "fetchledger (PostgreSQL)",
                 "baseline: text + FTS5", "linear scan / raw text"], rows))
    print(f"\nmedian search ratio to the FTS5 floor: "
          f"{ours['search_median'] / base['search_median']:.2f}x; "
          f"register ratio: {ours['register_median'] / base['register_median']:.2f}x")


if __name__ == "__main__":
    main()
