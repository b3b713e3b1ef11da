"""Evidence per character on WiCE claims (../shared/corpus/claims/wice-dev.jsonl).

Each claim's evidence sentences (from the web page it cites, in page order)
are joined into a document and registered with the claim as the query, as an
agent would `fetch URL -q CLAIM`. A claim is a *hit* when one of the quotes
handed out overlaps a supporting sentence by at least half of the shorter of
the two. Claims whose annotation lists no supporting sentence (30
``not_supported`` claims with ``[[]]``) cannot be hit and are left out.
Beside fetchledger (k=3): lead-3 (the first three sentences) and the
first 5,000 characters (what agent fetch tools commonly return), measured on
the same documents in the same run. Documents are joined two ways: one
sentence per line, and all sentences run together as one paragraph (which
also exercises sentence splitting).

    python benchmarks/evidence.py
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from fetchledger import Document, Ledger

from _common import corpus_or_skip, table


def spans_of(sentences: list[str], joiner: str) -> tuple[str, list[tuple[int, int]]]:
    spans, parts, offset = [], [], 0
    for sentence in sentences:
        sentence = " ".join(sentence.split())
        parts.append(sentence)
        spans.append((offset, offset + len(sentence)))
        offset += len(sentence) + len(joiner)
    return joiner.join(parts), spans


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    shared = min(a[1], b[1]) - max(a[0], b[0])
    return shared > 0 and shared >= 0.5 * min(a[1] - a[0], b[1] - b[0])


def evaluate(claims: list[dict[str, object]], joiner: str, k: int) -> list[list[object]]:
    totals = {"fetchledger": [0, 0], "lead-3": [0, 0], "first 5,000 chars": [0, 0]}
    elapsed = 0.0
    with tempfile.TemporaryDirectory() as folder, Ledger(Path(folder) / "l.db") as ledger:
        for n, claim in enumerate(claims):
            evidence = [str(s) for s in claim["evidence"]]  # type: ignore[attr-defined]
            text, spans = spans_of(evidence, joiner)
            support = {i for group in claim["supporting_sentences"]  # type: ignore[attr-defined]
                       for i in group}
            wanted = [spans[i] for i in support if i < len(spans)]
            started = time.perf_counter()
            got = ledger.register(
                Document(kind="web", locator=f"https://claims.example/{n}", display="claim",
                         text=text, raw=text.encode()), query=str(claim["claim"]), k=k)
            elapsed += time.perf_counter() - started
            quotes = [(s.start, s.end) for s in got.snippets]
            for name, returned in (
                ("fetchledger", quotes),
                ("lead-3", spans[:3]),
                ("first 5,000 chars", [(0, min(len(text), 5000))]),
            ):
                hit = any(overlaps(q, w) for q in returned for w in wanted)
                totals[name][0] += hit
                totals[name][1] += sum(e - s for s, e in returned)
    count = len(claims)
    rows: list[list[object]] = []
    for name, (hits, chars) in totals.items():
        rows.append([name, "one sentence per line" if joiner == "\n" else "one paragraph",
                     hits / count, chars / count])
    rows[0].append(f"{elapsed / count * 1000:.2f} ms/claim")
    return rows


def main() -> None:
    path = corpus_or_skip("claims", "wice-dev.jsonl")
    every = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    claims = [c for c in every if any(group for group in c["supporting_sentences"])]
    rows: list[list[object]] = []
    for joiner in ("\n", " "):
        rows.extend(evaluate(claims, joiner, k=3))
    for row in rows:
        row.extend([""] * (5 - len(row)))
    print(f"WiCE dev: {len(claims)} of {len(every)} claims have a supporting sentence; "
          "hit@3 = one of 3 quotes overlaps one")
    print("targets: fetchledger hit@3 >= 0.95 with <= 450 characters per claim\n")
    print(table(["method", "document", "hit@3", "chars/claim", "register"], rows))


if __name__ == "__main__":
    main()
