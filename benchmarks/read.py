"""Reading a long source window by window (issue 18): ``Ledger.read_source`` on a
2,000-page PDF and a 50 MB text file, at the start, middle and end, on SQLite and
PostgreSQL, beside what a naive reader does per call in the same run.

Both sources are generated here (not taken from the corpus): the PDF by
``tests/pdfgen.py`` (a heading and about 1.5 kB of sentences per page, printed
page labels), the text file as paragraphs of sentences under numbered headings.
Each is registered once per backend (the PDF through the ordinary ``read``). A
window is 4,000 characters (the default). Baselines, in the same process, against the same ledger:

- ``whole text + split``: load the version's stored text and split it into
  passages (what a reader without stored passage numbers does), then cut the
  window;
- ``whole text + stored passages``: load the text and every stored passage row,
  then cut the window (stored offsets, but no chunks and no numbered index).

Target: a window in at most 50 ms on the embedded ledger (SQLite)::

    python benchmarks/read.py [--pages 2000] [--megabytes 50] [--calls 15] [--pg URL]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import ROOT, add_pg_option, pg_ledger, table

sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

from fetchledger import Ledger, Limits
from fetchledger.text.passages import cut_quote, split_passages
from pdfgen import make_pdf, paper_sentences

WINDOW = 4000


def long_pdf(pages: int) -> bytes:
    """``pages`` pages: a heading, then about 1.5 kB of sentences, one per line."""
    sentences = paper_sentences(pages * 14, seed=18)
    body = [[f"Section {n + 1} on page {n + 1}", *sentences[n * 14 : (n + 1) * 14]]
            for n in range(pages)]
    return make_pdf(body, title="A long report", page_labels=[(0, "/r", None, 1),
                                                              (4, "/D", None, 1)])


def long_text(megabytes: int) -> str:
    """About ``megabytes`` MB of UTF-8: numbered headings, paragraphs of sentences."""
    sentences = paper_sentences(2000, seed=81)
    paragraphs: list[str] = []
    size, n = 0, 0
    while size < megabytes * 1_000_000:
        paragraph = " ".join(sentences[(n * 5 + i) % len(sentences)] for i in range(5))
        if n % 20 == 0:
            paragraphs.append(f"Part {n // 20 + 1} of the long text at 20 °C")
        paragraphs.append(paragraph)
        size += len(paragraph.encode()) + 2
        n += 1
    return "\n\n".join(paragraphs) + "\n"


def naive_split(ledger: Ledger, source_id: int, start: int) -> int:
    text = ledger.text(source_id)
    passages = split_passages(text, ledger.pages(source_id))
    return _cut(text, passages[start - 1 :])


def naive_stored(ledger: Ledger, source_id: int, start: int) -> int:
    version = ledger._store.version(source_id)
    assert version is not None
    passages = ledger._store.passages(version.version_id)
    return _cut(version.text, passages[start - 1 :])


def _cut(text: str, passages: list) -> int:  # type: ignore[type-arg]
    used = shown = 0
    for passage in passages:
        used += len(cut_quote(text, passage).line) + 8
        if used > WINDOW and shown:
            break
        shown += 1
    return shown


def ours(ledger: Ledger, source_id: int, start: int) -> int:
    return len(ledger.read_source(source_id, start).lines)


def outline(ledger: Ledger, source_id: int, start: int) -> int:
    return len(ledger.read_source(source_id, start, outline=True).lines)


def timed(call: Callable[[], int], calls: int) -> float:
    """Median milliseconds of ``calls`` calls (after one warm-up call when several)."""
    if calls > 1:
        call()
    spent = []
    for _ in range(calls):
        begun = time.perf_counter()
        call()
        spent.append(time.perf_counter() - begun)
    return statistics.median(spent) * 1000


def measure(location: str | Path, backend: str, sources: dict[str, int], calls: int,
            baseline_calls: int) -> list[list[object]]:
    rows: list[list[object]] = []
    with Ledger(location, read_only=True) as ledger:
        for name, source_id in sources.items():
            total = ledger.read_source(source_id).total
            for where, start in (("start", 1), ("middle", total // 2),
                                 ("end", max(total - 60, 1))):
                row: list[object] = [backend, name, f"{where} ({start:,})"]
                for method, count in ((ours, calls), (outline, calls),
                                      (naive_stored, baseline_calls),
                                      (naive_split, baseline_calls)):
                    row.append(timed(functools.partial(method, ledger, source_id, start),
                                     count))
                rows.append(row)
    return rows


def register(location: str | Path, work: Path) -> dict[str, int]:
    """Register both files (the PDF through the ordinary ``read``): {label: id}."""
    made = {}
    with Ledger(location, limits=Limits(pdf_timeout=1800.0)) as ledger:
        for name in ("report.pdf", "long.txt"):
            begun = time.perf_counter()
            source = ledger.read(work / name, k=1).source
            characters = len(ledger.text(source.id))
            made[f"{name} ({characters / 1e6:.1f} M chars)"] = source.id
            print(f"registered {name} in {location}: {characters:,} characters, "
                  f"{ledger.read_source(source.id).total:,} passages in "
                  f"{time.perf_counter() - begun:.0f} s", file=sys.stderr)
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=2000, help="pages of the PDF")
    parser.add_argument("--megabytes", type=int, default=50, help="size of the text file")
    parser.add_argument("--calls", type=int, default=15, help="timed calls per cell")
    parser.add_argument("--baseline-calls", type=int, default=1,
                        help="timed calls per baseline cell (they are slow)")
    add_pg_option(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "report.pdf").write_bytes(long_pdf(args.pages))
        (work / "long.txt").write_text(long_text(args.megabytes), encoding="utf-8")
        location = work / "ledger.db"
        made = register(location, work)
        rows = measure(location, "sqlite", made, args.calls, args.baseline_calls)
        if args.pg:  # registered there too (copy would index the big text per passage)
            with pg_ledger(args.pg) as url:
                rows += measure(url, "postgres", register(url, work), args.calls,
                                args.baseline_calls)
    print(table(["backend", "source", "window at passage", "read_source ms",
                 "outline ms", "whole text + stored passages ms", "whole text + split ms"],
                rows))
    print(f"\nwindow: {WINDOW:,} characters; median of {args.calls} calls "
          f"({args.baseline_calls} for the baselines); target: read_source <= 50 ms on SQLite")


if __name__ == "__main__":
    main()
