"""How fast render and check are, and how well figure drift separates supported claims.

Two tables, each with a baseline measured in the same run:

1. Speed on synthetic drafts (N paragraphs citing 20 registered sources): render and
   check against a baseline that does only the unavoidable work — a regex scan for
   markers and loading the cited sources' stored texts from the ledger.
2. Figure drift on the WiCE claims (../shared/corpus/claims, skipped when absent): each
   claim cites the page its evidence sentences come from; how often is a claim with
   figures flagged, by label? Baseline: a naive check (every digit run of the claim
   must occur as a substring of the evidence).
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from fetchledger import Document, Ledger
from fetchledger.cite import check, render

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "claims"
SENTENCES = [
    "At sea level, water boils at {n} °C.",
    "The pressure cooker raises the boiling point to about {n} °C.",
    "Beans cook in {n} minutes instead of two hours.",
    "The summit stands at {n},849 metres above the sea.",
]


def _seed(ledger: Ledger, sources: int) -> None:
    for i in range(1, sources + 1):
        text = "\n".join(s.format(n=100 + i) for s in SENTENCES)
        ledger.register(Document(kind="web", locator=f"https://s{i}.example/page",
                                 display=f"https://s{i}.example/page", text=text,
                                 title=f"Source {i}"), query="boiling point")


def _draft(paragraphs: int, sources: int) -> str:
    out = []
    for p in range(paragraphs):
        a, b = p % sources + 1, (p * 7) % sources + 1
        out.append(" ".join([
            SENTENCES[0].format(n=100 + a) + f"[{a}]",
            SENTENCES[1].format(n=100 + b) + f"[{b}]",
            f'The source says "Beans cook in {100 + a} minutes".[{a}]',
        ]))
    return "\n\n".join(out) + "\n"


def _time(function, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def speed() -> None:
    print("## render / check speed (best of 3, ms)\n")
    print("| paragraphs | draft KB | baseline: scan + load texts | render | check |")
    print("|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp, Ledger(Path(tmp) / "l.db") as ledger:
        _seed(ledger, 20)
        for paragraphs in (10, 100, 1000):
            draft = _draft(paragraphs, 20)

            def baseline(draft: str = draft) -> None:
                ids = {int(n) for n in re.findall(r"\[(\d+)\]", draft)}
                for source_id in ids:
                    ledger.text(source_id)

            rendered = render(ledger, draft).text
            base = _time(baseline)
            render_ms = _time(lambda d=draft: render(ledger, d))
            check_ms = _time(lambda d=rendered: check(ledger, d))
            problems = check(ledger, rendered).problems
            assert not problems, problems[:3]
            print(f"| {paragraphs} | {len(draft.encode()) / 1024:.0f} | {base:.1f} | "
                  f"{render_ms:.1f} | {check_ms:.1f} |")
    print()


def drift() -> None:
    path = CORPUS / "wice-dev.jsonl"
    if not path.exists():
        print("## figure drift on WiCE: skipped (../shared/corpus absent)\n")
        return
    claims = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    flagged: Counter[tuple[str, str]] = Counter()
    totals: Counter[str] = Counter()
    elapsed = 0.0
    with tempfile.TemporaryDirectory() as tmp, Ledger(Path(tmp) / "l.db") as ledger:
        for index, claim in enumerate(claims):
            text = claim["claim"].replace("[", "(").replace("]", ")")
            if not re.search(r"\d", text):
                continue
            evidence = "\n".join(claim["evidence"])
            got = ledger.register(Document(kind="web", locator=f"https://wice.example/{index}",
                                           display=f"https://wice.example/{index}",
                                           text=evidence, title=f"claim {index}"))
            label = claim["label"]
            totals[label] += 1
            draft = text.rstrip(".") + f".[{got.source.id}]\n"
            start = time.perf_counter()
            report = check(ledger, draft)
            elapsed += time.perf_counter() - start
            if any(p.rule == "figure-drift" for p in report.problems):
                flagged[("check", label)] += 1
            digits = re.findall(r"\d+", text)
            if any(d not in evidence for d in digits):
                flagged[("naive", label)] += 1
    print("## figure drift on WiCE claims that hold a figure (share of claims flagged)\n")
    print("| label | claims | baseline: naive digit-substring | check figure-drift |")
    print("|---|---:|---:|---:|")
    for label in ("supported", "partially_supported", "not_supported"):
        n = totals[label]
        if n:
            print(f"| {label} | {n} | {flagged[('naive', label)] / n:.0%} | "
                  f"{flagged[('check', label)] / n:.0%} |")
    checked = sum(totals.values())
    print(f"\ncheck time: {elapsed * 1000 / max(checked, 1):.1f} ms per claim "
          f"({checked} claims)\n")


def main() -> None:
    speed()
    drift()


if __name__ == "__main__":
    sys.exit(main())
