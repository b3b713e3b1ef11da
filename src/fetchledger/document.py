"""What an adapter hands to the ledger: extracted text, metadata and raw bytes.

Adapters know nothing of storage; they return a :class:`Document`. The ledger
registers it (see :mod:`fetchledger.ledger`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["KINDS", "Document", "Kind", "Page", "StoredRaw"]

Kind = Literal["web", "http", "file", "command"]
KINDS: tuple[Kind, ...] = ("web", "http", "file", "command")


@dataclass(frozen=True)
class Page:
    """One physical page of a paged source: ``text[start:end]`` is its text."""

    start: int
    end: int
    number: int  # 1-based physical page
    label: str | None = None  # printed page label, when the document defines one


@dataclass
class Document:
    """The result of one successful retrieval, before it is registered.

    ``locator`` is the canonical identity (secrets already removed); ``display``
    is what people see (redaction marks kept). ``text`` uses ``\\n`` only, one
    paragraph (or output line) per line. ``meta`` holds the kind-specific
    facts stored with the version: HTTP status, final URL and content type;
    file size and mtime; argv, cwd, exit code and duration.
    """

    kind: Kind
    locator: str
    display: str
    text: str
    raw: bytes = b""
    title: str | None = None
    site: str | None = None
    author: str | None = None
    date: str | None = None
    extractor: str = ""
    extractor_version: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    pages: tuple[Page, ...] = ()
    aliases: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class StoredRaw:
    """One stored version's raw bytes and the facts needed to extract them again
    (``reextract``, ``--offline``): the source's identity, how the text was made, and
    the kind-specific metadata (content type and charset, file size, argv, ...).

    ``raw`` is what the ledger kept: shorter than ``raw_size`` when the bytes were
    capped (``Limits.max_raw_stored``), and then they cannot be extracted again.
    """

    source_id: int
    version: int
    kind: Kind
    locator: str  # the canonical identity
    display: str
    raw: bytes
    raw_size: int  # bytes as retrieved
    retrieved_at: str
    text_sha256: str
    extractor: str
    extractor_version: str
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def capped(self) -> bool:
        """Whether only part of the retrieved bytes was kept."""
        return len(self.raw) < self.raw_size
