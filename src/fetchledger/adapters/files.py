"""Local files: text, Markdown, HTML (and PDF, through :mod:`.pdf`).

The type comes from the bytes first (a ``%PDF-`` header, an HTML document
start) and the file name second. Prose (``.txt``, ``.md``, no suffix, ...)
has its hard-wrapped lines joined into paragraphs; code, data and logs keep
one stored line per file line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from stat import S_ISREG
from typing import Any

from ..config import Limits
from ..document import Document
from ..errors import EmptyContent, InvalidPath, TooLarge, UnsupportedType
from ..identity import Identity
from ..identity.urls import file_locator
from ..text.normalize import decode_bytes
from .documents import TextForm, html_document, looks_like_html, text_document
from .protocol import FileInput

__all__ = ["FileAdapter", "PageRange", "file_document", "parse_page_range"]

_HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml", ".shtml"})
_MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdx", ".mkd", ".mdown"})
_PROSE_SUFFIXES = frozenset({"", ".txt", ".text", ".rst", ".adoc", ".asciidoc", ".org"})


@dataclass(frozen=True)
class PageRange:
    """An inclusive range of 1-based physical pages (``--pages 3-5``)."""

    first: int
    last: int | None  # None: to the end


def parse_page_range(spec: str) -> PageRange:
    """``"3"``, ``"3-5"``, ``"3-"`` or ``"-5"`` as a PageRange; InvalidArgument otherwise."""
    from ..errors import InvalidArgument

    match = re.fullmatch(r"\s*([0-9]*)\s*(-?)\s*([0-9]*)\s*", spec)
    if not match or not (match.group(1) or match.group(3)):
        raise InvalidArgument(f"bad page range {spec!r}", hint="use N, A-B, A- or -B")
    first = int(match.group(1) or 1)
    last: int | None
    last = (int(match.group(3)) if match.group(3) else None) if match.group(2) else first
    if first < 1 or (last is not None and last < first):
        raise InvalidArgument(f"bad page range {spec!r}: pages start at 1 and A <= B")
    return PageRange(first, last)


class FileAdapter:
    """Reads local files (:class:`~.protocol.FileInput`) into Documents of kind ``file``.
    Identity: the resolved absolute path."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()

    def identify(self, given: FileInput) -> Identity:
        """InvalidPath (bad input) for a missing file, a directory, a device."""
        resolved = str(file_locator(given.path))
        return Identity("file", resolved, resolved)

    def load(self, given: FileInput, identity: Identity) -> Document:
        locator = identity.locator
        resolved = Path(locator)
        raw, stat = self._read_bytes(resolved, locator)
        meta: dict[str, Any] = {
            "size": stat.st_size,
            "mtime": datetime.fromtimestamp(stat.st_mtime, timezone.utc)
            .strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        return file_document(raw, identity, meta, limits=self.limits, password=given.password)

    def _read_bytes(self, path: Path, locator: str) -> tuple[bytes, os.stat_result]:
        try:
            # O_NONBLOCK: a path that is a FIFO by now (refresh re-reads a stored path)
            # must not wait for a writer; it is refused below, by what was opened
            with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
                stat = os.fstat(handle.fileno())
                if not S_ISREG(stat.st_mode):
                    raise InvalidPath(f"{locator} is not a regular file (a device, pipe or "
                                      "socket)")
                os.set_blocking(handle.fileno(), True)
                if stat.st_size > self.limits.max_file_bytes:
                    raise TooLarge(
                        f"the file has {stat.st_size:,} bytes, over the cap of "
                        f"{self.limits.max_file_bytes:,}", locator=locator)
                raw = handle.read(self.limits.max_file_bytes + 1)
        except PermissionError as exc:
            raise InvalidPath(f"permission denied: {locator}") from exc
        except IsADirectoryError as exc:
            raise InvalidPath(f"{locator} is a directory, not a file") from exc
        except OSError as exc:
            raise InvalidPath(f"cannot read {locator}: {exc.strerror or exc}") from exc
        if len(raw) > self.limits.max_file_bytes:  # it grew while we read it
            raise TooLarge(f"the file is over the cap of {self.limits.max_file_bytes:,} bytes",
                           locator=locator)
        return raw, stat


def file_document(raw: bytes, identity: Identity, meta: dict[str, Any], *, limits: Limits,
                  password: str | None = None) -> Document:
    """A file's bytes as a document, by what the bytes are and then the file's name (the
    resolved path ``identity.locator``): PDF, HTML, else text."""
    locator = identity.locator
    if not raw.strip():
        raise EmptyContent("the file is empty", locator=locator)
    name = Path(locator).name
    suffix = Path(locator).suffix.lower()
    if raw[:1024].lstrip().startswith(b"%PDF-") or suffix == ".pdf":
        from .pdf import read_pdf

        return read_pdf(raw, locator=locator, meta=meta, limits=limits, password=password,
                        name=name)
    if suffix in _HTML_SUFFIXES or looks_like_html(raw):
        return html_document(raw, identity, {**meta, "content_type": "text/html"},
                             what="HTML page")
    return _text(raw, identity, meta, suffix)


def _text(raw: bytes, identity: Identity, meta: dict[str, Any], suffix: str) -> Document:
    try:
        decoded = decode_bytes(raw, locator=identity.locator)
    except UnsupportedType as exc:
        raise UnsupportedType(
            f"{exc.message}: not a PDF, HTML, Markdown or text file",
            locator=identity.locator) from exc
    form: TextForm = ("markdown" if suffix in _MARKDOWN_SUFFIXES else
                      "text" if suffix in _PROSE_SUFFIXES else "lines")
    content_type = "text/markdown" if form == "markdown" else "text/plain"
    return text_document(decoded, form, raw, identity,
                         {**meta, "content_type": content_type}, what="file")
