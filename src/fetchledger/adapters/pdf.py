"""PDF files: text per page (PDFium, pypdf where it reads a page better), wrapped
lines joined, page numbers and labels.

Both engines run in a limited child process (:mod:`.sandbox`): a hostile file
cannot hang, exhaust or crash the caller. The child sends one frame about the
document, then one per page; this process turns them into stored text (one
paragraph per line, see :mod:`.pdftext`) with a :class:`~fetchledger.document.Page`
span per physical page, so passages never cross a page.

The choice rule (``Limits.pdf_engine="auto"``): PDFium opens the document
and reads every page; a page whose PDFium text is empty (on a page without
images), looks garbled, has 5 % of its glyphs without a Unicode mapping, or
holds right-to-left script is read by pypdf as well, and pypdf's text is
kept when it scores better (text over none, clean over garbled, logical
right-to-left order, fewer unmapped glyphs). A file PDFium cannot parse is
read by pypdf alone; a child that PDFium crashes (an abort on a memory cap) is
run again with pypdf alone in the time left. The version records which
engine produced each page (``meta["engines"]``) and ``extractor`` names the
engines used.

Failures map to attempts: an encrypted file without (or with a wrong)
password is ``needs_password``; pages that hold only images are
``no_text_layer``; a file neither engine can parse, or whose extraction runs
past the time limit, is ``corrupt``; one that needs more memory or yields more
text than the limits allow is ``too_large``. A page that fails on its own
leaves the others readable and is named in ``Document.warnings``, as are
image-only pages and text that looks garbled (a broken font mapping).
"""

from __future__ import annotations

import contextlib
import faulthandler
import functools
import re
import time
from typing import Any

from ..config import Limits
from ..document import KINDS, Document, Kind, Page
from ..errors import (
    CorruptContent,
    EmptyContent,
    NeedsPassword,
    NoTextLayer,
    RetrievalFailed,
    TooLarge,
)
from ..text.normalize import one_line
from .pdfengines import (
    Engine,
    OpenFailed,
    PageText,
    PdfiumEngine,
    PypdfEngine,
    open_engine,
)
from .pdftext import (
    garbled_reason,
    heading_title,
    page_paragraphs,
    plausible_info_title,
    vocabulary,
)
from .sandbox import ChildFailed, ChildLimits, Emit, run_in_child

__all__ = ["PDF_ENGINES", "PDF_REVISION", "extract_pages", "read_pdf"]

PDF_ENGINES = ("auto", "pdfium", "pypdf")

# Bumped whenever the stored text of the same PDF bytes changes for a reason of ours
# (paragraph joining, page assembly, normalization), as the engines' own versions say
# when theirs does: ``reextract`` then finds the text of an older version may differ.
# 2: text in NFC without invisible format characters (issue 11).
# 3: direction marks (LRM, RLM, ALM) and U+180E invisible too.
PDF_REVISION = 3

_ENTRY = "fetchledger.adapters.pdf:extract_pages"


def read_pdf(
    raw: bytes,
    *,
    locator: str,
    meta: dict[str, Any],
    limits: Limits,
    password: str | None = None,
    name: str = "",
    kind: str = "file",
) -> Document:
    """Extract a PDF's text page by page into a Document with page spans (the whole
    document: quotes are limited to requested pages when they are handed out)."""
    if kind not in KINDS:
        raise ValueError(f"unknown source kind {kind!r}")
    engine = limits.pdf_engine
    if engine not in PDF_ENGINES:
        raise ValueError(f"unknown PDF engine {engine!r} (one of {', '.join(PDF_ENGINES)})")
    _preload()
    deadline = time.monotonic() + limits.pdf_timeout
    params = {"password": password, "max_pages": limits.max_pdf_pages, "engine": engine}
    try:
        frames = _run(raw, params, limits, deadline)
    except ChildFailed as failed:
        if engine != "auto" or failed.reason != "crashed":
            raise _child_error(failed, locator, limits) from None
        # PDFium aborted the child (it aborts when an allocation hits the memory
        # cap): pypdf alone gets the time that is left.
        try:
            frames = _run(raw, {**params, "engine": "pypdf"}, limits, deadline)
        except ChildFailed as again:
            raise _child_error(again, locator, limits) from None
    return _document(frames, raw=raw, locator=locator, meta=meta, name=name, kind=kind)


# A one-page PDF in a standard font: reading it once here sets up PDFium's font
# mapper (a scan of the system's fonts) before any fork, instead of in every child.
_WARM_UP = (b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
            b"2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n"
            b"3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 200 50] /Contents 4 0 R "
            b"/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica "
            b">> >> >> >> endobj\n4 0 obj << /Length 35 >> stream\n"
            b"BT /F1 9 Tf 9 9 Td (fetchledger) Tj ET\nendstream endobj\n"
            b"trailer << /Root 1 0 R >>\n%%EOF\n")


@functools.cache
def _preload() -> None:
    """Import both engines (and what pypdf imports lazily while extracting) and warm
    PDFium up here, once, so a forked child starts with them ready instead of doing
    it for every file."""
    import pypdf
    import pypdf._codecs._codecs
    import pypdf.filters  # noqa: F401
    import pypdfium2

    with contextlib.suppress(Exception):
        pdf = pypdfium2.PdfDocument(_WARM_UP)
        pdf[0].get_textpage().get_text_range()
        pdf.close()


def _run(
    raw: bytes, params: dict[str, Any], limits: Limits, deadline: float
) -> list[dict[str, Any]]:
    timeout = max(deadline - time.monotonic(), 0.001)
    child_limits = ChildLimits(timeout, limits.pdf_memory, limits.max_decoded_bytes)
    return run_in_child(_ENTRY, raw, params, child_limits)


def _child_error(failed: ChildFailed, locator: str, limits: Limits) -> RetrievalFailed:
    if failed.reason == "memory":
        return TooLarge(f"reading the PDF {failed.detail}", locator=locator,
                        hint="Limits(pdf_memory=...) raises the limit")
    if failed.reason == "output":
        return TooLarge(f"the PDF's text is too large: {failed.detail}", locator=locator)
    if failed.reason == "timeout":
        return CorruptContent(
            f"reading the PDF stopped: it ran past its time limit of {limits.pdf_timeout:g} s "
            "(a damaged or hostile file, or a very long one)", locator=locator,
            hint="Limits(pdf_timeout=...) raises the limit for a long document")
    return CorruptContent(f"cannot read the PDF: {failed.detail}", locator=locator)


# --- building the document from the child's frames -------------------------------------


def _document(
    frames: list[dict[str, Any]], *, raw: bytes, locator: str, meta: dict[str, Any],
    name: str, kind: Kind,
) -> Document:
    for frame in frames:
        if frame["t"] == "fail":
            raise _failure(frame, locator)
    head = next((f for f in frames if f["t"] == "doc"), None)
    if head is None:
        raise CorruptContent("cannot read the PDF: no document structure", locator=locator)
    page_frames = sorted((f for f in frames if f["t"] == "page"), key=lambda f: f["n"])
    words = vocabulary(f["text"] for f in page_frames)
    texts = [page_paragraphs(f["text"], words) for f in page_frames]
    _fail_if_nothing_readable(page_frames, texts, locator)
    labels: list[str] | None = head.get("labels")
    spans: list[Page] = []
    parts: list[str] = []
    offset = 0
    for frame, text in zip(page_frames, texts, strict=True):
        number = frame["n"]
        label = labels[number - 1] if labels and number - 1 < len(labels) else None
        if label is not None and (not label.strip() or label == str(number)):
            label = None
        start = offset
        if text:
            parts.append(text)
            offset += len(text) + 1
        spans.append(Page(start, start + len(text), number, label))
    title = (plausible_info_title(head.get("title"))
             or heading_title(next((t for t in texts if t), "")) or name or None)
    author = one_line(head["author"]) if isinstance(head.get("author"), str) else None
    engines = _engines_by_page(page_frames)
    versions: dict[str, str] = head.get("versions", {})
    return Document(
        kind=kind, locator=locator, display=locator, text="\n".join(parts), raw=raw,
        title=title, author=author or None, extractor="+".join(engines),
        extractor_version="; ".join([*(versions.get(name, name) for name in engines),
                                     f"fetchledger pdf.{PDF_REVISION}"]),
        meta={**meta, "content_type": "application/pdf", "pages": head["pages"],
              "encrypted": bool(head.get("encrypted")), "engines": engines},
        pages=tuple(spans), warnings=tuple(_warnings(page_frames, texts)),
    )


def _engines_by_page(page_frames: list[dict[str, Any]]) -> dict[str, str]:
    """Which engine produced which pages: ``{"pdfium": "1-4, 6", "pypdf": "5"}``,
    PDFium first."""
    numbers: dict[str, list[int]] = {}
    for frame in page_frames:
        numbers.setdefault(frame.get("engine", "pypdf"), []).append(frame["n"])
    order = sorted(numbers, key=lambda name: (name != "pdfium", name))
    return {name: _ranges(numbers[name]) for name in order}


def _failure(frame: dict[str, Any], locator: str) -> RetrievalFailed:
    classes: dict[str, type[RetrievalFailed]] = {
        "needs_password": NeedsPassword, "too_large": TooLarge,
        "empty_content": EmptyContent, "corrupt": CorruptContent,
    }
    cls = classes.get(frame.get("status", ""), CorruptContent)
    return cls(str(frame.get("message", "cannot read the PDF")), locator=locator,
               hint=frame.get("hint"))


def _fail_if_nothing_readable(
    page_frames: list[dict[str, Any]], texts: list[str], locator: str
) -> None:
    if any(texts):
        return
    count = len(page_frames)
    errors = [f for f in page_frames if f.get("error")]
    if errors and len(errors) == count:
        first = errors[0]
        if any(f.get("error_kind") == "memory" for f in errors):
            raise TooLarge(f"no page of the PDF could be read: page {first['n']}: "
                           f"{first['error']}", locator=locator)
        raise CorruptContent(f"no page of the PDF could be read: page {first['n']}: "
                             f"{first['error']}", locator=locator)
    if any(f.get("images") for f in page_frames):
        pages = "the page has no" if count == 1 else f"none of the {count} pages has a"
        raise NoTextLayer(f"{pages} text layer, only images (a scan?)", locator=locator,
                          hint="run OCR on it first, then read the result")
    raise EmptyContent(f"the PDF's {count} page{'s' if count != 1 else ''} hold no text",
                       locator=locator)


def _warnings(page_frames: list[dict[str, Any]], texts: list[str]) -> list[str]:
    warnings: list[str] = []
    failed = [f for f in page_frames if f.get("error")]
    if failed:
        warnings.append(
            f"{_pages_phrase([f['n'] for f in failed])} could not be read "
            f"({failed[0]['error']}); {_their(failed)} text is missing")
    scanned = [f["n"] for f, text in zip(page_frames, texts, strict=True)
               if not text and f.get("images") and not f.get("error")]
    if scanned:
        warnings.append(f"{_pages_phrase(scanned)} {'has' if len(scanned) == 1 else 'have'} "
                        "no text layer, only images; OCR the file to quote "
                        f"{'it' if len(scanned) == 1 else 'them'}")
    garbled = [(f["n"], reason) for f, text in zip(page_frames, texts, strict=True)
               if (reason := garbled_reason(text))]
    if garbled:
        numbers = [n for n, _ in garbled]
        warnings.append(
            f"the text of {_pages_phrase(numbers).lower()} looks garbled ({garbled[0][1]}): "
            "the PDF's fonts do not map their glyphs to the right characters, so quotes "
            f"from {'it' if len(numbers) == 1 else 'them'} may be nonsense")
    return warnings


def _their(frames: list[dict[str, Any]]) -> str:
    return "its" if len(frames) == 1 else "their"


def _pages_phrase(numbers: list[int]) -> str:
    """``Page 3``, ``Pages 1-4, 7``."""
    noun = "Page" if len(numbers) == 1 else "Pages"
    return f"{noun} {_ranges(numbers)}"


def _ranges(numbers: list[int]) -> str:
    """``1-4, 7`` for ascending page numbers."""
    ranges: list[str] = []
    start = previous = numbers[0]
    for number in [*numbers[1:], None]:
        if number is not None and number == previous + 1:
            previous = number
            continue
        ranges.append(str(start) if start == previous else f"{start}-{previous}")
        if number is not None:
            start = previous = number
    return ", ".join(ranges)


# --- the child: two engines over untrusted bytes -------------------------------------------

# Right-to-left scripts (Hebrew, Arabic, Syriac, Thaana, N'Ko, presentation forms).
_RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]")


def extract_pages(payload: bytes, params: dict[str, Any], emit: Emit) -> None:
    """Runs in the sandbox child: emit a ``doc`` frame, then one ``page`` frame per
    page (its text and the engine that produced it), or one ``fail`` frame."""
    # PDFium aborts on a failed allocation: no crash report may reach a terminal
    faulthandler.disable()
    choice = params.get("engine", "auto")
    password = params.get("password")
    try:
        primary = _open_primary(choice, payload, password)
    except OpenFailed as failed:
        emit({"t": "fail", "status": failed.status, "message": failed.message,
              "hint": failed.hint})
        return
    count = primary.page_count()
    if count > params["max_pages"]:
        emit({"t": "fail", "status": "too_large", "message": f"the PDF has {count:,} pages, "
              f"over the cap of {params['max_pages']:,}"})
        return
    if count == 0:
        emit({"t": "fail", "status": "empty_content", "message": "the PDF has no pages"})
        return
    emit({"t": "doc", "pages": count, "labels": primary.labels(),
          "encrypted": primary.encrypted, **primary.info(),
          "versions": {"pdfium": PdfiumEngine.version(), "pypdf": PypdfEngine.version()}})
    second = _SecondOpinion(payload, password) if choice == "auto" and \
        primary.name == "pdfium" else None
    for index in range(count):
        page, engine = primary.page(index), primary.name
        if second is not None and _suspect(page):
            other = second.page(index)
            if other is not None and _better(other, page):
                page, engine = other, second.name
        emit(_page_frame(index, page, engine))


def _open_primary(choice: str, payload: bytes, password: str | None) -> Engine:
    """PDFium first (``auto``), pypdf when PDFium cannot parse the file; or the one
    engine asked for. A password refusal is final: both engines agree on those."""
    names = ["pdfium", "pypdf"] if choice == "auto" else [choice]
    failures: list[OpenFailed] = []
    for name in names:
        try:
            return open_engine(name, payload, password)
        except OpenFailed as failed:
            if failed.status == "needs_password":
                raise
            failures.append(failed)
    if len(failures) == 1:
        raise failures[0]
    reasons = "; ".join(f"{name}: {f.message.removeprefix('cannot read the PDF: ')}"
                        for name, f in zip(names, failures, strict=True))
    raise OpenFailed(failures[-1].status, f"cannot read the PDF: {reasons}")


class _SecondOpinion:
    """pypdf, opened only when a page of PDFium's needs a second reading."""

    name = "pypdf"

    def __init__(self, payload: bytes, password: str | None) -> None:
        self._payload, self._password = payload, password
        self._engine: PypdfEngine | None = None
        self._failed = False

    def page(self, index: int) -> PageText | None:
        if self._engine is None and not self._failed:
            try:
                self._engine = PypdfEngine(self._payload, self._password)
            except OpenFailed:
                self._failed = True
        return self._engine.page(index) if self._engine is not None else None


def _suspect(page: PageText) -> bool:
    """Whether PDFium's reading of a page may be beaten by pypdf's: no text (and no
    image either), an error, text that looks garbled, a share of glyphs without a
    Unicode mapping, or right-to-left script (PDFium reverses a glyph that stands
    for several right-to-left letters)."""
    text = page.text
    if not text.strip():
        return not page.images  # no text but images: a scanned page, pypdf finds no more
    return (page.error is not None or _unmapped_share(page) >= _UNMAPPED
            or garbled_reason(text) is not None or _RTL.search(text) is not None)


def _better(other: PageText, page: PageText) -> bool:
    """Whether pypdf's reading of a page (``other``) beats PDFium's (``page``)."""
    if not other.text.strip():
        # neither has text: keep the reading that explains why (an error, images)
        return not page.text.strip() and not (page.error or page.images) \
            and bool(other.error or other.images)
    if not page.text.strip():
        return True
    garbled, other_garbled = garbled_reason(page.text), garbled_reason(other.text)
    if garbled or other_garbled:
        return not other_garbled
    if _RTL.search(page.text):
        return True  # pypdf keeps the letters of a right-to-left glyph in order
    return _unmapped_share(other) < _unmapped_share(page)


# A page where this share of the visible characters has no Unicode mapping is read
# by pypdf too: a few unmapped glyphs (a math symbol) do not outweigh PDFium's text.
_UNMAPPED = 0.05


def _unmapped_share(page: PageText) -> float:
    visible = len(page.text) - page.text.count(" ") - page.text.count("\n")
    return page.unmapped / visible if visible > 0 else 0.0


def _page_frame(index: int, page: PageText, engine: str) -> dict[str, Any]:
    frame: dict[str, Any] = {"t": "page", "n": index + 1, "text": page.text, "engine": engine}
    if page.error:
        frame["error"] = page.error
        if page.error_kind:
            frame["error_kind"] = page.error_kind
    if not page.text.strip():
        frame["images"] = page.images
    return frame
