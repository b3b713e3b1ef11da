"""PDF reading: speed and quote fidelity of fetchledger beside plain pypdf, same run.

Uses ../shared/corpus/pdf (skips cleanly when it is absent). Both sides read
the same files with the same passwords (from the corpus manifest):

- plain pypdf: ``PdfReader`` + ``page.extract_text()`` in this process;
- fetchledger extract: ``read_pdf`` (a limited child process, paragraphs
  joined, ligatures expanded), no ledger;
- fetchledger read: ``Ledger.read`` into a fresh ledger (extraction, passage
  split, ranking, SQLite write).

Speed: pages per second over the files both sides read, best of 3 runs per
file, and the median extra time per file (the child process and paragraphing).

Fidelity, defined so that each number can only be earned verbatim:

- *ground-truth sentences quotable*: sentences of the upstream projects'
  expected text (``crazyones.txt`` for the three Crazy Ones PDFs, the JPEG
  PDF's one sentence), NFKC-normalized, found whole inside ONE line of the
  text (a snippet never crosses a line, so only then can it be quoted);
- *ground-truth words recalled*: share of the expected text's word tokens
  (lowercased, NFKC) present in the extracted text, counted as multisets
  (also for the two-column and forms files, whose expected text is a layout);
  the expected two-column text hyphenates words at line ends ("adip-" /
  "iscing"), which fetchledger rejoins ("adipiscing"), so a second row counts
  such a split word as found when the whole word is there;
- *reference sentences quotable*: across every readable corpus PDF, the
  sentences of pypdf's own page text with its lines joined (hyphenated line
  ends rejoined, lines without letters left out), found whole inside one line
  of each side's text;
- *quotes verbatim*: every snippet fetchledger hands out (5 leading snippets
  and 3 for a query per file) is ``text[start:end]`` of the stored text and
  holds no line break.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import tempfile
import time
import unicodedata
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPUS = next((p for p in (ROOT.parent / "shared" / "corpus" / "pdf",
                ROOT.parent.parent / "shared" / "corpus" / "pdf") if p.is_dir()),
              ROOT.parent / "shared" / "corpus" / "pdf")
sys.path.insert(0, str(ROOT / "src"))

from fetchledger import Ledger, Limits, RetrievalFailed
from fetchledger.adapters.pdf import read_pdf

GROUND_TRUTH_SENTENCES = {
    "pypdf/crazyones.pdf": "pypdf/crazyones.txt",
    "sample-files/021/crazyones-pdfa.pdf": "pypdf/crazyones.txt",
    "pypdf/crazyones-encrypted-256.pdf": "pypdf/crazyones.txt",
}
GROUND_TRUTH_TEXT = {"pypdf/jpeg.pdf": "A PDF with a JPEG image."}
GROUND_TRUTH_WORDS = {
    **GROUND_TRUTH_SENTENCES,
    "sample-files/026/multicolumn.pdf": "pypdf/multicolumn-lorem-ipsum.txt",
    "sample-files/010/pdflatex-forms.pdf": "pypdf/010-pdflatex-forms.txt",
}
_WORD = re.compile(r"\w+")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"“(])")


def norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def sentences(text: str, min_words: int = 4) -> list[str]:
    return [s for s in _SENTENCE_SPLIT.split(norm(text)) if len(s.split()) >= min_words]


def lines_of(text: str) -> list[str]:
    return [norm(line) for line in text.splitlines() if line.strip()]


def quotable(wanted: list[str], lines: list[str]) -> int:
    return sum(1 for s in wanted if any(s in line for line in lines))


def word_recall(expected: str, got: str, *, rejoin: bool = False) -> tuple[int, int]:
    """Expected word tokens found in ``got`` (multisets). With ``rejoin``, the two
    halves of a word the expected text hyphenates at a line end ("adip-" + "iscing")
    count as found when ``got`` holds the whole word ("adipiscing")."""
    want = Counter(w.lower() for w in _WORD.findall(norm(expected)))
    have = Counter(w.lower() for w in _WORD.findall(norm(got)))
    if rejoin:
        firsts = {m.group(1).lower() for m in re.finditer(r"(\w+)-[ \t]*(?:\n|  )", expected)}
        for word, count in list(have.items()):
            for first in firsts:
                rest = word[len(first):]
                if word.startswith(first) and rest and want[first] > have[first] \
                        and want[rest] > have[rest]:
                    have[first] += count
                    have[rest] += count
    return sum(min(c, have[w]) for w, c in want.items()), sum(want.values())


def joined_page_text(page_text: str) -> str:
    """pypdf's page text with its lines joined (words hyphenated at a line end
    rejoined, lines without letters such as page numbers left out): the
    sentences a reader of the page sees."""
    lines = [line for line in page_text.splitlines() if any(ch.isalpha() for ch in line)]
    text = re.sub(r"(\w)-[ \t]*\n(?=[a-z])", r"\1", "\n".join(lines))
    return norm(text.replace("\n", " "))


def best_of(runs: int, work: Callable[[], Any]) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(runs):
        started = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - started)
    return best, result


def password_for(entry: dict[str, Any]) -> str | None:
    password = entry.get("password")
    return None if not password or password.startswith("owner=") else str(password)


def plain_pypdf(path: Path, password: str | None) -> list[str]:
    import pypdf

    reader = pypdf.PdfReader(path)
    if reader.is_encrypted:
        reader.decrypt(password or "")
    return [page.extract_text() or "" for page in reader.pages]


def main() -> int:
    if not (CORPUS / "manifest.json").is_file():
        print(f"skipped: the PDF corpus is absent ({CORPUS})")
        return 0
    import logging

    import pypdf

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    manifest = {e["file"]: e for e in json.loads((CORPUS / "manifest.json").read_text())}
    files = sorted(f for f in manifest if f.endswith(".pdf"))
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder, Ledger(Path(folder) / "bench.db") as ledger:
        for name in files:
            rows.append(measure(name, manifest[name], ledger))
    report(rows, pypdf.__version__)
    return 0


def measure(name: str, entry: dict[str, Any], ledger: Ledger) -> dict[str, Any]:
    path = CORPUS / name
    raw = path.read_bytes()
    password = password_for(entry)
    row: dict[str, Any] = {"name": name}
    try:
        row["plain_time"], pages = best_of(3, lambda: plain_pypdf(path, password))
        row["plain_pages"] = pages
    except Exception as exc:  # plain pypdf fails on some corpus files: that is the point
        row["plain_error"] = type(exc).__name__
    try:
        row["extract_time"], doc = best_of(3, lambda: read_pdf(
            raw, locator=str(path), meta={}, limits=Limits(), password=password,
            name=path.name))
        row["doc"] = doc
        row["read_time"], got = best_of(1, lambda: ledger.read(path, password=password, k=5))
        query = " ".join(doc.text.split()[len(doc.text.split()) // 2:][:3])
        queried = ledger.read(path, password=password, query=query or None)
        stored = ledger.text(got.source.id)
        snippets = [*got.snippets, *queried.snippets]
        row["quotes"] = len(snippets)
        row["verbatim"] = sum(1 for s in snippets if stored[s.start : s.end] == s.quote
                              and "\n" not in s.quote)
        row["stored"] = stored
    except RetrievalFailed as failed:
        row["status"] = failed.status
    return row


def report(rows: list[dict[str, Any]], pypdf_version: str) -> None:
    both = [r for r in rows if "plain_pages" in r and "doc" in r]
    pages = sum(len(r["plain_pages"]) for r in both)
    plain_time = sum(r["plain_time"] for r in both)
    extract_time = sum(r["extract_time"] for r in both)
    read_time = sum(r["read_time"] for r in both)
    overhead = statistics.median(r["extract_time"] - r["plain_time"] for r in both)

    gt_total = gt_plain = gt_fl = 0
    words = {"plain": [0, 0], "fl": [0, 0], "plain_whole": [0, 0], "fl_whole": [0, 0]}
    ref_total = ref_plain = ref_fl = 0
    for r in both:
        plain_lines = lines_of("\n".join(r["plain_pages"]))
        fl_lines = lines_of(r["stored"])
        expected_file = GROUND_TRUTH_SENTENCES.get(r["name"])
        expected = ((CORPUS / expected_file).read_text() if expected_file
                    else GROUND_TRUTH_TEXT.get(r["name"]))
        if expected:
            wanted = sentences(expected, min_words=1)
            gt_total += len(wanted)
            gt_plain += quotable(wanted, plain_lines)
            gt_fl += quotable(wanted, fl_lines)
        words_file = GROUND_TRUTH_WORDS.get(r["name"])
        if words_file:
            expected_words = (CORPUS / words_file).read_text()
            for key, text in (("plain", "\n".join(r["plain_pages"])), ("fl", r["stored"])):
                for suffix, rejoin in (("", False), ("_whole", True)):
                    found, total = word_recall(expected_words, text, rejoin=rejoin)
                    words[key + suffix][0] += found
                    words[key + suffix][1] += total
        reference = [s for page in r["plain_pages"] for s in sentences(joined_page_text(page))]
        ref_total += len(reference)
        ref_plain += quotable(reference, plain_lines)
        ref_fl += quotable(reference, fl_lines)
    quotes = sum(r.get("quotes", 0) for r in rows)
    verbatim = sum(r.get("verbatim", 0) for r in rows)

    def pct(part: int, whole: int) -> str:
        return f"{part / whole:.1%} ({part}/{whole})" if whole else "n/a"

    outcomes = Counter(r.get("status", "registered") for r in rows)
    plain_failures = Counter(r["plain_error"] for r in rows if "plain_error" in r)
    with_text = [r for r in rows if any(p.strip() for p in r.get("plain_pages", []))]
    table = [
        (f"files giving text (of {len(rows)} PDFs)", str(len(with_text)),
         str(len([r for r in rows if "doc" in r]))),
        (f"pages/s (files both read, {pages} pages)", f"{pages / plain_time:,.0f}",
         f"{pages / extract_time:,.0f} extract / {pages / read_time:,.0f} read+register"),
        ("median extra time per file", "—", f"{overhead * 1000:+.1f} ms (extract)"),
        ("ground-truth sentences quotable", pct(gt_plain, gt_total), pct(gt_fl, gt_total)),
        ("ground-truth words recalled", pct(*words["plain"]), pct(*words["fl"])),
        ("  ... hyphen-split words counted whole", pct(*words["plain_whole"]),
         pct(*words["fl_whole"])),
        ("reference sentences quotable", pct(ref_plain, ref_total), pct(ref_fl, ref_total)),
        ("quotes handed out verbatim, one line", "—", pct(verbatim, quotes)),
    ]
    print(f"PDF benchmark — corpus {CORPUS} — pypdf {pypdf_version}, Python "
          f"{sys.version.split()[0]}")
    width = max(len(t[0]) for t in table)
    cols = (width, max(len(t[1]) for t in table), max(len(t[2]) for t in table))
    print(f"{'metric':<{cols[0]}} | {'plain pypdf':<{cols[1]}} | fetchledger")
    print(f"{'-' * cols[0]}-|-{'-' * cols[1]}-|-{'-' * cols[2]}")
    for metric, plain, ours in table:
        print(f"{metric:<{cols[0]}} | {plain:<{cols[1]}} | {ours}")
    print(f"\nfetchledger outcomes: {dict(sorted(outcomes.items()))}")
    if plain_failures:
        print(f"plain pypdf exceptions: {dict(plain_failures)}")


if __name__ == "__main__":
    sys.exit(main())
