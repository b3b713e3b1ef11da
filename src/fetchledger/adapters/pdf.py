"""PDF files: text per page (pypdf), wrapped lines joined, page numbers and labels."""

from __future__ import annotations

import io
from typing import Any

from ..config import Limits
from ..document import Document, Page
from ..errors import CorruptContent, NeedsPassword, NoTextLayer, TooLarge
from ..textutil import join_wrapped_lines, one_line

__all__ = ["read_pdf"]


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
    """Extract a PDF's text page by page into a Document with page spans."""
    import pypdf
    from pypdf.errors import PyPdfError

    try:
        reader = pypdf.PdfReader(io.BytesIO(raw))
        if reader.is_encrypted and not reader.decrypt(password or ""):
            if password:
                raise NeedsPassword("the password does not open this PDF", locator=locator)
            raise NeedsPassword("the PDF is encrypted", locator=locator,
                                hint="pass --password PASSWORD")
        count = len(reader.pages)
        if count > limits.max_pdf_pages:
            raise TooLarge(f"the PDF has {count:,} pages, over the cap of "
                           f"{limits.max_pdf_pages:,}", locator=locator)
        labels = list(reader.page_labels)
        texts = [join_wrapped_lines(page.extract_text() or "", markdown=False)
                 for page in reader.pages]
        info = reader.metadata
    except (NeedsPassword, TooLarge):
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError,
            RecursionError, OSError) as exc:
        raise CorruptContent(f"cannot read the PDF: {exc}", locator=locator) from exc
    if not any(texts):
        raise NoTextLayer(f"none of the {count} pages has a text layer (scanned or images)",
                          locator=locator, hint="run OCR first, then read the result")
    parts: list[str] = []
    spans: list[Page] = []
    offset = 0
    for number, text in enumerate(texts, start=1):
        label = labels[number - 1] if number - 1 < len(labels) else None
        spans.append(Page(offset, offset + len(text), number, label))
        parts.append(text)
        offset += len(text) + 1
    title = one_line(str(info.title)) if info is not None and info.title else None
    author = one_line(str(info.author)) if info is not None and info.author else None
    return Document(
        kind=kind,  # type: ignore[arg-type]
        locator=locator, display=locator, text="\n".join(parts), raw=raw,
        title=title or _first_heading(texts) or name or None, author=author,
        extractor="pypdf", extractor_version=pypdf.__version__,
        meta={**meta, "content_type": "application/pdf", "pages": count},
        pages=tuple(spans),
    )


def _first_heading(texts: list[str]) -> str | None:
    for text in texts:
        for line in text.split("\n"):
            words = line.split()
            if 1 <= len(words) <= 15 and not line.rstrip().endswith((".", ",", ";")):
                return one_line(line)
    return None
