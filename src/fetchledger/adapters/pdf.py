"""PDF files: text per page (pypdf), wrapped lines joined, page numbers and labels.

pypdf runs in a limited child process (:mod:`.sandbox`): a hostile file
cannot hang or exhaust the caller. The child sends one frame about the
document, then one per page; this process turns them into stored text (one
paragraph per line, see :mod:`.pdftext`) with a :class:`~fetchledger.document.Page`
span per physical page, so passages never cross a page.

Failures map to attempts: an encrypted file without (or with a wrong)
password is ``needs_password``; pages that hold only images are
``no_text_layer``; a file pypdf cannot parse, or whose extraction runs past
the time limit, is ``corrupt``; one that needs more memory or yields more
text than the limits allow is ``too_large``. A page that fails on its own
leaves the others readable and is named in ``Document.warnings``, as are
image-only pages and text that looks garbled (a broken font mapping).
"""

from __future__ import annotations

import io
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
from .pdftext import (
    garbled_reason,
    heading_title,
    page_paragraphs,
    plausible_info_title,
    vocabulary,
)
from .sandbox import ChildFailed, ChildLimits, Emit, run_in_child

__all__ = ["extract_pages", "read_pdf"]

_ENTRY = "fetchledger.adapters.pdf:extract_pages"


def read_pdf(
    raw: bytes,
    *,
    locator: str,
    meta: dict[str, Any],
    limits: Limits,
    pages: object = None,
    password: str | None = None,
    name: str = "",
    kind: str = "file",
) -> Document:
    """Extract a PDF's text page by page into a Document with page spans.

    ``pages`` is accepted for symmetry with the callers and not used here:
    the whole document is stored (one file, one source, one version) and the
    ledger limits the quotes to the requested pages.
    """
    del pages
    # Imported here once (with what pypdf imports lazily while extracting), so a
    # forked child starts with them instead of importing them on every file.
    import pypdf
    import pypdf._codecs._codecs
    import pypdf.filters  # noqa: F401

    child_limits = ChildLimits(limits.pdf_timeout, limits.pdf_memory, limits.max_decoded_bytes)
    params = {"password": password, "max_pages": limits.max_pdf_pages}
    try:
        frames = run_in_child(_ENTRY, raw, params, child_limits)
    except ChildFailed as failed:
        raise _child_error(failed, locator) from None
    if kind not in KINDS:
        raise ValueError(f"unknown source kind {kind!r}")
    return _document(frames, raw=raw, locator=locator, meta=meta, name=name, kind=kind)


def _child_error(failed: ChildFailed, locator: str) -> RetrievalFailed:
    if failed.reason == "memory":
        return TooLarge(f"reading the PDF {failed.detail}", locator=locator,
                        hint="Limits(pdf_memory=...) raises the limit")
    if failed.reason == "output":
        return TooLarge(f"the PDF's text is too large: {failed.detail}", locator=locator)
    if failed.reason == "timeout":
        return CorruptContent(
            f"reading the PDF stopped: {failed.detail} (a damaged or hostile file, or a "
            "very long one)", locator=locator,
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
    return Document(
        kind=kind, locator=locator, display=locator, text="\n".join(parts), raw=raw,
        title=title, author=author or None, extractor="pypdf",
        extractor_version=head.get("pypdf", ""),
        meta={**meta, "content_type": "application/pdf", "pages": head["pages"],
              "encrypted": bool(head.get("encrypted"))},
        pages=tuple(spans), warnings=tuple(_warnings(page_frames, texts)),
    )


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
    ranges: list[str] = []
    start = previous = numbers[0]
    for number in [*numbers[1:], None]:
        if number is not None and number == previous + 1:
            previous = number
            continue
        ranges.append(str(start) if start == previous else f"{start}-{previous}")
        if number is not None:
            start = previous = number
    noun = "Page" if len(numbers) == 1 else "Pages"
    return f"{noun} {', '.join(ranges)}"


# --- the child: pypdf over untrusted bytes ------------------------------------------------


def extract_pages(payload: bytes, params: dict[str, Any], emit: Emit) -> None:
    """Runs in the sandbox child: emit a ``doc`` frame, then one ``page`` frame per
    page, or one ``fail`` frame (status, message, hint)."""
    import pypdf
    from pypdf import PasswordType
    from pypdf.errors import DependencyError

    def fail(status: str, message: str, hint: str | None = None) -> None:
        emit({"t": "fail", "status": status, "message": message, "hint": hint})

    try:
        reader = pypdf.PdfReader(io.BytesIO(payload), strict=False)
        encrypted = reader.is_encrypted
        if encrypted:
            password = params.get("password")
            try:
                opened = reader.decrypt(password or "")
            except DependencyError as exc:
                fail("corrupt", f"cannot decrypt the PDF: {exc}")
                return
            if opened == PasswordType.NOT_DECRYPTED:
                if password:
                    fail("needs_password", "the password does not open this encrypted PDF",
                         "check the password (the user or the owner password opens it)")
                else:
                    fail("needs_password", "the PDF is encrypted and needs a password",
                         "pass --password PASSWORD")
                return
        count = len(reader.pages)
    except MemoryError:
        raise
    except Exception as exc:
        fail("corrupt", f"cannot read the PDF: {_describe(exc)}")
        return
    if count > params["max_pages"]:
        fail("too_large", f"the PDF has {count:,} pages, over the cap of "
                          f"{params['max_pages']:,}")
        return
    if count == 0:
        fail("empty_content", "the PDF has no pages")
        return
    emit({"t": "doc", "pages": count, "labels": _labels(reader), "encrypted": encrypted,
          "pypdf": pypdf.__version__, **_info(reader)})
    for index in range(count):
        emit(_page_frame(reader, index))


def _page_frame(reader: Any, index: int) -> dict[str, Any]:
    frame: dict[str, Any] = {"t": "page", "n": index + 1, "text": ""}
    page = None
    try:
        page = reader.pages[index]
        frame["text"] = page.extract_text() or ""
    except MemoryError:
        frame.update(error="it needs more memory than the limit allows", error_kind="memory")
    except Exception as exc:
        frame["error"] = _describe(exc)
        if type(exc).__name__ == "LimitReachedError":  # pypdf's own cap on inflating
            frame["error_kind"] = "memory"  # a decompression bomb: too large, not corrupt
    if page is not None and not frame["text"].strip():
        try:
            frame["images"] = _has_images(page)
        except Exception:
            frame["images"] = False
    return frame


def _labels(reader: Any) -> list[str] | None:
    """The printed page labels, when the PDF defines any (None otherwise)."""
    try:
        if "/PageLabels" not in reader.root_object:
            return None
        return [str(label) for label in reader.page_labels]
    except Exception:
        return None


def _info(reader: Any) -> dict[str, Any]:
    try:
        info = reader.metadata
        if info is None:
            return {}
        return {"title": _text_or_none(info.get("/Title")),
                "author": _text_or_none(info.get("/Author"))}
    except Exception:
        return {}  # unreadable metadata never costs the text


def _text_or_none(value: Any) -> str | None:
    try:
        value = value.get_object() if hasattr(value, "get_object") else value
    except Exception:
        return None
    return str(value) if isinstance(value, str) and value.strip() else None


def _has_images(page: Any) -> bool:
    """Whether a page draws an image (an image XObject, in a form one level down,
    or an inline image)."""

    def image_in(resources: Any, depth: int) -> bool:
        resources = resources.get_object() if resources is not None else None
        xobjects = resources.get("/XObject") if resources else None
        xobjects = xobjects.get_object() if xobjects is not None else None
        for ref in (xobjects or {}).values():
            xobject = ref.get_object()
            subtype = xobject.get("/Subtype")
            if subtype == "/Image":
                return True
            if subtype == "/Form" and depth < 2 and image_in(xobject.get("/Resources"), depth + 1):
                return True
        return False

    if image_in(page.get("/Resources"), 0):
        return True
    contents = page.get_contents()
    data = contents.get_data() if contents is not None else b""
    return data.startswith(b"BI") or b"\nBI" in data or b" BI " in data


def _describe(exc: BaseException) -> str:
    text = one_line(str(exc))
    name = type(exc).__name__
    return f"{name}: {text}"[:300] if text else name
