"""Web pages and any URL: fetch through :mod:`fetchledger.net`, route by content type.

- HTML (``text/html``, ``application/xhtml+xml``): main text and metadata
  (title, site, author, date) through the shared :func:`~fetchledger.adapters.extract.extract_html`;
  ``<link rel=canonical>`` is recorded as metadata only, never as identity.
- PDF: :func:`fetchledger.adapters.pdf.read_pdf`.
- JSON (``application/json``, ``*+json``): pretty-printed, one member per line.
- ``text/plain`` (wrapped lines joined as for text files), ``text/markdown``,
  ``text/csv`` (one row per line).
- Anything else: ``unsupported_type``. A missing or generic type
  (``application/octet-stream``) is sniffed from the bytes.

Charset: the BOM, then the Content-Type header (except that a legacy
single-byte label on bytes that are valid UTF-8 is read as UTF-8, the usual
server misconfiguration), then ``<meta charset>``, then detection.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx

from ..config import Limits
from ..document import Document, Kind
from ..errors import CorruptContent, EmptyContent, InvalidURL, UnsupportedType
from ..identity.secrets import request_secrets, scrub_secrets
from ..identity.urls import normalize_url, parse_http_url, redact_url
from ..net.client import AsyncHTTPClient, HTTPClient, HTTPRequest, HTTPResponse
from ..net.robots import RobotsCache
from ..text.normalize import (
    clean_lines,
    decode_bytes,
    join_wrapped_lines,
    looks_binary,
    one_line,
    text_extractor_version,
)
from .extract import decode_html, extract_html, extractor_version
from .markdown import markdown_text

__all__ = [
    "Identity",
    "WebAdapter",
    "document_from_response",
    "fetch_document",
    "fetch_document_async",
    "web_identity",
]

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown"})
GENERIC_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream",
                           "application/download", "application/x-download",
                           "application/force-download", "application/unknown"})
_SINGLE_BYTE = frozenset({"iso-8859-1", "latin-1", "latin1", "l1", "us-ascii", "ascii",
                          "windows-1252", "cp1252", "iso8859-1"})
_HTML_START = re.compile(rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b",
                         re.IGNORECASE | re.DOTALL)
READABLE = "HTML, PDF, JSON, plain text, Markdown or CSV"


@dataclass(frozen=True)
class Identity:
    """Who a request is (DESIGN §4): the kind, canonical locator and display form."""

    kind: Kind
    locator: str
    display: str


def web_identity(url: str | httpx.URL) -> Identity:
    """A web page's identity: its normalized URL (secrets redacted). InvalidURL if none."""
    locator = normalize_url(url)
    return Identity("web", locator, locator)


def fetch_document(client: HTTPClient, url: str, *, limits: Limits,
                   robots: RobotsCache | None = None) -> Document:
    """GET ``url`` (robots.txt first when ``robots`` is given) and extract it."""
    identity = web_identity(url)
    if robots is not None:
        robots.check(url, client)
    response = client.send(HTTPRequest(url))
    return document_from_response(response, identity, limits=limits,
                                  secrets=request_secrets(url))


async def fetch_document_async(client: AsyncHTTPClient, url: str, *, limits: Limits,
                               robots: RobotsCache | None = None) -> Document:
    """The same as :func:`fetch_document`, for the async client (batch)."""
    identity = web_identity(url)
    if robots is not None:
        await robots.check_async(url, client)
    response = await client.send(HTTPRequest(url))
    return document_from_response(response, identity, limits=limits,
                                  secrets=request_secrets(url))


class WebAdapter:
    """``fetch URL``: one HTTP client, one robots.txt cache."""

    kind = "web"

    def __init__(self, client: HTTPClient, limits: Limits | None = None) -> None:
        self.client = client
        self.limits = limits or client.limits
        self.robots = RobotsCache()

    def locate(self, url: str) -> tuple[str, str]:
        """``(locator, display)``; raises InvalidURL (bad input) before anything is sent."""
        if not isinstance(url, str):
            raise InvalidURL(f"not a URL: {url!r}")
        identity = web_identity(url)
        return identity.locator, identity.display

    def load(self, url: str, *, robots: bool = False) -> Document:
        return fetch_document(self.client, url, limits=self.limits,
                              robots=self.robots if robots else None)


# --- a response as a document -----------------------------------------------------------


def response_meta(response: HTTPResponse) -> dict[str, Any]:
    """The HTTP facts stored with a version (every URL redacted)."""
    meta: dict[str, Any] = {
        "http_status": response.status,
        "final_url": response.display_url,
        "content_type": response.content_type or None,
        "bytes_received": response.received,
    }
    if response.charset:
        meta["charset"] = response.charset
    if response.redirects:
        meta["redirects"] = list(response.redirects)
    for header in ("last-modified", "etag"):
        if header in response.headers:
            meta[header.replace("-", "_")] = one_line(response.headers[header])
    return meta


def document_from_response(response: HTTPResponse, identity: Identity, *, limits: Limits,
                           secrets: Sequence[str] = ()) -> Document:
    """Route a final response by content type and extract its text; the document
    carries ``identity`` and, for a web page, the URLs of its redirect chain as aliases."""
    body = response.content
    shown = response.display_url
    if not body.strip():
        raise EmptyContent(f"the response is empty (HTTP {response.status}"
                           f"{', ' + response.content_type if response.content_type else ''})",
                           locator=identity.display)
    kind = _content_kind(response.content_type, body, identity.display)
    meta = response_meta(response)
    if kind == "pdf":
        from .pdf import read_pdf

        name = posixpath.basename(httpx.URL(response.url).path) or httpx.URL(response.url).host
        document = read_pdf(body, locator=identity.display, meta=meta, limits=limits,
                            name=name, kind=identity.kind)
    elif kind == "html":
        document = _html_document(body, response, shown, identity, meta)
    else:
        document = _text_document(kind, body, response, identity, meta)
    # A GET's redirect chain names the same page; a POST's final URL does not.
    aliases = tuple(dict.fromkeys(
        normalize_url(u) for u in (*response.redirects, shown) if _is_http(u))
    ) if identity.kind == "web" else ()
    document = replace(document, kind=identity.kind, locator=identity.locator,
                       display=identity.display, aliases=aliases)
    return scrub_secrets(document, secrets)


def _is_http(url: str) -> bool:
    try:
        parse_http_url(url)
    except InvalidURL:
        return False
    return True


def _content_kind(content_type: str, body: bytes, locator: str) -> str:
    if content_type in HTML_TYPES:
        return "html"
    if content_type in PDF_TYPES:
        return "pdf"
    if content_type in ("application/json", "text/json") or content_type.endswith("+json"):
        return "json"
    if content_type == "text/plain":
        return "text"
    if content_type in MARKDOWN_TYPES:
        return "markdown"
    if content_type == "text/csv":
        return "csv"
    if content_type in GENERIC_TYPES:
        return _sniff(body, content_type, locator)
    raise UnsupportedType(f"the content type {content_type} is not one fetchledger reads "
                          f"({READABLE})", locator=locator)


def _sniff(body: bytes, content_type: str, locator: str) -> str:
    head = body[:2048]
    if head.lstrip().startswith(b"%PDF-"):
        return "pdf"
    if _HTML_START.match(head):
        return "html"
    if not looks_binary(body):
        stripped = body.strip()
        if stripped[:1] in (b"{", b"["):
            try:
                json.loads(stripped)
                return "json"
            except ValueError:
                pass
        return "text"
    raise UnsupportedType(f"binary content ({content_type or 'no content type'}), not "
                          f"{READABLE}", locator=locator)


def choose_charset(raw: bytes, declared: str | None) -> str | None:
    """The declared charset, unless it is a legacy single-byte label on bytes that are
    valid UTF-8 (a common misconfiguration that would turn "é" into "Ã©")."""
    if declared and declared.strip().lower() in _SINGLE_BYTE and not raw.isascii():
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return declared
        return "utf-8"
    return declared


def _html_document(body: bytes, response: HTTPResponse, shown: str, identity: Identity,
                   meta: dict[str, Any]) -> Document:
    html = decode_html(body, choose_charset(body, response.charset), locator=identity.display)
    extracted = extract_html(html, shown, locator=identity.display)
    if not extracted.text:
        needs_script = "<script" in html.lower()
        raise EmptyContent(
            "the page has no readable text" + (" (it is built by JavaScript, which "
                                               "fetchledger does not run)" if needs_script
                                               else ""), locator=identity.display)
    if extracted.canonical:
        canonical = _absolute(extracted.canonical, response.url)
        if canonical:
            meta["canonical_url"] = canonical
    if extracted.language:
        meta["language"] = extracted.language
    return Document(
        kind=identity.kind, locator=identity.locator, display=identity.display,
        text=extracted.text, raw=body, title=extracted.title, site=extracted.site,
        author=extracted.author, date=extracted.date, extractor=extracted.extractor,
        extractor_version=extractor_version(), meta=meta)


def _absolute(href: str, base: str) -> str | None:
    try:
        return redact_url(httpx.URL(base).join(href.strip()))
    except (InvalidURL, httpx.InvalidURL, ValueError, UnicodeError):
        return None


def _text_document(kind: str, body: bytes, response: HTTPResponse, identity: Identity,
                   meta: dict[str, Any]) -> Document:
    try:
        decoded = decode_bytes(body, choose_charset(body, response.charset),
                               locator=identity.display)
    except UnsupportedType as exc:
        raise UnsupportedType(f"{exc.message} ({response.content_type or 'no content type'})",
                              locator=identity.display) from exc
    title = None
    if kind == "json":
        try:
            data = json.loads(decoded)
        except ValueError as exc:
            raise CorruptContent(f"the body is not valid JSON: {exc}",
                                 locator=identity.display) from exc
        text = clean_lines(json.dumps(data, indent=2, ensure_ascii=False))
    elif kind == "markdown":
        converted = markdown_text(decoded)
        text, title = converted.text, converted.title
    elif kind == "csv":
        text = clean_lines(decoded)
    else:
        text = join_wrapped_lines(decoded, markdown=False)
    if not text:
        raise EmptyContent("the body holds only whitespace", locator=identity.display)
    return Document(
        kind=identity.kind, locator=identity.locator, display=identity.display, text=text,
        raw=body, title=title or _file_name(response.display_url), extractor=kind,
        extractor_version=text_extractor_version(), meta=meta)


def _file_name(url: str) -> str | None:
    """The last path segment of a URL (``stations.json``): the title of a JSON or
    text resource that names itself nothing better."""
    path = urlsplit(url).path.rstrip("/")
    name = unquote(path.rsplit("/", 1)[-1]) if path else ""
    return one_line(name) or None


# --- secrets -----------------------------------------------------------------------------


