"""Documents made again from a version's stored raw bytes, with no network.

The ledger keeps the raw bytes of every version (compressed, capped) with the
facts their extraction used: the content type and charset of a response, a
file's name, a command's output. :func:`document_from_stored` runs today's
extraction on them through the very functions a retrieval uses
(:func:`~.web.document_from_response`, :func:`~.files.file_document`,
:func:`~.command.read_output`), so the text is what a retrieval of the same
bytes would store now. Two users:

- ``reextract``: a ledger built before an extraction fix gets the fix.
- ``--offline`` (:class:`OfflineAdapter`): ``fetch``, ``curl`` and batch
  answer from the stored bytes of the source a request names, never opening a
  socket: the same bytes give the same snippets as online.

A version whose bytes were capped cannot be extracted again (the text of a
part is not the text of the whole): :class:`~fetchledger.errors.RawCapped`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import httpx

from ..config import Limits
from ..document import Document, StoredRaw
from ..errors import OfflineMiss, RawCapped
from ..identity import Identity
from ..net.client import HTTPResponse
from ..text.normalize import text_extractor_version
from .command import read_output
from .files import file_document
from .http import request_identity
from .protocol import HttpInput, WebInput
from .web import document_from_response, web_identity

__all__ = ["OfflineAdapter", "StoredLookup", "document_from_stored", "stored_response"]

BROWSER = "browser"  # the extractor of a page Chromium rendered: its raw bytes are the DOM
HEADERS = "http-headers"  # the extractor of a HEAD response: its raw bytes are the text

StoredLookup = Callable[[str], "StoredRaw | None"]
"""The latest stored version of the source a canonical locator (or alias) names."""


def document_from_stored(stored: StoredRaw, *, limits: Limits, key: bytes) -> Document:
    """Today's extraction of a stored version's raw bytes: a Document of the same source
    (its identity, no aliases), as a retrieval of those bytes would make it now.
    RawCapped when only part of the bytes was kept; the extraction's own failures
    (EmptyContent, NeedsPassword, ...) as a retrieval raises them."""
    if stored.capped:
        raise RawCapped(
            f"the ledger kept {len(stored.raw):,} of its {stored.raw_size:,} bytes "
            f"(version {stored.version}); the text of a part is not the text of the whole",
            locator=stored.display, hint="raise Limits.max_raw_stored to keep whole bodies")
    identity = Identity(stored.kind, stored.locator, stored.display)
    if stored.kind == "file":
        document = file_document(stored.raw, identity, _own_meta(stored.meta), limits=limits)
    elif stored.kind == "command":
        text, warnings = read_output(stored.raw, stored.display)
        document = Document(kind="command", locator=stored.locator, display=stored.display,
                            text=text, raw=stored.raw, extractor=stored.extractor,
                            extractor_version=text_extractor_version(),
                            meta=dict(stored.meta),
                            warnings=tuple(warnings))
    elif stored.extractor == HEADERS:
        document = Document(kind=stored.kind, locator=stored.locator, display=stored.display,
                            text=stored.raw.decode("utf-8"), raw=stored.raw,
                            extractor=HEADERS, extractor_version=stored.extractor_version,
                            meta=dict(stored.meta))
    else:
        document = document_from_response(stored_response(stored), identity, limits=limits,
                                          key=key)
        if stored.extractor == BROWSER:
            engine = stored.extractor_version.split(";", 1)[0]
            document = replace(document, extractor=BROWSER,
                               extractor_version=f"{engine}; {document.extractor} "
                                                 f"{document.extractor_version}")
    # Facts of the retrieval the extraction does not make again (redirects, a render's
    # record, a command's exit status) stay; what it makes again is today's.
    return replace(document, meta={**stored.meta, **document.meta}, aliases=())


def _own_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """A file's own facts (size, mtime), without those its extraction adds."""
    return {k: v for k, v in meta.items() if k in ("size", "mtime")}


def stored_response(stored: StoredRaw) -> HTTPResponse:
    """The final response a web or HTTP version was extracted from, as stored: its body,
    status, final URL (secrets redacted), content type and charset, validators."""
    meta = stored.meta
    content_type = str(meta.get("content_type") or "")
    charset = meta.get("charset")
    headers = httpx.Headers()
    if content_type:
        headers["Content-Type"] = content_type + (f"; charset={charset}" if charset else "")
    for field, header in (("etag", "ETag"), ("last_modified", "Last-Modified")):
        if meta.get(field):
            headers[header] = str(meta[field])
    return HTTPResponse(
        method="GET", url=str(meta.get("final_url") or stored.display),
        status=int(meta.get("http_status") or 200), reason="", http_version="HTTP/1.1",
        headers=headers, content=stored.raw,
        received=int(meta.get("bytes_received") or len(stored.raw)),
        redirects=tuple(meta.get("redirects") or ()))


class OfflineAdapter:
    """``fetch`` and ``curl`` under ``--offline`` (:class:`~.protocol.WebInput` and
    :class:`~.protocol.HttpInput`): the same identities as online, and the document
    of the stored bytes of the source that identity names, never the network.
    A request the ledger has no (whole) bytes for is an ``offline_miss``."""

    def __init__(self, lookup: StoredLookup, key: bytes, limits: Limits) -> None:
        self.lookup = lookup
        self.key = key
        self.limits = limits

    def identify(self, given: WebInput | HttpInput) -> Identity:
        if isinstance(given, WebInput):
            return web_identity(given.url, self.key)
        return request_identity(given.request, self.key)

    def load(self, given: WebInput | HttpInput, identity: Identity) -> Document:
        """The stored version's document; robots.txt is not asked (nothing is sent)."""
        return replay_document(self.lookup(identity.locator), identity, limits=self.limits,
                               key=self.key)


def replay_document(stored: StoredRaw | None, identity: Identity, *, limits: Limits,
                    key: bytes) -> Document:
    """The document an offline request gets: OfflineMiss when the ledger has no source
    for ``identity`` or kept only part of its bytes."""
    if stored is None:
        raise OfflineMiss(f"the ledger has no stored copy of {identity.display} "
                          f"(offline: nothing is fetched)", locator=identity.display,
                          hint="fetch it once online, or run without --offline")
    try:
        return document_from_stored(stored, limits=limits, key=key)
    except RawCapped as capped:
        raise OfflineMiss(f"{capped.message}: it cannot be answered offline",
                          locator=identity.display, hint=capped.hint) from capped
