"""Extraction quality and cost on the shared HTML corpus: fetchledger beside trafilatura.

For every page, the same raw bytes go through

- **fetchledger**: what ``fetch`` stores for an HTML response (``decode_html`` +
  ``extract_html``: hidden elements removed, trafilatura with metadata, a
  plain-text fallback, one paragraph per line), and
- **trafilatura** alone: ``trafilatura.extract(raw)`` with its defaults,

timed page by page in the same run, alternating which goes first.

Scoring (the corpus README): ``readability/`` pages by 4-gram shingle F1
against ``expected.derived.txt`` (lowercase, ``\\w+`` tokens; per-page
precision/recall/F1, averaged); ``trafilatura/`` pages by their ``with``
snippets (found = true positive) and ``without`` snippets (found = false
positive), after whitespace normalization, summed over the set.

The ``readability*`` row scores the same texts against the ground truth as
DESIGN promise 7 states it: made from readability's ``expected.html`` the way
``expected.derived.txt`` is (tags stripped, a newline per block, whitespace
collapsed; the two agree on every page without a formula), with each formula
image as its TeX (readability's text leaves a hole where a formula stands,
``denoted by , then``) and the citation apparatus that promise 7 drops from
stored text taken out (``[12]``, ``[edit]``, ``[citation needed]``, note-link
superscripts ``alerts,<sup><a href="#n22">22</a></sup>``). The plain row counts
those marks as words fetchledger failed to extract, and the formulas as words
it made up.

Targets: fetchledger never below trafilatura alone; F1 >= 0.95 on every page
where trafilatura reaches it; time <= 1.2x trafilatura's.

    .venv/bin/python benchmarks/extraction.py [--corpus DIR] [--limit N]

Skips cleanly (exit 0) when the corpus is absent.
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import CORPUS, ROOT

DEFAULT_CORPUS = CORPUS / "html"
WORD = re.compile(r"\w+")
APPARATUS = re.compile(r"\[(?:\d{1,4}|[a-z]|edit|note \d+|[a-z ]{3,30} needed|[a-z]+\?)\]",
                       re.IGNORECASE)


BLOCKS = frozenset(
    "p div li h1 h2 h3 h4 h5 h6 tr br blockquote pre section article header footer td th dd dt "
    "figcaption caption table ul ol main aside nav form dl figure".split())
DISPLAYSTYLE = re.compile(r"^\{\\(?:displaystyle|textstyle)\s*(.*)\}$", re.DOTALL)
NOTE_SUP = re.compile(r"^\[?\s*[\w*†‡]{1,6}(?:\s*[,–-]\s*\w{1,6})*\s*\]?$")


def promise7_truth(expected_html: str) -> str:
    """readability's expected page as text (see above): formulas as their TeX, no
    citation apparatus."""
    import lxml.etree
    import lxml.html

    root = lxml.html.fromstring(expected_html)
    for img in root.iter("img"):
        alt = " ".join((img.get("alt") or "").split())
        if "/math/" in (img.get("src") or "") and alt:
            match = DISPLAYSTYLE.match(alt)
            img.tail = (match.group(1).strip() if match else alt) + (img.tail or "")
    for sup in list(root.iter("sup")):
        text = " ".join(sup.text_content().split())
        if sup.find(".//a") is not None and NOTE_SUP.match(text) and sup.getparent() is not None:
            _drop_keeping_tail(sup)
    parts: list[str] = []
    for event, element in lxml.etree.iterwalk(root, events=("start", "end")):
        if not isinstance(element.tag, str):
            continue
        if element.tag in BLOCKS:
            parts.append("\n")
        text = element.text if event == "start" else element.tail
        if text:
            parts.append(text)
    lines = (" ".join(line.split()) for line in "".join(parts).split("\n"))
    return APPARATUS.sub("", "\n".join(line for line in lines if line))


def _drop_keeping_tail(element: Any) -> None:
    parent, previous, tail = element.getparent(), element.getprevious(), element.tail or ""
    if previous is not None:
        previous.tail = (previous.tail or "") + tail
    else:
        parent.text = (parent.text or "") + tail
    parent.remove(element)


def shingles(text: str, size: int = 4) -> Counter[tuple[str, ...]]:
    words = WORD.findall(text.lower())
    return Counter(tuple(words[i : i + size]) for i in range(len(words) - size + 1))


def shingle_scores(found: str, expected: str) -> tuple[float, float, float]:
    got, want = shingles(found), shingles(expected)
    if not got and not want:
        return 1.0, 1.0, 1.0
    tp = sum((got & want).values())
    fp = sum(got.values()) - tp
    fn = sum(want.values()) - tp
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def squash(text: str) -> str:
    return " ".join(text.split())


@dataclass
class Tally:
    """Scores and time of one system on one set of pages."""

    seconds: float = 0.0
    pages: int = 0
    errors: int = 0
    per_page: list[tuple[float, float, float]] = field(default_factory=list)
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add_time(self, seconds: float) -> None:
        self.seconds += seconds
        self.pages += 1

    @property
    def ms_per_page(self) -> float:
        return 1000 * self.seconds / max(self.pages, 1)

    def shingle_mean(self) -> tuple[float, float, float]:
        n = max(len(self.per_page), 1)
        return tuple(sum(s[i] for s in self.per_page) / n for i in range(3))  # type: ignore[return-value]

    def snippet_scores(self) -> tuple[float, float, float]:
        precision = self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0
        recall = self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return precision, recall, f1


def fetchledger_text(raw: bytes) -> str:
    from fetchledger.adapters.extract import decode_html, extract_html

    return extract_html(decode_html(raw), "https://page.example/").text


def trafilatura_text(raw: bytes) -> str:
    import trafilatura

    return trafilatura.extract(raw) or ""


SYSTEMS: dict[str, Callable[[bytes], str]] = {
    "fetchledger": fetchledger_text,
    "trafilatura": trafilatura_text,
}


def run_page(raw: bytes, order: list[str], tallies: dict[str, Tally]) -> dict[str, str]:
    texts: dict[str, str] = {}
    for name in order:
        gc.disable()
        started = time.perf_counter()
        try:
            texts[name] = SYSTEMS[name](raw)
        except Exception:  # a crash counts as nothing extracted
            texts[name] = ""
            tallies[name].errors += 1
        tallies[name].add_time(time.perf_counter() - started)
        gc.enable()
    return texts


def readability_pages(corpus: Path) -> list[tuple[str, bytes, str, str]]:
    """Name, source bytes, readability's derived text, the promise-7 ground truth."""
    pages = []
    for folder in sorted((corpus / "readability").iterdir()):
        source, expected = folder / "source.html", folder / "expected.derived.txt"
        expected_html = folder / "expected.html"
        if source.is_file() and expected.is_file():
            derived = expected.read_text(encoding="utf-8")
            truth = (promise7_truth(expected_html.read_text(encoding="utf-8"))
                     if expected_html.is_file() else APPARATUS.sub("", derived))
            pages.append((folder.name, source.read_bytes(), derived, truth))
    return pages


def trafilatura_pages(corpus: Path) -> list[tuple[str, bytes, list[str], list[str]]]:
    annotations = json.loads((corpus / "trafilatura" / "evaldata.subset.json").read_text())
    pages = []
    for _, item in sorted(annotations.items()):
        path = corpus / "trafilatura" / "pages" / item["file"]
        if path.is_file():
            pages.append((item["file"], path.read_bytes(), list(item.get("with") or []),
                          list(item.get("without") or [])))
    return pages


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--limit", type=int, default=0, help="at most N pages per set")
    args = parser.parse_args()
    if not (args.corpus / "readability").is_dir():
        print(f"extraction benchmark skipped: no corpus at {args.corpus}")
        return 0
    sys.path.insert(0, str(ROOT / "src"))
    warm = (args.corpus / "readability" / "001" / "source.html")
    for system in SYSTEMS.values():  # imports and caches, outside the timing
        system(warm.read_bytes() if warm.is_file() else b"<html><p>warm up</p></html>")

    read_tallies = {name: Tally() for name in SYSTEMS}
    clean_tallies = {name: Tally() for name in SYSTEMS}
    both_high = misses = 0
    names = list(SYSTEMS)
    pages = readability_pages(args.corpus)[: args.limit or None]
    for index, (_, raw, expected, truth) in enumerate(pages):
        order = names if index % 2 == 0 else names[::-1]
        texts = run_page(raw, order, read_tallies)
        scores = {name: shingle_scores(texts[name], expected) for name in names}
        for name in names:
            read_tallies[name].per_page.append(scores[name])
            clean_tallies[name].per_page.append(
                shingle_scores(texts[name], truth))
            clean_tallies[name].pages = read_tallies[name].pages
            clean_tallies[name].seconds = read_tallies[name].seconds
        if scores["trafilatura"][2] >= 0.95:
            both_high += 1
            misses += scores["fetchledger"][2] < 0.95

    traf_tallies = {name: Tally() for name in SYSTEMS}
    snippet_pages = trafilatura_pages(args.corpus)[: args.limit or None]
    for index, (_, raw, wanted, unwanted) in enumerate(snippet_pages):
        order = names if index % 2 == 0 else names[::-1]
        texts = run_page(raw, order, traf_tallies)
        for name in names:
            text = squash(texts[name])
            tally = traf_tallies[name]
            for snippet in wanted:
                if squash(snippet) in text:
                    tally.tp += 1
                else:
                    tally.fn += 1
            tally.fp += sum(1 for snippet in unwanted if squash(snippet) in text)

    print(f"Extraction on {args.corpus} ({len(pages)} readability pages, "
          f"{len(snippet_pages)} trafilatura pages)\n")
    print(f"{'set':<13} {'system':<12} {'pages':>5} {'precision':>9} {'recall':>7} "
          f"{'F1':>6} {'ms/page':>8} {'errors':>6}")
    for label, tallies, scorer in (("readability", read_tallies, Tally.shingle_mean),
                                   ("readability*", clean_tallies, Tally.shingle_mean),
                                   ("trafilatura", traf_tallies, Tally.snippet_scores)):
        for name in names:
            tally = tallies[name]
            precision, recall, f1 = scorer(tally)
            print(f"{label:<13} {name:<12} {tally.pages:>5} {precision:>9.4f} {recall:>7.4f} "
                  f"{f1:>6.4f} {tally.ms_per_page:>8.1f} {tally.errors:>6}")
    ours_read, theirs_read = (read_tallies[n].shingle_mean()[2] for n in names)
    ours_snip, theirs_snip = (traf_tallies[n].snippet_scores()[2] for n in names)
    ours_time = read_tallies["fetchledger"].seconds + traf_tallies["fetchledger"].seconds
    theirs_time = read_tallies["trafilatura"].seconds + traf_tallies["trafilatura"].seconds
    ratio = ours_time / theirs_time if theirs_time else float("inf")
    print("\nTargets")
    print(f"  never below trafilatura alone: readability F1 {ours_read:.4f} vs "
          f"{theirs_read:.4f}, snippets F1 {ours_snip:.4f} vs {theirs_snip:.4f} -> "
          f"{'met' if ours_read >= theirs_read and ours_snip >= theirs_snip else 'NOT met'}")
    print(f"  F1 >= 0.95 where trafilatura reaches it: {both_high - misses}/{both_high} pages "
          f"-> {'met' if not misses else 'NOT met'}")
    print(f"  time <= 1.2x trafilatura: {ratio:.2f}x -> {'met' if ratio <= 1.2 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
