"""The two PDF text engines, as the sandbox child uses them: PDFium and pypdf.

Both open untrusted bytes (with a password when one is given) and answer the
same questions: how many pages, their printed labels, the document's title
and author, and one page's text with the facts needed to judge it (does an
empty page draw images, how many characters have no Unicode mapping). Which
engine's text is kept for a page is decided by :mod:`.pdf`.

- **PDFium** (pypdfium2) is fast and reads damaged files well. Its text comes
  with ``\\r\\n`` line ends and marks a word hyphenated at a line end with
  U+FFFE (U+0002 from its bounded-text call) *instead of* the line break; the
  mark is turned back into ``-`` + a line break here, so the paragraph joiner sees what a
  reader sees and decides about the hyphen as it does for pypdf.
  A page whose columns PDFium reads row by row is put in column order
  (:mod:`.pdflayout`). A rotated page (``/Rotate``) is read as if unrotated: PDFium's line order
  on rotated pages follows the display frame.
- **pypdf** is pure Python: slower, but it orders right-to-left text logically
  and drops glyphs whose font maps them to nothing.

Nothing here touches storage or the caller's process: these functions run in
the limited child only.
"""

from __future__ import annotations

import io
import itertools
import re
from dataclasses import dataclass
from typing import Any

from ..text.normalize import one_line
from .pdflayout import Box, column_order

__all__ = [
    "OpenFailed",
    "PageText",
    "PdfiumEngine",
    "PypdfEngine",
    "describe",
    "open_engine",
]

_NON_ASCII = re.compile("[^\x00-\x7f]")


class OpenFailed(Exception):
    """An engine could not open the document: ``status`` is the attempt status."""

    def __init__(self, status: str, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.hint = hint


@dataclass
class PageText:
    """One page as an engine read it."""

    text: str = ""
    images: bool = False  # asked only when the page has no text
    unmapped: int = 0  # characters whose glyph has no Unicode mapping
    error: str | None = None
    error_kind: str | None = None  # "memory" when the page needs more than the limits


def describe(exc: BaseException) -> str:
    text = one_line(str(exc))
    name = type(exc).__name__
    return f"{name}: {text}"[:300] if text else name


def _password_failure(password: str | None) -> OpenFailed:
    if password:
        return OpenFailed("needs_password", "the password does not open this encrypted PDF",
                          "check the password (the user or the owner password opens it)")
    return OpenFailed("needs_password", "the PDF is encrypted and needs a password",
                      "pass --password PASSWORD")


def _text_or_none(value: Any) -> str | None:
    try:
        value = value.get_object() if hasattr(value, "get_object") else value
    except Exception:
        return None
    return str(value) if isinstance(value, str) and value.strip() else None


# --- PDFium --------------------------------------------------------------------------------


class PdfiumEngine:
    """PDFium through pypdfium2."""

    name = "pdfium"

    def __init__(self, payload: bytes, password: str | None) -> None:
        import pypdfium2
        import pypdfium2.raw as pdfium_c

        self._c = pdfium_c
        try:
            self._pdf = pypdfium2.PdfDocument(payload, password=password or None)
        except pypdfium2.PdfiumError as exc:
            if getattr(exc, "err_code", None) == pdfium_c.FPDF_ERR_PASSWORD:
                raise _password_failure(password) from None
            raise OpenFailed("corrupt", f"cannot read the PDF: {_pdfium_reason(exc)}") from None
        self.encrypted = pdfium_c.FPDF_GetSecurityHandlerRevision(self._pdf.raw) != -1

    @staticmethod
    def version() -> str:
        from pypdfium2.version import PDFIUM_INFO, PYPDFIUM_INFO

        return f"pypdfium2 {PYPDFIUM_INFO} (PDFium {str(PDFIUM_INFO).split('@')[0]})"

    def page_count(self) -> int:
        return len(self._pdf)

    def labels(self) -> list[str] | None:
        try:
            labels = [self._pdf.get_page_label(i) for i in range(len(self._pdf))]
        except Exception:
            return None
        return labels if any(labels) else None

    def info(self) -> dict[str, Any]:
        try:
            meta = self._pdf.get_metadata_dict(skip_empty=True)
        except Exception:
            return {}
        return {"title": _text_or_none(meta.get("Title")),
                "author": _text_or_none(meta.get("Author"))}

    def page(self, index: int) -> PageText:
        result = PageText()
        try:
            page = self._pdf[index]
        except MemoryError:
            raise
        except Exception as exc:
            result.error = f"PDFium could not load the page ({describe(exc)})"
            return result
        try:
            if page.get_rotation():
                # PDFium orders a rotated page's lines in the rotated frame (bottom
                # line first on /Rotate 90) and joins them wrongly; the text is the
                # same in the unrotated page, in reading order
                page.set_rotation(0)
            textpage = page.get_textpage()
            try:
                count = textpage.count_chars()
                text = textpage.get_text_range(0, count) if count > 0 else ""
                result.unmapped = self._unmapped(textpage, text, count)
                text = _in_column_order(textpage, text, count) or text
            finally:
                textpage.close()
            result.text = text.replace("\r\n", "\n").replace("\ufffe", "-\n")
            if not result.text.strip():
                result.images = self._has_images(page)
        except MemoryError:
            raise
        except Exception as exc:
            result.error = f"PDFium could not read the page's text ({describe(exc)})"
        finally:
            page.close()
        return result

    def _unmapped(self, textpage: Any, text: str, count: int) -> int:
        """Characters PDFium flags as having no Unicode mapping. Only non-ASCII ones
        are asked about (one call each costs microseconds): an unmapped glyph
        stands in as its raw code, rarely a plain ASCII letter in the fonts where
        it matters, and ASCII prose would cost a call per letter."""
        if len(text) != count:  # characters outside the BMP: indices do not line up
            return 0
        has_error, handle = self._c.FPDFText_HasUnicodeMapError, textpage.raw
        return sum(1 for m in _NON_ASCII.finditer(text) if has_error(handle, m.start()) == 1)

    def _has_images(self, page: Any) -> bool:
        try:
            found = page.get_objects(filter=(self._c.FPDF_PAGEOBJ_IMAGE,), max_depth=3)
            return next(iter(found), None) is not None
        except Exception:
            return False


def _in_column_order(textpage: Any, text: str, count: int) -> str | None:
    """The page's text rebuilt in reading order when PDFium's (the drawing order)
    interleaves two columns; None when its order stands."""
    boxes = [Box(*textpage.get_rect(i)) for i in range(textpage.count_rects())]
    lines = column_order(boxes)
    if lines is None:
        return None
    segments = _segments(textpage, boxes, text, count)
    return "\n".join(" ".join(segments[i].strip() for i in line) for line in lines)


def _segments(textpage: Any, boxes: list[Box], text: str, count: int) -> list[str]:
    """The text of each box. The boxes follow the text in order, so each one's text
    runs from the character at its left edge to the next box's first character;
    where that does not line up, PDFium is asked for the text inside each box."""
    import pypdfium2.raw as pdfium_c

    firsts = [pdfium_c.FPDFText_GetCharIndexAtPos(
        textpage.raw, box.left + 0.5, (box.bottom + box.top) / 2, 1.0, 1.0) for box in boxes]
    if len(text) == count and firsts and firsts[0] >= 0 and \
            all(a < b for a, b in itertools.pairwise(firsts)):
        ends = [*firsts[1:], len(text)]
        return [text[a:b] for a, b in zip(firsts, ends, strict=True)]
    # the bounded-text call marks a line-end hyphen with U+0002 instead of U+FFFE
    return [textpage.get_text_bounded(*box).replace("\x02", "\ufffe") for box in boxes]


def _pdfium_reason(exc: BaseException) -> str:
    text = one_line(str(exc)).removeprefix("Failed to load document ").strip("() ")
    return text or type(exc).__name__


# --- pypdf ----------------------------------------------------------------------------------


class PypdfEngine:
    """pypdf's reader and its ``extract_text``."""

    name = "pypdf"

    def __init__(self, payload: bytes, password: str | None) -> None:
        import pypdf
        from pypdf import PasswordType
        from pypdf.errors import DependencyError

        try:
            self._reader = pypdf.PdfReader(io.BytesIO(payload), strict=False)
            self.encrypted = bool(self._reader.is_encrypted)
            if self.encrypted:
                try:
                    opened = self._reader.decrypt(password or "")
                except DependencyError as exc:
                    raise OpenFailed("corrupt", f"cannot decrypt the PDF: {exc}") from None
                if opened == PasswordType.NOT_DECRYPTED:
                    raise _password_failure(password)
            self._count = len(self._reader.pages)
        except (MemoryError, OpenFailed):
            raise
        except Exception as exc:
            raise OpenFailed("corrupt", f"cannot read the PDF: {describe(exc)}") from None

    @staticmethod
    def version() -> str:
        import pypdf

        return f"pypdf {pypdf.__version__}"

    def page_count(self) -> int:
        return self._count

    def labels(self) -> list[str] | None:
        try:
            if "/PageLabels" not in self._reader.root_object:
                return None
            return [str(label) for label in self._reader.page_labels]
        except Exception:
            return None

    def info(self) -> dict[str, Any]:
        try:
            info = self._reader.metadata
            if info is None:
                return {}
            return {"title": _text_or_none(info.get("/Title")),
                    "author": _text_or_none(info.get("/Author"))}
        except Exception:
            return {}  # unreadable metadata never costs the text

    def page(self, index: int) -> PageText:
        result = PageText()
        page = None
        try:
            page = self._reader.pages[index]
            result.text = page.extract_text() or ""
        except MemoryError:
            result.error = "it needs more memory than the limit allows"
            result.error_kind = "memory"
        except Exception as exc:
            result.error = describe(exc)
            if type(exc).__name__ == "LimitReachedError":  # pypdf's own cap on inflating
                result.error_kind = "memory"  # a decompression bomb: too large, not corrupt
        result.unmapped = result.text.count("\ufffd")
        if page is not None and not result.text.strip():
            try:
                result.images = _pypdf_has_images(page)
            except Exception:
                result.images = False
        return result


def _pypdf_has_images(page: Any) -> bool:
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


Engine = PdfiumEngine | PypdfEngine
_ENGINES: dict[str, type[PdfiumEngine] | type[PypdfEngine]] = {
    "pdfium": PdfiumEngine, "pypdf": PypdfEngine}


def open_engine(name: str, payload: bytes, password: str | None) -> Engine:
    """Open the document with the engine called ``name``; raises :class:`OpenFailed`."""
    return _ENGINES[name](payload, password)
