"""curl-style HTTP requests (``fetchledger curl``, ``Ledger.http_request``).

Identity (DESIGN §4): a GET without a body is the web page of its URL — the
same source as ``fetch`` of that URL. Every other request is kind ``http``,
identified by method, normalized URL and the SHA-256 of its (secret-redacted)
body. The response is read by content type as ``fetch`` reads it; a HEAD
request registers the response's status line and headers.

Secrets the request carries (Authorization, Cookie and API-key headers,
user-info, secret query parameters and body fields) are sent but never stored:
locators keep a redaction mark, and any echo of them in the response is
replaced by ``REDACTED`` before it is stored.
"""

from __future__ import annotations

from ..config import Limits
from ..document import Document
from ..errors import EmptyContent
from ..identity import Identity
from ..identity.echoed import scrub_secrets
from ..identity.secrets import (
    redact_header,
    request_secrets,
    secret_forms,
)
from ..identity.urls import http_identity, http_locator
from ..net.client import HTTPClient, HTTPRequest, HTTPResponse
from .protocol import HttpInput
from .web import document_from_response, response_meta, web_identity

__all__ = ["HttpAdapter", "request_identity", "secrets_of"]


def request_identity(request: HTTPRequest, key: bytes) -> Identity:
    """Who the request is: a web page for a plain GET, else ``METHOD URL [body hash]``
    (secret query values as their keyed marks under ``key``). Raises InvalidURL (bad
    input) for a URL that cannot be requested."""
    method = request.method.upper()
    if method == "GET" and not request.content:
        return web_identity(request.url, key)
    content_type = _content_type(request)
    return Identity("http", http_identity(method, request.url, request.content, content_type,
                                          key),
                    http_locator(method, request.url, request.content, content_type))


def secrets_of(request: HTTPRequest, extra: tuple[str, ...] = ()) -> list[str]:
    """Every secret value the request carries (to scrub from the response)."""
    found = request_secrets(request.url, request.headers, request.content, _content_type(request))
    return secret_forms([*found, *extra])


def _content_type(request: HTTPRequest) -> str:
    return next((v for n, v in request.headers if n.lower() == "content-type" and v), "")


class HttpAdapter:
    """Sends one request (:class:`~.protocol.HttpInput`) through the shared client and
    reads its response."""

    def __init__(self, client: HTTPClient, key: bytes, limits: Limits | None = None) -> None:
        self.client = client
        self.key = key
        self.limits = limits or client.limits

    def identify(self, given: HttpInput) -> Identity:
        return request_identity(given.request, self.key)

    def load(self, given: HttpInput, identity: Identity) -> Document:
        secrets = secrets_of(given.request, given.extra_secrets)
        response = self.client.send(given.request)
        if response.method == "HEAD":
            return scrub_secrets(_headers_document(response, identity), secrets)
        return document_from_response(response, identity, limits=self.limits, key=self.key,
                                      secrets=secrets)


def _headers_document(response: HTTPResponse, identity: Identity) -> Document:
    """A HEAD response as text: the status line, then one header per line (secret
    headers such as Set-Cookie redacted)."""
    lines = [f"{response.http_version} {response.status} {response.reason}".strip()]
    for name, value in response.headers.multi_items():
        lines.append(f"{name}: {redact_header(name, value)}")
    text = "\n".join(line for line in lines if line.strip())
    if not text:
        raise EmptyContent("the response has no headers", locator=identity.display)
    return Document(
        kind=identity.kind, locator=identity.locator, display=identity.display, text=text,
        raw=text.encode(), title=None, extractor="http-headers",
        extractor_version=response.http_version, meta=response_meta(response))

