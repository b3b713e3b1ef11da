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

JavaScript pages (``render``, DESIGN §8): :func:`read_response` says when a
fetched HTML page is to be rendered (:class:`Shell`: ``auto`` renders empty
shells, ``always`` every HTML page); :class:`WebAdapter` renders it with
:class:`~fetchledger.adapters.browser.Browser` and :func:`rendered_document`
reads the DOM. Without a browser the plain result stands
(:func:`without_browser`), with a warning saying why.

Charset: the BOM, then the Content-Type header (except that a legacy
single-byte label on bytes that are valid UTF-8 is read as UTF-8, the usual
server misconfiguration), then ``<meta charset>``, then detection.
"""

from __future__ import annotations

import json
import posixpath
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

import httpx

from ..config import Limits
from ..document import Document
from ..errors import CorruptContent, EmptyContent, InvalidArgument, InvalidURL, UnsupportedType
from ..identity import Identity
from ..identity.echoed import scrub_secrets
from ..identity.secrets import is_secret_name, redact_header, request_secrets
from ..identity.urls import normalize_url, parse_http_url, redact_url, url_identity
from ..net.client import Exchange, HTTPClient, HTTPRequest, HTTPResponse
from ..net.robots import RobotsCache
from ..text.normalize import decode_bytes, looks_binary, one_line
from .browser import (
    Browser,
    RenderedPage,
    RenderMode,
    check_render_mode,
    unavailable_reason,
    wants_render,
)
from .documents import TextForm, html_document, looks_like_html, text_document
from .extract import decode_html
from .protocol import WebInput

__all__ = [
    "Shell",
    "WebAdapter",
    "document_from_response",
    "read_response",
    "rendered_document",
    "web_identity",
    "without_browser",
]

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown"})
GENERIC_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream",
                           "application/download", "application/x-download",
                           "application/force-download", "application/unknown"})
_SINGLE_BYTE = frozenset({"iso-8859-1", "latin-1", "latin1", "l1", "us-ascii", "ascii",
                          "windows-1252", "cp1252", "iso8859-1"})
READABLE = "HTML, PDF, JSON, plain text, Markdown or CSV"
ContentKind = Literal["pdf", "html"] | TextForm


def web_identity(url: str | httpx.URL, key: bytes) -> Identity:
    """A web page's identity: its normalized URL, secret query values as their keyed
    marks under ``key`` (displayed ``REDACTED``). InvalidURL if it is none."""
    parsed = parse_http_url(url) if isinstance(url, str) else url  # parsed once for both
    return Identity("web", url_identity(parsed, key), normalize_url(parsed))


class WebAdapter:
    """``fetch URL`` (:class:`~.protocol.WebInput`): one HTTP client, one robots.txt
    cache, a browser once a page needs one. Identity: the normalized URL, redacted
    values keyed under ``key`` (the ledger's)."""

    def __init__(self, client: HTTPClient, key: bytes, limits: Limits | None = None) -> None:
        self.client = client
        self.key = key
        self.limits = limits or client.limits
        self.robots = RobotsCache()
        self._browser: Browser | None = None

    def identify(self, given: WebInput) -> Identity:
        """InvalidURL or InvalidArgument (bad input) before anything is sent: a URL
        that cannot be fetched, a render mode that is not one, ``always`` without a
        browser."""
        if not isinstance(given.url, str):
            raise InvalidURL(f"not a URL: {given.url!r}")
        identity = web_identity(given.url, self.key)
        if check_render_mode(given.render) == "always":
            reason = unavailable_reason()
            if reason is not None:
                raise InvalidArgument(f"--render always needs a browser, and {reason}")
        return identity

    def load(self, given: WebInput, identity: Identity) -> Document:
        """GET the URL (robots.txt first when asked) and extract it; a page that
        ``given.render`` asks for is rendered in Chromium (without one, the plain
        result stands with a warning)."""
        if given.robots:
            self.robots.check(given.url, self.client)
        return self._read(given, identity, self.client.send(HTTPRequest(given.url)))

    def revalidate(self, given: WebInput, identity: Identity,
                   validators: Sequence[tuple[str, str]]) -> Document | None:
        """GET the URL again, conditionally when ``validators`` (If-None-Match,
        If-Modified-Since) are given: None when the server answers 304 Not Modified
        (nothing but headers crossed the wire), else the document, as :meth:`load`
        makes it (rendered when ``given.render`` asks)."""
        response = self.client.send(HTTPRequest(given.url, headers=tuple(validators)))
        return None if response.status == 304 else self._read(given, identity, response)

    def _read(self, given: WebInput, identity: Identity, response: HTTPResponse) -> Document:
        secrets = request_secrets(given.url)
        read = read_response(response, identity, limits=self.limits, key=self.key,
                             secrets=secrets, render=check_render_mode(given.render))
        if not isinstance(read, Shell):
            return read
        reason = unavailable_reason()
        if reason is not None:
            return without_browser(read, reason)
        if self._browser is None:
            self._browser = Browser(self.client.policy, self.client.resolver, self.limits)
        return rendered_document(self._browser.render(response), identity,
                                 limits=self.limits, key=self.key, secrets=secrets)


# --- rendering --------------------------------------------------------------------------


@dataclass(frozen=True)
class Shell:
    """A fetched HTML page that is to be rendered in a browser. ``plain`` is what the
    plain extraction gave — a document with little text, or the EmptyContent it
    raised — which stands when no browser can render it."""

    plain: Document | EmptyContent
    response: HTTPResponse


def read_response(response: HTTPResponse, identity: Identity, *, limits: Limits, key: bytes,
                  secrets: Sequence[str] = (), render: RenderMode = "never") -> Document | Shell:
    """The document of a response (:func:`document_from_response`), or a
    :class:`Shell` when ``render`` asks for the page to be rendered (``auto``: an
    empty shell; ``always``: any HTML page)."""
    try:
        plain: Document | EmptyContent = document_from_response(
            response, identity, limits=limits, key=key, secrets=secrets)
    except EmptyContent as empty:
        plain = empty
    text = plain.text if isinstance(plain, Document) else ""
    if wants_render(render, lambda: _html_of(response, identity.display), text):
        return Shell(plain, response)
    if isinstance(plain, EmptyContent):
        raise plain
    return plain


def _html_of(response: HTTPResponse, locator: str) -> str | None:
    """The decoded HTML of an HTML response, None for any other kind."""
    if not response.content.strip():
        return None
    try:
        kind = _content_kind(response.content_type, response.content, locator)
        if kind != "html":
            return None
        return decode_html(response.content, choose_charset(response.content,
                                                            response.charset))
    except (UnsupportedType, CorruptContent):
        return None


def without_browser(shell: Shell, reason: str) -> Document:
    """The plain result of a page that could not be rendered: its document with a
    warning, or the EmptyContent it raised, saying why it was not rendered (the
    remedy is given once per process)."""
    why = f"it is built by JavaScript and was not rendered: {reason}"
    remedy = None if _REMEDY_GIVEN.is_set() else _NO_BROWSER_REMEDY
    _REMEDY_GIVEN.set()
    if isinstance(shell.plain, EmptyContent):
        raise EmptyContent(f"the page has no readable text ({why})",
                           locator=shell.plain.locator, hint=remedy)
    warning = f"the page {why}" + (f"; {remedy}" if remedy else "")
    return replace(shell.plain, warnings=(*shell.plain.warnings, warning))


_NO_BROWSER_REMEDY = ("install Chromium (apt-get install chromium) and Playwright "
                      "(pip install 'fetchledger[browser]') to render such pages")
_REMEDY_GIVEN = threading.Event()


def rendered_document(page: RenderedPage, identity: Identity, *, limits: Limits, key: bytes,
                      secrets: Sequence[str] = ()) -> Document:
    """The document of a page Chromium rendered: the DOM as its raw bytes, the browser
    as its extractor, what the render met in its metadata, and a warning naming the
    requests the address policy refused."""
    try:
        document = document_from_response(page.response, identity, limits=limits, key=key,
                                          secrets=secrets)
    except EmptyContent as empty:
        raise EmptyContent("the page has no readable text, even with its JavaScript run in "
                           f"{page.engine}", locator=empty.locator) from empty
    warnings = document.warnings
    if page.refused:
        targets = sorted({urlsplit(r["target"]).netloc or r["target"] for r in page.refused})
        warnings = (*warnings, f"the browser refused {len(page.refused)} request"
                               f"{'s' * (len(page.refused) != 1)} of this page by the address "
                               f"policy ({', '.join(targets[:5])}"
                               f"{', ...' if len(targets) > 5 else ''})")
    document = replace(document, extractor="browser",
                       extractor_version=f"{page.engine}; {document.extractor} "
                                         f"{document.extractor_version}",
                       meta={**document.meta, "browser": page.facts}, warnings=warnings)
    return scrub_secrets(document, secrets)


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
    if response.exchanges:
        meta["exchanges"] = [_stored_exchange(e) for e in response.exchanges]
    return meta


def _stored_exchange(exchange: Exchange) -> dict[str, Any]:
    """A request and its answer's status line and headers as the ledger keeps them for
    the WARC export: secret headers and URL secrets redacted, nothing else changed."""
    def headers(items: tuple[tuple[str, str], ...]) -> list[list[str]]:
        return [[name, redact_header(name, value)] for name, value in items]

    return {"method": exchange.method, "url": redact_url(exchange.url),
            "request_headers": headers(exchange.request_headers),
            "http_version": exchange.http_version, "status": exchange.status,
            "reason": exchange.reason, "headers": headers(exchange.headers)}


def document_from_response(response: HTTPResponse, identity: Identity, *, limits: Limits,
                           key: bytes, secrets: Sequence[str] = ()) -> Document:
    """Route a final response by content type and extract its text; the document
    carries ``identity`` and, for a web page, the URLs of its redirect chain as aliases
    (identities under ``key``, the one ``identity`` was made with)."""
    body = response.content
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
        document = html_document(body, identity, meta, url=response.display_url,
                                 charset=choose_charset(body, response.charset))
    else:
        document = _text_document(kind, body, response, identity, meta)
    document = replace(document, kind=identity.kind, locator=identity.locator,
                       display=identity.display, aliases=_aliases(response, identity, key))
    return scrub_secrets(document, [*secrets, *_redirect_secrets(response)])


def _redirect_secrets(response: HTTPResponse) -> list[str]:
    """The secrets of the URLs a redirect sent the request to (``Location:
    /cb?token=...``), of the headers each hop sent (a session cookie the server set on
    the way) and the cookies it set: the server may echo them as it echoes the first
    URL's."""
    followed = (*response.hops[1:], response.url) if response.hops else ()
    found = [form for url in followed for form in request_secrets(url)]
    for exchange in response.exchanges:
        found.extend(request_secrets(exchange.url, exchange.request_headers))
        for name, value in exchange.headers:
            if name.lower() == "set-cookie":
                cookie, _, cookie_value = value.partition(";")[0].partition("=")
                if len(cookie_value.strip()) >= 6 or is_secret_name(cookie):
                    found.append(cookie_value)
    return found


def _aliases(response: HTTPResponse, identity: Identity, key: bytes) -> tuple[str, ...]:
    """The identities of a GET's redirect chain and its final URL: names of the same page
    (a POST's final URL is not). Without redirects the final URL is the identity. The
    hops as requested, secrets included, so that their keyed marks are right."""
    if identity.kind != "web" or not response.hops:
        return ()
    found = (_identity_of(u, key) for u in (*response.hops, response.url))
    return tuple(dict.fromkeys(u for u in found if u is not None))


def _identity_of(url: str, key: bytes) -> str | None:
    try:
        return url_identity(url, key)
    except InvalidURL:  # a hop to a scheme that is no web page
        return None


def _content_kind(content_type: str, body: bytes, locator: str) -> ContentKind:
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


def _sniff(body: bytes, content_type: str, locator: str) -> ContentKind:
    head = body[:2048]
    if head.lstrip().startswith(b"%PDF-"):
        return "pdf"
    if looks_like_html(head):
        return "html"
    if not looks_binary(body):
        stripped = body.strip()
        if stripped[:1] in (b"{", b"["):
            try:
                json.loads(stripped)
                return "json"
            except (ValueError, RecursionError):
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


def _text_document(kind: TextForm, body: bytes, response: HTTPResponse, identity: Identity,
                   meta: dict[str, Any]) -> Document:
    try:
        decoded = decode_bytes(body, choose_charset(body, response.charset),
                               locator=identity.display)
    except UnsupportedType as exc:
        raise UnsupportedType(f"{exc.message} ({response.content_type or 'no content type'})",
                              locator=identity.display) from exc
    return text_document(decoded, kind, body, identity, meta,
                         title=_file_name(response.display_url))


def _file_name(url: str) -> str | None:
    """The last path segment of a URL (``stations.json``): the title of a JSON or
    text resource that names itself nothing better."""
    path = urlsplit(url).path.rstrip("/")
    name = unquote(path.rsplit("/", 1)[-1]) if path else ""
    return one_line(name) or None


# --- secrets -----------------------------------------------------------------------------


