"""PDF reading: quote fidelity and speed of fetchledger beside plain pypdf and plain
pypdfium2 (PDFium), all measured in the same run.

Uses ../shared/corpus/pdf (its rows skip cleanly when it is absent) and two
two-column papers written by ``tests/pdfgen.py`` (one drawn column by column
as pdfTeX does, one drawn row by row as some word processors do; their
sentences are known). The three sides read the same files with the same
passwords:

- plain pypdf: ``PdfReader`` + ``page.extract_text()`` in this process;
- plain pypdfium2: ``PdfDocument`` + ``get_textpage().get_text_range()``;
- fetchledger: ``Ledger.read`` into a fresh ledger (engine choice in the limited
  child, paragraphs joined, passage split, ranking, SQLite write). ``--engine``
  runs it with ``Limits.pdf_engine`` set (auto, pdfium, pypdf).

Fidelity (each number can only be earned verbatim, after NFKC and collapsing
whitespace):

- *expected lines found*: lines of upstream expected text (``crazyones.txt``,
  the JPEG PDF's sentence, pypdf's layout text of ``toy.pdf`` and of the
  two-column file, split at its gutter, the forms file's labels) found in the
  text; a line that ends in a hyphen counts when the text goes on with the
  rejoined word;
- *sentences quotable*: expected sentences (Crazy Ones, the LaTeX source of the
  minimal document, the authored papers) found whole inside ONE line of the
  text (a snippet never crosses a line, so only then can it be quoted);
- *column order kept*: of the expected lines (sentences, for the papers) of
  the two-column files found, the share found after the previous one, each
  searched from where the last was found;
- *reference sentences quotable*: sentences of pypdf's and of PDFium's own page
  text with lines joined, found whole in one line (neither engine's favourite);
- *quotes verbatim*: every snippet fetchledger hands out is ``text[start:end]``
  of the stored text and holds no line break.

Speed: pages per second over the corpus files every side reads (best of 3 per
file); the 14-page authored paper in seconds (best of 5): each plain engine's
extraction alone, then fetchledger's ``read`` of a file it has not seen
(extract + register) and its parts: an empty child process, the extraction
(``read_pdf``) and the registration (``Ledger.register``).
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import logging
import re
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
sys.path.insert(0, str(ROOT / "tests"))

from fetchledger import Ledger, Limits, RetrievalFailed
from fetchledger.adapters.pdf import read_pdf
from fetchledger.adapters.sandbox import ChildLimits, run_in_child
from pdfgen import paper_pdf

SIDES = ("pypdf", "pdfium", "fetchledger")
CRAZY = "pypdf/crazyones.txt"
EXPECTED_LINES = {  # file -> (expected text file or literal text, layout columns?)
    "pypdf/crazyones.pdf": (CRAZY, False),
    "sample-files/021/crazyones-pdfa.pdf": (CRAZY, False),
    "pypdf/crazyones-encrypted-256.pdf": (CRAZY, False),
    "pypdf/jpeg.pdf": ("=A PDF with a JPEG image.", False),
    "pypdf/toy.pdf": ("pypdf/toy.layout.txt", False),
    "sample-files/010/pdflatex-forms.pdf": ("pypdf/010-pdflatex-forms.txt", False),
    "sample-files/026/multicolumn.pdf": ("pypdf/multicolumn-lorem-ipsum.txt", True),
}
EXPECTED_SENTENCES = {
    "pypdf/crazyones.pdf": CRAZY,
    "sample-files/021/crazyones-pdfa.pdf": CRAZY,
    "pypdf/crazyones-encrypted-256.pdf": CRAZY,
    "sample-files/001-trivial/minimal-document.pdf":
        "sample-files/001-trivial/minimal-document.tex",
}
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"“(])")


def norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    return " ".join(text.split())


def sentences(text: str, min_words: int = 4) -> list[str]:
    return [s for s in _SENTENCE_SPLIT.split(norm(text)) if len(s.split()) >= min_words]


def lines_of(text: str) -> list[str]:
    return [norm(line) for line in text.splitlines() if line.strip()]


def quotable(wanted: list[str], lines: list[str]) -> int:
    return sum(1 for s in wanted if any(s in line for line in lines))


def line_position(line: str, flat: str) -> int:
    """Where an expected line stands in ``flat`` text (-1: not found). A line
    ending in a hyphen is found when the text goes on with the rejoined word."""
    at = flat.find(line)
    if at < 0 and line.endswith("-"):
        at = flat.find(line[:-1])
    return at


def layout_lines(text: str, columns: bool) -> list[str]:
    """Expected lines in reading order; a layout text of two columns is split at its
    gutter (a character column blank on every line) and read left column first."""
    raw = [line.rstrip() for line in text.splitlines()]
    if not columns:
        return [norm(line) for line in raw if line.strip()]
    width = max(len(line) for line in raw)
    rows = [line for line in raw if len(line) >= 0.6 * width]  # lines of both columns
    blank = [all(line[x] == " " for line in rows) for x in range(width) if x < min(map(len, rows))]
    middle = [x for x in range(int(0.35 * width), int(0.65 * width)) if x < len(blank) and blank[x]]
    cut = middle[len(middle) // 2]
    first_row = next(n for n, line in enumerate(raw) if line[:cut].strip()
                     and line[cut:].strip() and line[cut - 1 : cut + 1] == "  ")
    head, body = raw[:first_row], raw[first_row:]  # the title block spans both columns
    left = [norm(line[:cut]) for line in body if line[:cut].strip()]
    right = [norm(line[cut:]) for line in body if line[cut:].strip()]
    return [norm(line) for line in head if line.strip()] + left + right


def expected_text(spec: str) -> str:
    if spec.startswith("="):
        return spec[1:]
    text = (CORPUS / spec).read_text()
    if spec.endswith(".tex"):
        body = text.split("\\begin{document}", 1)[1].split("\\end{document}", 1)[0]
        return body
    return text


def joined_page_text(page_text: str) -> str:
    """An engine's page text with its lines joined (words hyphenated at a line end
    rejoined, lines without letters such as page numbers left out)."""
    page_text = page_text.replace("\ufffe", "-\n").replace("\x02", "-\n")
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


def plain_pypdf(data: bytes, password: str | None) -> list[str]:
    import pypdf

    reader = pypdf.PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        reader.decrypt(password or "")
    return [page.extract_text() or "" for page in reader.pages]


def plain_pdfium(data: bytes, password: str | None) -> list[str]:
    import pypdfium2

    pdf = pypdfium2.PdfDocument(data, password=password)
    try:
        return [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    finally:
        pdf.close()


PLAIN = {"pypdf": plain_pypdf, "pdfium": plain_pdfium}


def measure(name: str, data: bytes, password: str | None, ledger: Ledger,
            folder: Path) -> dict[str, Any]:
    row: dict[str, Any] = {"name": name, "text": {}, "time": {}, "error": {}}
    for side, extract in PLAIN.items():
        try:
            row["time"][side], pages = best_of(3, lambda e=extract: e(data, password))  # type: ignore[misc]
            row["text"][side] = "\n".join(pages)
            row.setdefault("page_texts", {})[side] = pages
            row["pages"] = len(pages)
        except Exception as exc:  # plain engines fail on some corpus files: that is the point
            row["error"][side] = type(exc).__name__
    path = folder / Path(name).name
    path.write_bytes(data)
    try:
        row["time"]["fetchledger"], got = best_of(
            3, lambda: ledger.read(path, password=password, k=5))
        stored = ledger.text(got.source.id)
        words = stored.split()
        query = " ".join(words[len(words) // 2:][:3])
        queried = ledger.read(path, password=password, query=query or None)
        snippets = [*got.snippets, *queried.snippets]
        row["quotes"] = len(snippets)
        row["verbatim"] = sum(1 for s in snippets
                              if stored[s.start : s.end] == s.quote and "\n" not in s.quote)
        row["text"]["fetchledger"] = stored
        row["extractor"] = ledger.details(got.source.id).versions[-1]["extractor"]
    except RetrievalFailed as failed:
        row["error"]["fetchledger"] = failed.status
    return row


def score(rows: list[dict[str, Any]], papers: dict[str, list[str]]) -> dict[str, Any]:
    out: dict[str, Any] = {k: {s: [0, 0] for s in SIDES} for k in (
        "lines", "sentences", "order", "ref_pypdf", "ref_pdfium", "paper_sentences",
        "paper_order")}
    for r in rows:
        for side in SIDES:
            text = r["text"].get(side)
            if text is None:
                continue
            lines, flat = lines_of(text), norm(text)
            spec = EXPECTED_LINES.get(r["name"])
            if spec:
                wanted = layout_lines(expected_text(spec[0]), spec[1])
                positions = [line_position(w, flat) for w in wanted]
                found = [p for p in positions if p >= 0]
                _add(out["lines"][side], len(found), len(wanted))
                if spec[1]:
                    _add(out["order"][side], *in_order(wanted, flat))
            if r["name"] in EXPECTED_SENTENCES:
                wanted = sentences(expected_text(EXPECTED_SENTENCES[r["name"]]), min_words=1)
                _add(out["sentences"][side], quotable(wanted, lines), len(wanted))
            if r["name"] in papers:
                wanted = papers[r["name"]]
                _add(out["paper_sentences"][side], quotable(wanted, lines), len(wanted))
                _add(out["paper_order"][side], *in_order(wanted, flat))
            for engine in PLAIN:
                if r["name"] in papers or engine not in r["text"]:
                    continue
                reference = [s for page in r["page_texts"][engine]
                             for s in sentences(joined_page_text(page))]
                _add(out[f"ref_{engine}"][side], quotable(reference, lines), len(reference))
    return out


def in_order(wanted: list[str], flat: str) -> tuple[int, int]:
    """Of the wanted lines found in ``flat``, how many are found after the previous
    one found in order (each searched from there on, so a repeated line does not
    count as out of order)."""
    position, kept, found = 0, 0, 0
    for line in wanted:
        if line_position(line, flat) < 0:
            continue
        found += 1
        at = flat.find(line, position)
        if at < 0 and line.endswith("-"):
            at = flat.find(line[:-1], position)
        if at >= 0:
            kept += 1
            position = at + 1
    return kept, found


def _add(cell: list[int], part: int, whole: int) -> None:
    cell[0] += part
    cell[1] += whole


def speed_of_a_paper(ledger: Ledger, folder: Path, limits: Limits) -> dict[str, float]:
    """Seconds for the 14-page paper, best of 5: each plain engine's extraction; then
    fetchledger's ``read`` of a file it has not seen (5 copies under new names), and
    its parts: an empty child process, ``read_pdf`` (extraction), ``register`` of the
    extracted document under a new locator (passages, ranking, SQLite write)."""
    data, _ = paper_pdf(14)
    copies = []
    for n in range(5):
        copies.append(folder / f"paper-14-pages-{n}.pdf")
        copies[-1].write_bytes(data)
    times = {side: best_of(5, lambda e=extract: e(data, None))[0]  # type: ignore[misc]
             for side, extract in PLAIN.items()}
    unread = iter(copies)
    times["read"] = best_of(5, lambda: ledger.read(next(unread)))[0]
    times["extract"], document = best_of(5, lambda: read_pdf(
        data, locator=str(copies[0]), meta={}, limits=limits, name=copies[0].name))
    fresh = iter(range(5))
    times["register"] = best_of(5, lambda: ledger.register(dataclasses.replace(
        document, locator=f"{document.locator}.{next(fresh)}")))[0]
    child = ChildLimits(limits.pdf_timeout, limits.pdf_memory, limits.max_decoded_bytes)
    times["child"] = best_of(5, lambda: run_in_child("__main__:noop", data, {}, child))[0]
    return times


def noop(payload: bytes, params: dict[str, Any], emit: Callable[[dict[str, Any]], None]) -> None:
    """A sandbox job that does nothing: what the child process costs by itself."""
    emit({"t": "doc"})


def report(rows: list[dict[str, Any]], scores: dict[str, Any], paper: dict[str, float],
           engine: str) -> None:
    import pypdf
    import pypdfium2.version

    print(f"PDF benchmark — corpus {CORPUS} ({len(rows) - 2} PDFs) + 2 authored two-column "
          f"papers — pypdf {pypdf.__version__}, pypdfium2 {pypdfium2.version.PYPDFIUM_INFO} "
          f"(PDFium {str(pypdfium2.version.PDFIUM_INFO).split('@')[0]}), fetchledger engine "
          f"{engine}, Python {sys.version.split()[0]}\n")

    def pct(cell: list[int]) -> str:
        part, whole = cell
        return f"{part / whole:.1%} ({part}/{whole})" if whole else "n/a"

    read_by_all = [r for r in rows if not r["error"] and r["name"].endswith(".pdf")
                   and not r["name"].startswith("authored/")]
    pages = sum(r["pages"] for r in read_by_all)
    table = [
        (f"files read without error (of {len(rows)}; fetchledger: registered)",
         *[str(sum(1 for r in rows if side not in r["error"])) for side in SIDES]),
        ("expected lines found (upstream texts)", *[pct(scores["lines"][s]) for s in SIDES]),
        ("sentences quotable, one line (upstream)",
         *[pct(scores["sentences"][s]) for s in SIDES]),
        ("sentences quotable, one line (authored papers)",
         *[pct(scores["paper_sentences"][s]) for s in SIDES]),
        ("column order kept (026 two-column file)", *[pct(scores["order"][s]) for s in SIDES]),
        ("column order kept (authored papers)",
         *[pct(scores["paper_order"][s]) for s in SIDES]),
        ("reference sentences quotable (pypdf's text)",
         *[pct(scores["ref_pypdf"][s]) for s in SIDES]),
        ("reference sentences quotable (PDFium's text)",
         *[pct(scores["ref_pdfium"][s]) for s in SIDES]),
        (f"pages/s, corpus files all read ({pages} pages)",
         *[f"{pages / sum(r['time'][s] for r in read_by_all):,.0f}" for s in SIDES]),
        ("14-page paper: seconds (fetchledger = read)",
         f"{paper['pypdf']:.3f}", f"{paper['pdfium']:.3f}", f"{paper['read']:.3f}"),
        ("  ... parts: child start-up / extract / register", "—", "—",
         f"{paper['child']:.3f} / {paper['extract']:.3f} / {paper['register']:.3f}"),
        ("quotes handed out verbatim, one line", "—", "—",
         pct([sum(r.get("verbatim", 0) for r in rows), sum(r.get("quotes", 0) for r in rows)])),
    ]
    headers = ("metric", "plain pypdf", "plain pypdfium2", "fetchledger")
    widths = [max(len(str(row[i])) for row in [headers, *table]) for i in range(4)]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in table:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True))
              + " |")
    errors = {side: Counter(r["error"][side] for r in rows if side in r["error"])
              for side in SIDES}
    print(f"\nerrors: {json.dumps({s: dict(c) for s, c in errors.items()})}")
    print(f"fetchledger extractor per file: "
          f"{dict(Counter(r.get('extractor', '-') for r in rows))}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--engine", default="auto", choices=("auto", "pdfium", "pypdf"))
    args = parser.parse_args()
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    limits = Limits(pdf_engine=args.engine)
    inputs: list[tuple[str, bytes, str | None]] = []
    if (CORPUS / "manifest.json").is_file():
        manifest = {e["file"]: e for e in json.loads((CORPUS / "manifest.json").read_text())}
        inputs += [(name, (CORPUS / name).read_bytes(), password_for(manifest[name]))
                   for name in sorted(manifest) if name.endswith(".pdf")]
    else:
        print(f"(the PDF corpus is absent: {CORPUS}; authored papers only)")
    papers: dict[str, list[str]] = {}
    for interleaved in (False, True):
        name = f"authored/paper-{'rows' if interleaved else 'columns'}.pdf"
        data, wanted = paper_pdf(4, interleaved=interleaved, seed=11)
        papers[name] = wanted
        inputs.append((name, data, None))
    with tempfile.TemporaryDirectory() as folder, \
            Ledger(Path(folder) / "bench.db", limits=limits) as ledger:
        rows = [measure(name, data, password, ledger, Path(folder))
                for name, data, password in inputs]
        paper = speed_of_a_paper(ledger, Path(folder), limits)
    report(rows, score(rows, papers), paper, args.engine)
    return 0


if __name__ == "__main__":
    sys.exit(main())
