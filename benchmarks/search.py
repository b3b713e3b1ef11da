"""Ledger-wide search quality on WiCE claims (../shared/corpus/claims/wice-dev.jsonl).

Every claim's evidence sentences (one per line) are registered as one source
of ONE ledger, without a query, as a batch pre-retrieval would. Then each
claim is searched ledger-wide (``Ledger.quotes(claim, k=3)``, what an agent
does while writing): a claim is a *hit* when one of the three quotes comes
from the claim's own source and overlaps a supporting sentence by at least
half of the shorter of the two. Claims without a supporting sentence are left
out. Beside the shared scorer (what ``quotes`` ranks with on every backend):
the store's own index order of the same candidates (SQLite: FTS5's BM25),
measured on the same ledger in the same run.

Both backends are measured in the same run (PostgreSQL on the server of
``--pg``): the targets are the same hit@3 on both, within 0.01.

    python benchmarks/search.py [--pg URL]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from fetchledger import Document, Ledger
from fetchledger.text.passages import cut_quote, query_terms, search_words

from _common import add_pg_option, corpus_or_skip, median_ms, pg_ledger, table
from evidence import overlaps, spans_of


def load(ledger: Ledger, claims: list[dict[str, Any]]) -> list[list[tuple[int, int]]]:
    """Register every claim's document; the supporting spans of each."""
    wanted = []
    for n, claim in enumerate(claims):
        text, spans = spans_of([str(s) for s in claim["evidence"]], "\n")
        support = {i for group in claim["supporting_sentences"] for i in group}
        got = ledger.register(Document(kind="web", locator=f"https://claims.example/{n}",
                                       display="claim", text=text, raw=text.encode()))
        assert got.source.id == n + 1
        wanted.append([spans[i] for i in support if i < len(spans)])
    return wanted


def store_order(ledger: Ledger, query: str, k: int) -> list[tuple[int, int, int]]:
    """The top ``k`` distinct quotes in the store's own candidate order (no scorer)."""
    found = ledger._store.search(search_words(query), limit=100)
    terms, seen, out = query_terms(query), set(), []
    for hit in found.hits:
        cut = cut_quote(hit.context, hit.local(), terms)
        quote = hit.context[cut.start : cut.end]
        if quote in seen:
            continue
        seen.add(quote)
        out.append((hit.source_id, cut.start + hit.context_start, cut.end + hit.context_start))
        if len(out) == k:
            break
    return out


def evaluate(ledger: Ledger, claims: list[dict[str, Any]], k: int = 3) -> list[list[object]]:
    wanted = load(ledger, claims)
    hits = {"shared scorer (Ledger.quotes)": 0, "store index order only": 0}
    times = []
    for n, claim in enumerate(claims):
        query = str(claim["claim"])
        started = time.perf_counter()
        got = ledger.quotes(query, k=k)
        times.append(time.perf_counter() - started)
        ours = [(r.source.id, s.start, s.end) for r in got for s in r.snippets]
        for name, returned in (("shared scorer (Ledger.quotes)", ours),
                               ("store index order only", store_order(ledger, query, k))):
            hits[name] += any(source == n + 1 and overlaps((a, b), w)
                              for source, a, b in returned for w in wanted[n])
    return [[name, count / len(claims), median_ms(times) if name.startswith("shared") else ""]
            for name, count in hits.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_pg_option(parser)
    args = parser.parse_args()
    path = corpus_or_skip("claims", "wice-dev.jsonl")
    every = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    claims = [c for c in every if any(group for group in c["supporting_sentences"])]
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory() as folder, Ledger(Path(folder) / "l.db") as ledger:
        rows += [["SQLite", *row] for row in evaluate(ledger, claims)]
    if args.pg:
        with pg_ledger(args.pg) as url, Ledger(url) as ledger:
            rows += [["PostgreSQL", *row] for row in evaluate(ledger, claims)]
    print(f"WiCE dev: {len(claims)} claims, {len(claims)} sources in one ledger; "
          "hit@3 = one of 3 ledger-wide quotes is from the claim's source and overlaps "
          "a supporting sentence\n")
    print(table(["backend", "ranking", "hit@3", "quotes median (ms)"], rows))


if __name__ == "__main__":
    main()
