"""The one HTTP client: limits, the address policy, redirects hop by hop.

Every HTTP request fetchledger makes goes through :class:`HTTPClient` (or
:class:`AsyncHTTPClient`, the same behaviour for concurrent callers):

- **Address policy** (:mod:`fetchledger.net.policy`), checked on the address
  actually connected to: httpcore's network backend is wrapped
  (:mod:`fetchledger.net.connections`), so the host is resolved once, every
  resolved address is judged, and the socket is opened to a judged address
  (DNS rebinding finds no window). Literal addresses are judged before
  anything is sent, on every redirect hop.
- **Redirects** are followed here, one hop at a time (each hop is validated
  and judged), up to ``Limits.max_redirects``; or not at all (curl without
  ``-L``), in which case a redirect is an ``http_error`` naming its target.
- **One wall-clock deadline** (``Limits.total_timeout``) across DNS, connect,
  every hop and the body: every socket operation gets at most the time left.
- **Body caps** as received (``max_body_bytes``) and decoded
  (``max_decoded_bytes``); content codings are decoded here with bounded
  output (:mod:`fetchledger.net.decoding`), so a decompression bomb stops
  at the cap with memory bounded by the cap.
- An honest User-Agent; no cookies, proxies or .netrc from the environment.

Failures are raised as the errors of :mod:`fetchledger.errors` (HTTP >= 400
→ HTTPStatusError, deadline → RetrievalTimeout, caps → TooLarge, ...);
messages show URLs with their secrets redacted.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import Message
from typing import Any

import anyio
import httpx

from .._version import __version__
from ..config import Limits
from ..errors import (
    BlockedAddress,
    FetchLedgerError,
    HTTPStatusError,
    InvalidArgument,
    InvalidURL,
    NetworkError,
    RetrievalFailed,
    RetrievalTimeout,
    TooLarge,
)
from ..identity.addresses import IPAddress, parse_ip_host
from ..identity.secrets import basic_credentials, is_secret_name
from ..identity.urls import parse_http_url, redact_url, whatwg_slashes
from .connections import (
    Budget,
    Resolver,
    async_transport,
    budget_scope,
    default_resolver,
    judge,
    resolve,
    resolve_async,
    sync_transport,
    system_resolver,
)
from .decoding import ACCEPT_ENCODING, DecodingPipeline
from .policy import AddressPolicy

__all__ = [
    "DEFAULT_ACCEPT",
    "USER_AGENT",
    "AsyncHTTPClient",
    "Exchange",
    "HTTPClient",
    "HTTPRequest",
    "HTTPResponse",
    "Resolver",
    "system_resolver",
]

USER_AGENT = f"fetchledger/{__version__} (citation ledger; python-httpx/{httpx.__version__})"
DEFAULT_ACCEPT = ("text/html,application/xhtml+xml,application/pdf;q=0.9,application/json;q=0.9,"
                  "text/plain;q=0.8,*/*;q=0.5")
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


# --- requests and responses -------------------------------------------------------------


@dataclass(frozen=True)
class HTTPRequest:
    """What to send. ``headers`` replace the defaults of the same name; a value of
    None removes a default header (curl's ``-H "Accept:"``)."""

    url: str
    method: str = "GET"
    headers: tuple[tuple[str, str | None], ...] = ()
    content: bytes | None = None
    follow_redirects: bool = True
    total_timeout: float | None = None  # overrides Limits.total_timeout (curl --max-time)
    connect_timeout: float | None = None  # overrides Limits.connect_timeout (curl's option)


@dataclass(frozen=True)
class Exchange:
    """One request sent and the status line and headers answered to it (a redirect hop
    or the final response), as on the wire: secrets included, never to be stored as is
    (``adapters.web.response_meta`` redacts them)."""

    method: str
    url: str
    request_headers: tuple[tuple[str, str], ...]
    status: int
    reason: str
    http_version: str
    headers: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, response: httpx.Response) -> Exchange:
        request = response.request
        return cls(request.method, str(request.url), _as_sent(request.headers),
                   response.status_code, response.reason_phrase or "", response.http_version,
                   _as_sent(response.headers))


def _as_sent(headers: httpx.Headers) -> tuple[tuple[str, str], ...]:
    """Headers in their order and spelling on the wire (``multi_items`` lowercases)."""
    return tuple((name.decode("latin-1"), value.decode("latin-1"))
                 for name, value in headers.raw)


@dataclass(frozen=True)
class HTTPResponse:
    """A final response (2xx; 304 to a conditional request) with its decoded body.

    ``url`` is the final URL as requested, secrets included: store only
    :attr:`display_url` (or a normalized locator). ``redirects`` are the
    earlier hops, already redacted; ``hops`` the same hops as requested (for
    identities computed under a key; never stored).
    """

    method: str
    url: str
    status: int
    reason: str
    http_version: str
    headers: httpx.Headers
    content: bytes
    received: int  # bytes on the wire (before content decoding)
    redirects: tuple[str, ...] = ()
    elapsed: float = 0.0
    hops: tuple[str, ...] = field(default=(), repr=False)
    # every request sent and its answer's headers, redirect hops first (secrets included)
    exchanges: tuple[Exchange, ...] = field(default=(), repr=False)

    @functools.cached_property
    def display_url(self) -> str:
        """The final URL as it may be stored and shown (secrets redacted)."""
        return redact_url(self.url)

    @property
    def content_type(self) -> str:
        """The media type, lowercase, without parameters (``""`` when absent)."""
        header = str(self.headers.get("content-type", ""))
        return header.split(";", 1)[0].strip().lower()

    @property
    def charset(self) -> str | None:
        """The charset parameter of Content-Type, if any."""
        header = self.headers.get("content-type")
        if not header:
            return None
        message = Message()
        message["content-type"] = header
        value = message.get_param("charset")
        return value.strip() if isinstance(value, str) and value.strip() else None


@dataclass(frozen=True)
class _Redirect:
    target: httpx.URL
    error: HTTPStatusError | None = None  # set when redirects are not followed


def _host_port(url: httpx.URL) -> str:
    host = url.host
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{url.port}" if url.port else host


@dataclass
class _Exchange:
    """One request's journey through its hops: the decisions, not the I/O
    (shared by the sync and async clients)."""

    request: HTTPRequest
    limits: Limits
    policy: AddressPolicy
    user_agent: str
    url: httpx.URL = field(init=False)
    method: str = field(init=False)
    content: bytes | None = field(init=False)
    headers: httpx.Headers = field(init=False)
    budget: Budget = field(init=False)
    hops: list[httpx.URL] = field(default_factory=list)
    exchanges: list[Exchange] = field(default_factory=list)
    cookies: httpx.Cookies = field(default_factory=httpx.Cookies)
    started: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        url = parse_http_url(self.request.url)
        self.method = self.request.method.upper()
        if not re.fullmatch(r"[A-Z][A-Z0-9_-]*", self.method):
            raise InvalidArgument(f"invalid HTTP method {self.request.method!r}")
        self.content = self.request.content
        headers = httpx.Headers({"User-Agent": self.user_agent, "Accept": DEFAULT_ACCEPT,
                                 "Accept-Encoding": ACCEPT_ENCODING})
        for name, value in self.request.headers:
            _check_header(name, value)
            if value is None:
                headers.pop(name, None)
            else:
                headers[name] = value
        if url.userinfo:
            if "authorization" not in headers:
                headers["Authorization"] = basic_credentials(url.userinfo)
            url = url.copy_with(userinfo=b"")
        self.url, self.headers = url.copy_with(fragment=None), headers
        total = self.request.total_timeout or self.limits.total_timeout
        self.budget = Budget(time.monotonic() + total, total)

    @property
    def timeouts(self) -> dict[str, float]:
        total = self.budget.seconds
        connect = self.request.connect_timeout or self.limits.connect_timeout
        return {"connect": min(connect, total), "read": total,
                "write": total, "pool": total}

    def build(self) -> httpx.Request:
        """The next request to send; literal addresses are judged before any packet."""
        self.budget.check()
        ip = parse_ip_host(self.url.host)
        if ip is not None:
            self.policy.check(ip, self.url.host)
        request = httpx.Request(self.method, self.url, headers=self.headers.copy(),
                                content=self.content, extensions={"timeout": self.timeouts})
        self.cookies.set_cookie_header(request)
        return request

    def after_headers(self, response: httpx.Response) -> _Redirect | None:
        """A redirect to follow (or refuse), None for a final 2xx; raises for >= 400."""
        self.cookies.extract_cookies(response)
        self.exchanges.append(Exchange.of(response))
        status = response.status_code
        reason = response.reason_phrase or ""
        where = f" at {redact_url(self.url)}" if self.hops else ""
        if status >= 400:
            raise HTTPStatusError(f"HTTP {status} {reason}{where}".strip(), http_status=status,
                                  retry_after=response.headers.get("retry-after"))
        if status < 300 or (status == 304 and self.conditional):
            return None  # final (a 304 answers a conditional request: no body)
        location = response.headers.get("location")
        if status not in REDIRECT_STATUSES or location is None:
            raise HTTPStatusError(f"HTTP {status} {reason}{where}: a redirect without a "
                                  f"Location to follow", http_status=status)
        target = self._redirect_target(status, reason, location)
        if not self.request.follow_redirects:
            return _Redirect(target, HTTPStatusError(
                f"HTTP {status} {reason}: redirects to {redact_url(target)} (not followed)",
                http_status=status, hint="curl -L follows redirects"))
        if len(self.hops) >= self.limits.max_redirects:
            raise HTTPStatusError(f"more than {self.limits.max_redirects} redirects"
                                  f"{self._loop_note(target)}", http_status=status)
        self._advance(status, target)
        return _Redirect(target)

    def _redirect_target(self, status: int, reason: str, location: str) -> httpx.URL:
        prefix = f"HTTP {status} {reason}: "
        try:
            joined = self.url.join(whatwg_slashes(location.strip()))  # `\\\\h/x` is //h/x
        except (httpx.InvalidURL, ValueError, UnicodeError) as exc:
            raise HTTPStatusError(f"{prefix}malformed Location header: {exc}",
                                  http_status=status) from exc
        scheme = joined.scheme.lower()
        if scheme not in ("http", "https"):
            raise BlockedAddress(f"refused by the address policy: {prefix}redirects to a "
                                 f"{scheme}: URL; only http and https redirects are followed, "
                                 f"and no switch opens other schemes")
        try:
            target = parse_http_url(str(joined))
        except InvalidURL as exc:
            raise HTTPStatusError(f"{prefix}malformed Location header: {exc.message}",
                                  http_status=status) from exc
        ip = parse_ip_host(target.host)
        if ip is not None:
            try:
                self.policy.check(ip, target.host)
            except BlockedAddress as exc:
                raise BlockedAddress(f"{prefix}redirects to {redact_url(target)}: "
                                     f"{exc.message}") from exc
        return target.copy_with(userinfo=b"", fragment=None)

    def _loop_note(self, target: httpx.URL) -> str:
        seen = [str(u) for u in self.hops] + [str(self.url)]
        if str(target) in seen:
            return f" (a loop: {redact_url(self.url)} redirects back to {redact_url(target)})"
        return ""

    def _advance(self, status: int, target: httpx.URL) -> None:
        """Move to the next hop: the method and body as browsers (and httpx) change them,
        secret headers dropped when the origin changes."""
        if (status == 303 and self.method != "HEAD") or (status in (301, 302)
                                                          and self.method == "POST"):
            self.method, self.content = "GET", None
            for name in ("content-type", "content-length", "transfer-encoding"):
                self.headers.pop(name, None)
        if not _same_origin(self.url, target):
            for name in [n for n in self.headers if is_secret_name(n)]:
                del self.headers[name]
        self.hops.append(self.url)
        self.url = target

    def not_followed_refusal(self, redirect: _Redirect, check: Callable[[httpx.URL], None]
                             ) -> FetchLedgerError:
        """The error of a redirect that is not followed: blocked_address when its target
        is refused by the policy (``check`` resolves it), else the http_error."""
        assert redirect.error is not None
        try:
            check(redirect.target)
        except BlockedAddress as exc:
            return BlockedAddress(f"{redirect.error.message.removesuffix(' (not followed)')}: "
                                  f"{exc.message}")
        except RetrievalFailed:
            pass  # the target does not resolve: the redirect itself is the error
        return redirect.error

    @property
    def conditional(self) -> bool:
        """Whether the request carries a validator (If-None-Match, If-Modified-Since)."""
        return "if-none-match" in self.headers or "if-modified-since" in self.headers

    def has_body(self, response: httpx.Response) -> bool:
        return self.method != "HEAD" and response.status_code not in (204, 304)

    def reader(self, response: httpx.Response) -> _BodyReader:
        return _BodyReader(response.headers, self.limits, self.budget)

    def result(self, response: httpx.Response, content: bytes, received: int) -> HTTPResponse:
        return HTTPResponse(
            method=self.method, url=str(self.url), status=response.status_code,
            reason=response.reason_phrase or "", http_version=response.http_version,
            headers=response.headers, content=content, received=received,
            redirects=tuple(redact_url(u) for u in self.hops),
            hops=tuple(str(u) for u in self.hops), exchanges=tuple(self.exchanges),
            elapsed=time.monotonic() - self.started)

    @contextmanager
    def errors(self) -> Iterator[None]:
        """httpx's failures as fetchledger's errors, messages naming the host."""
        host = _host_port(self.url)
        try:
            yield
        except httpx.TimeoutException as exc:
            if self.budget.left() <= 0:
                raise self.budget.expired() from exc
            if isinstance(exc, httpx.ConnectTimeout):
                raise RetrievalTimeout(f"timed out connecting to {host} after "
                                       f"{self.timeouts['connect']:g} s") from exc
            raise RetrievalTimeout(f"{host} stopped answering") from exc
        except httpx.ConnectError as exc:
            raise NetworkError(f"cannot connect to {host}: {_reason(exc)}") from exc
        except httpx.RemoteProtocolError as exc:
            raise NetworkError(f"{host} broke off the response: {_reason(exc)}") from exc
        except httpx.LocalProtocolError as exc:
            raise InvalidArgument(f"cannot send this request: {_reason(exc)}") from exc
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise InvalidURL(f"cannot request {redact_url(self.url)}: {_reason(exc)}") from exc
        except httpx.HTTPError as exc:  # read/write errors: reset, broken pipe
            raise NetworkError(f"the connection to {host} failed: {_reason(exc)}") from exc


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return re.sub(r"^\[Errno -?\d+\]\s*", "", text).strip()


def _check_header(name: str, value: str | None) -> None:
    if not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name):
        raise InvalidArgument(f"invalid header name {name!r}")
    if value is not None and re.search(r"[\r\n\x00]", value):
        raise InvalidArgument(f"the value of header {name} contains a line break")
    if value is not None and re.search("[\ud800-\udfff]", value):  # bytes not UTF-8
        raise InvalidArgument(f"the value of header {name} is not valid UTF-8")


def _same_origin(a: httpx.URL, b: httpx.URL) -> bool:
    if (a.scheme, a.host) == ("http", b.host) and b.scheme == "https" and a.port in (None, 80) \
            and b.port in (None, 443):
        return True  # an upgrade to https on the same host keeps credentials (as httpx)
    return (a.scheme, a.host, a.port) == (b.scheme, b.host, b.port)


class _BodyReader:
    """Counts the body as received and as decoded, and stops each at its cap."""

    def __init__(self, headers: httpx.Headers, limits: Limits, budget: Budget) -> None:
        self.limits, self.budget = limits, budget
        announced = headers.get("content-length", "").strip()
        if announced.isdigit() and int(announced) > limits.max_body_bytes:
            raise TooLarge(f"the server announces {int(announced):,} bytes, over the cap of "
                           f"{limits.max_body_bytes:,} bytes")
        self.pipeline = DecodingPipeline(headers.get("content-encoding", ""))
        self.received = 0
        self.body = bytearray()

    def feed(self, raw: bytes) -> None:
        self.received += len(raw)
        if self.received > self.limits.max_body_bytes:
            raise TooLarge(f"the body is over the cap of {self.limits.max_body_bytes:,} bytes "
                           f"as received")
        for piece in self.pipeline.feed(raw):
            self._add(piece)
        self.budget.check()

    def _add(self, piece: bytes) -> None:
        if len(self.body) + len(piece) > self.limits.max_decoded_bytes:
            raise TooLarge(f"the body decodes to over {self.limits.max_decoded_bytes:,} bytes "
                           f"(the decoded cap; a compression bomb?)")
        self.body += piece

    def finish(self) -> bytes:
        for piece in self.pipeline.finish():
            self._add(piece)
        return bytes(self.body)


# --- the clients ---------------------------------------------------------------------------


class HTTPClient:
    """The synchronous client. One per ledger; thread-safe for separate requests."""

    def __init__(self, limits: Limits | None = None, *, allow_private: bool = False,
                 allow_hosts: Iterable[str] = (), resolver: Resolver | None = None,
                 user_agent: str = USER_AGENT,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.limits = limits or Limits()
        self.policy = AddressPolicy.of(allow_private, allow_hosts)
        self.resolver = resolver
        self.user_agent = user_agent
        self._transport = transport or sync_transport(self.policy, resolver)

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> HTTPClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def get(self, url: str, **options: Any) -> HTTPResponse:
        return self.send(HTTPRequest(url, **options))

    def send(self, request: HTTPRequest) -> HTTPResponse:
        """Send ``request`` hop by hop; the final 2xx response with its decoded body."""
        exchange = _Exchange(request, self.limits, self.policy, self.user_agent)
        with budget_scope(exchange.budget):
            while True:
                outgoing = exchange.build()
                with exchange.errors():
                    response = self._transport.handle_request(outgoing)
                    response.request = outgoing
                    try:
                        redirect = exchange.after_headers(response)
                        if redirect is not None:
                            if redirect.error is not None:
                                raise exchange.not_followed_refusal(redirect, self.check_host)
                            continue
                        reader = exchange.reader(response)
                        if exchange.has_body(response):
                            for raw in response.iter_raw():
                                reader.feed(raw)
                        return exchange.result(response, reader.finish(), reader.received)
                    finally:
                        response.close()

    def check_host(self, url: httpx.URL) -> None:
        """Judge where ``url`` would connect, without connecting (BlockedAddress, DNSError)."""
        host = url.host
        if self.policy.host_allowed(host):
            return
        judge(self.policy, host, resolve(self.resolver or default_resolver, host, url.port or 0))


class AsyncHTTPClient:
    """The asynchronous client (same behaviour), for concurrent callers such as batch."""

    def __init__(self, limits: Limits | None = None, *, allow_private: bool = False,
                 allow_hosts: Iterable[str] = (), resolver: Resolver | None = None,
                 user_agent: str = USER_AGENT,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.limits = limits or Limits()
        self.policy = AddressPolicy.of(allow_private, allow_hosts)
        self.resolver = resolver
        self.user_agent = user_agent
        self._transport = transport or async_transport(self.policy, resolver)

    async def aclose(self) -> None:
        await self._transport.aclose()

    async def __aenter__(self) -> AsyncHTTPClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def get(self, url: str, **options: Any) -> HTTPResponse:
        return await self.send(HTTPRequest(url, **options))

    async def send(self, request: HTTPRequest) -> HTTPResponse:
        exchange = _Exchange(request, self.limits, self.policy, self.user_agent)
        with budget_scope(exchange.budget):
            while True:
                outgoing = exchange.build()
                with exchange.errors():
                    response = await self._with_deadline(
                        exchange, self._transport.handle_async_request(outgoing))
                    response.request = outgoing
                    try:
                        redirect = exchange.after_headers(response)
                        if redirect is not None:
                            if redirect.error is not None:
                                raise exchange.not_followed_refusal(
                                    redirect, await self._host_checker(redirect.target))
                            continue
                        reader = exchange.reader(response)
                        if exchange.has_body(response):
                            async for raw in response.aiter_raw():
                                reader.feed(raw)
                        return exchange.result(response, reader.finish(), reader.received)
                    finally:
                        await response.aclose()

    @staticmethod
    async def _with_deadline(exchange: _Exchange, awaitable: Any) -> Any:
        """Await with the deadline enforced by cancellation too (mock transports and
        pool waits do not pass through the guarded streams)."""
        try:
            with anyio.fail_after(max(exchange.budget.left(), 0.0)):
                return await awaitable
        except TimeoutError as exc:
            raise exchange.budget.expired() from exc

    async def _host_checker(self, url: httpx.URL) -> Callable[[httpx.URL], None]:
        """Resolve ``url``'s host off the event loop, then judge it synchronously."""
        host = url.host
        failure: FetchLedgerError | None = None
        addresses: list[IPAddress] = []
        if not self.policy.host_allowed(host):
            try:
                addresses = await resolve_async(self.resolver or default_resolver, host,
                                                url.port or 0)
            except FetchLedgerError as exc:
                failure = exc

        def check(_: httpx.URL) -> None:
            if failure is not None:
                raise failure
            if addresses:
                judge(self.policy, host, addresses)

        return check
