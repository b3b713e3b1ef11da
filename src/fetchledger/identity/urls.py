"""The canonical identity of a source (DESIGN §4), and what people are shown.

A source's *locator* is what dedupes it: one canonical locator, one id. Its
*display* form is what people see. Secrets never enter either: the display
keeps a ``REDACTED`` mark, and the locator, where a redacted value still tells
two resources apart (a query value), the value's keyed mark
(:func:`fetchledger.identity.secrets.keyed_mark`: an HMAC under the ledger's
own random key, never the value).

- Local file: the resolved absolute path.
- Web page (and any GET without a body): the normalized URL — lowercase
  scheme and host, default port dropped, escapes of unreserved characters
  decoded (then dot segments resolved, so ``/a/%2e%2e/b`` is ``/b`` and a
  trailing ``..`` keeps its slash), other escapes uppercased, a stray ``%``
  escaped (``%25``), fragment
  dropped, tracking parameters (``utm_*``, ``fbclid``, ``gclid``, ...) dropped,
  the rest of the query kept in order; a secret path parameter's value
  (``/a;jsessionid=V``) is marked like a secret query value. User-info is a credential, not
  identity: the identity has none, and any user-info shows as ``REDACTED@`` (an empty one
  is none).
- Other HTTP requests: ``METHOD normalized-URL`` plus the SHA-256 of the body
  (with secret fields of form and JSON bodies redacted first: credentials).

Normalizing a normalized URL changes nothing.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

from ..errors import InvalidPath, InvalidURL
from ..hints import Hint
from ..inputs import path_error
from .addresses import parse_ip_host
from .secrets import (
    REDACTED,
    Mark,
    is_callback_name,
    is_secret_name,
    keyed_mark,
    oauth_companions,
    param_name,
    plain_mark,
    redact_body,
    redact_nested,
    redact_path_params,
    secret_value,
    shown_url,
)
from .shapes import redact_shapes

if TYPE_CHECKING:
    import httpx

__all__ = [
    "RequestLocator",
    "file_locator",
    "http_identity",
    "http_locator",
    "normalize_url",
    "parse_http_url",
    "redact_url",
    "split_http_locator",
    "url_identity",
    "whatwg_slashes",
    "without_userinfo",
]


def file_locator(path: str | os.PathLike[str]) -> Path:
    """The resolved absolute path of a readable regular file (its identity).

    Raises InvalidPath (bad input, exit 2) for a missing path, a directory,
    a device or pipe, or a path that cannot be resolved.
    """
    if not os.fspath(path):  # Path("") is the working directory
        raise InvalidPath("the file name is empty", hint="name a file")
    given = Path(path).expanduser()
    try:
        resolved = given.resolve(strict=True)
    except FileNotFoundError as exc:
        raise InvalidPath(f"no such file: {path}") from exc
    except OSError as exc:  # too long, a loop, a file as a folder, permission on a parent
        raise path_error(os.fspath(path), exc, verb="resolve") from exc
    except RuntimeError as exc:  # a symlink loop, as pathlib reports it
        raise InvalidPath(f"cannot resolve {path}: {exc}") from exc
    try:
        str(resolved).encode("utf-8")
    except UnicodeEncodeError as exc:  # bytes kept as lone surrogates: no ledger stores them
        shown = str(resolved).encode("utf-8", "surrogateescape").decode("utf-8",
                                                                        "backslashreplace")
        raise InvalidPath(f"the file name {shown} is not valid UTF-8",
                          hint=Hint("rename it, or {read_piped}")) from exc
    if resolved.is_dir():
        raise InvalidPath(f"{path} is a directory, not a file",
                          hint="pass the files inside it, e.g. a shell glob")
    if not resolved.is_file():
        raise InvalidPath(f"{path} is not a regular file (a device, pipe or socket)",
                          hint=Hint("{read_piped}"))
    return resolved


# --- URLs ---------------------------------------------------------------------------------

_HOST_NAME = re.compile(r"^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?$")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# what "did you mean https://…" may be offered for: a host name first, no blanks or quotes
# (never for `[1,2]` or a quoted URL, where it made `https://"http://…"`)
_LOOKS_LIKE_HOST = re.compile(r"[\w-]+(?:\.[\w-]+)+(?::[0-9]+)?(?:[/?#][^\s\"'<>]*)?\Z")


def parse_http_url(url: str) -> httpx.URL:
    """A fetchable http(s) URL, or InvalidURL (bad input: exit 2, nothing recorded).

    Numeric IPv4 hosts in any spelling (``0x7f.1``, ``2130706433``) become
    dotted quads, as browsers do, so the policy and the request agree on them.
    """
    text = url.strip() if isinstance(url, str) else ""
    if not text:
        raise InvalidURL("empty URL")
    if _CONTROL.search(text):
        raise InvalidURL(f"the URL {shown_url(text)} contains control characters")
    scheme = _SCHEME.match(text)
    if scheme is None:
        guess = shown_url(text).lstrip("/")
        raise InvalidURL(f"{shown_url(text)} is not a URL (no http:// or https://)",
                         hint=f"did you mean https://{guess} ?" if _LOOKS_LIKE_HOST.match(guess)
                         else "a URL starts with http:// or https://")
    if scheme.group(1).lower() not in ("http", "https"):
        raise InvalidURL(f"only http and https URLs can be fetched, not {scheme.group(1)}:"
                         f" ({shown_url(text)})",
                         hint=Hint("{read} for local files"))
    import httpx  # here, not at import time: reading files needs no HTTP stack

    text = _resolved_path(_canonical_ipv4_host(whatwg_slashes(text)))
    _check_port(text)
    try:
        parsed = httpx.URL(text)
    except (httpx.InvalidURL, ValueError, UnicodeError) as exc:
        raise InvalidURL(f"malformed URL {shown_url(text)}: {exc}") from exc
    host = parsed.raw_host.decode("ascii", "replace").lower()
    if not host:
        raise InvalidURL(f"the URL {shown_url(text)} has no host")
    if ":" in host and "%" in host:  # an IPv6 literal with a zone: [fe80::1%25eth0]
        raise InvalidURL(f"the URL {shown_url(text)} names an IPv6 zone (interface): "
                         "a zone only means something on one machine, and is never fetched")
    _check_punycode(host, text)
    if parsed.userinfo == b":":  # https://:@host/ has no user-info
        parsed = parsed.copy_with(userinfo=b"")
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise InvalidURL(f"the URL {shown_url(text)} has an invalid port {parsed.port}")
    ip = parse_ip_host(host)
    if ip is not None:
        literal = f"[{ip}]" if ip.version == 6 else str(ip)
        if literal != host:
            parsed = parsed.copy_with(host=str(ip))
    elif not _HOST_NAME.match(host) or len(host) > 253 \
            or any(len(label) > 63 for label in host.split(".")):
        raise InvalidURL(f"the URL {shown_url(text)} has an invalid host name")
    return parsed


_PORT = re.compile(r"[0-9]*")


def whatwg_slashes(text: str) -> str:
    """An http(s) URL or reference with each backslash before its query or fragment
    read as a slash, as WHATWG (every browser) reads it: ``http://h\\@evil/`` is host
    ``h`` (not user-info ``h\\`` at host ``evil``), ``http:\\\\h\\a`` is
    ``http://h/a`` and ``/a\\b`` the path ``/a/b``. The request, the policy and the
    identity then name what a browser would."""
    cut = min((i for i in (text.find("?"), text.find("#")) if i >= 0), default=len(text))
    if "\\" not in text[:cut]:
        return text
    return text[:cut].replace("\\", "/") + text[cut:]


def _check_port(text: str) -> None:
    """InvalidURL for a port that is not ASCII digits (``:+80``, ``: 80``, ``:8_0``,
    fullwidth digits): WHATWG refuses them, and Python's ``int`` would read them."""
    match = _AUTHORITY.match(text)
    if not match:
        return
    hostport = match.group(2).rpartition("@")[2]
    if hostport.startswith("[") and "]" not in hostport:  # http://[::1 is no port ':1'
        raise InvalidURL(f"the URL {shown_url(text)} opens an IPv6 address with [ and "
                         "never closes it with ]")
    after = hostport.rpartition("]")[2] if hostport.startswith("[") else hostport
    _, colon, port = after.partition(":")
    if colon and not _PORT.fullmatch(port):
        raise InvalidURL(f"the URL {shown_url(text)} has an invalid port {port!r}")


def _check_punycode(host: str, text: str) -> None:
    """InvalidURL for a host with a malformed punycode label (``xn--a``): no resolver or
    browser can name it, and the HTTP stack would fail on it mid-request."""
    if "xn--" not in host:
        return
    import idna  # httpx's own IDNA library

    for label in host.rstrip(".").split("."):
        if label.startswith("xn--"):
            try:
                idna.decode(label)
            except (idna.IDNAError, UnicodeError, ValueError) as exc:
                raise InvalidURL(f"the URL {shown_url(text)} has an invalid internationalized "
                                 f"host name ({label}: {exc})") from exc


_AUTHORITY = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)([^/?#]*)(.*)$", re.DOTALL)


_ESCAPED_DOT = re.compile("%2e", re.IGNORECASE)


def _resolved_path(text: str) -> str:
    """The URL with its path's escaped dots decoded and then its dot segments resolved
    (RFC 3986 §5.2.4, as browsers do): ``/a/%2e%2e/b`` → ``/b``, ``/a/b/..`` →
    ``/a/``. The request and the identity then name the same path."""
    match = _AUTHORITY.match(text)
    if not match:
        return text
    scheme, authority, rest = match.groups()
    cut = min((i for i in (rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    path = _remove_dot_segments(_ESCAPED_DOT.sub(".", rest[:cut]))
    return f"{scheme}{authority}{path}{rest[cut:]}"


def _remove_dot_segments(path: str) -> str:
    if "." not in path:
        return path
    segments = path.split("/")
    kept: list[str] = []
    for segment in segments:
        if segment == "..":
            if len(kept) > 1:
                kept.pop()
        elif segment != ".":
            kept.append(segment)
    if segments[-1] in (".", ".."):
        kept.append("")  # a trailing dot segment leaves its folder: /a/b/.. is /a/
    return "/".join(kept)


def _canonical_ipv4_host(text: str) -> str:
    """``http://0177.0.0.1/`` as ``http://127.0.0.1/`` (httpx refuses legacy spellings
    that browsers and resolvers accept; the policy must see them as what they are)."""
    match = _AUTHORITY.match(text)
    if not match:
        return text
    scheme, authority, rest = match.groups()
    userinfo, at, hostport = authority.rpartition("@")
    if hostport.startswith("["):
        return text
    host, colon, port = hostport.partition(":")
    ip = parse_ip_host(host)
    if ip is None or ip.version != 4 or str(ip) == host:
        return text
    return f"{scheme}{userinfo}{at}{ip}{colon}{port}{rest}"


_TRACKING_EXACT = frozenset({
    "fbclid", "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "msclkid", "yclid", "igshid",
    "twclid", "ttclid", "li_fat_id", "mc_cid", "mc_eid", "_ga", "_gl", "_hsenc", "_hsmi",
    "mkt_tok", "oly_anon_id", "oly_enc_id", "vero_id", "rb_clickid", "s_cid", "wickedid",
    "ref_src", "ref_url", "__s", "srsltid", "epik", "spm",
})
_TRACKING_PREFIXES = ("utm_", "pk_", "mtm_", "hsa_")


def _is_tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered in _TRACKING_EXACT or lowered.startswith(_TRACKING_PREFIXES)


_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# ``%XX``, a stray ``%``, or a character no URI may hold raw that the HTTP stack sends as
# it is (``\\`` of a query, ``|``, ``^``; it escapes ``"<>`{} `` and non-ASCII itself)
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})?|[\\|^]")


def _normalize_escapes(text: str) -> str:
    """Decode escapes of unreserved characters, uppercase the others (RFC 3986 §6.2.2),
    and escape a stray ``%`` (one not followed by two hex digits) as ``%25``: left as it
    was, decoding ``%41`` after ``%b`` would make a new escape ``%bA`` (and ``%%32%65``
    a ``%2e``), so normalizing twice would not give the same URL. A character that is
    neither reserved nor unreserved (``|``, ``^``, ``\\`` of a query) has no meaning of
    its own in a URI: it is escaped (``%7C``), one resource as its escape is."""
    def fix(match: re.Match[str]) -> str:
        if match.group() in "\\|^":
            return f"%{ord(match.group()):02X}"
        if match.group(1) is None:
            return "%25"
        byte = int(match.group(1), 16)
        return chr(byte) if byte in _UNRESERVED else f"%{match.group(1).upper()}"
    return _ESCAPE.sub(fix, text)


def _query_pairs(raw_query: str) -> list[tuple[str, str | None]]:
    """``a=1&b&c=`` as [("a", "1"), ("b", None), ("c", "")], kept exactly as escaped."""
    pairs: list[tuple[str, str | None]] = []
    for part in raw_query.split("&"):
        if not part:
            continue
        name, sep, value = part.partition("=")
        pairs.append((name, value if sep else None))
    return pairs


def _companions(pairs: list[tuple[str, str | None]]) -> bool:
    """Whether a query's pairs hold an OAuth companion (``redirect_uri=``, ``state=``...:
    :func:`.secrets.oauth_companions`), asked only when a callback name is among them."""
    if not any(is_callback_name(param_name(name)) for name, _ in pairs):
        return False
    return oauth_companions((param_name(name), unquote(value or "")) for name, value in pairs)


def _url_parts(url: str | httpx.URL, *, normalize: bool, mark: Mark | None = None,
               userinfo: bool = True) -> str:
    parsed = parse_http_url(url) if isinstance(url, str) else url
    scheme = parsed.scheme
    host = parsed.raw_host.decode("ascii").lower().rstrip(".")
    host = f"[{host}]" if ":" in host else host
    port = parsed.port
    default = {"http": 80, "https": 443}[scheme]
    netloc = host if port in (None, default) else f"{host}:{port}"
    if userinfo and parsed.userinfo and parsed.userinfo != b":":
        netloc = f"{REDACTED}@{netloc}"
    raw_path, _, raw_query = parsed.raw_path.decode("ascii").partition("?")
    pairs = _query_pairs(raw_query)
    companions = bool(pairs) and _companions(pairs)
    kept = []
    for name, value in pairs:
        plain = param_name(name)
        if normalize and _is_tracking(plain):
            continue
        if value is not None and (is_secret_name(plain) or (
                is_callback_name(plain)
                and secret_value(plain, unquote(value.replace("+", " ")), companions))):
            value = mark(_normalize_escapes(value)) if mark else REDACTED
        elif value:  # a URL or query inside the value keeps its secrets out too
            value = redact_nested(value, [], mark or plain_mark)
        kept.append(name if value is None else f"{name}={value}")
    path = redact_path_params(raw_path or "/", [], mark or plain_mark)
    query = "&".join(kept)
    if normalize:
        path, query = _remove_dot_segments(_normalize_escapes(path)), _normalize_escapes(query)
    # a webhook's secret path segment, a token anywhere in the path or query (shapes)
    rest = redact_shapes(f"{netloc}{path}" + (f"?{query}" if query or (raw_query and not normalize)
                                              else ""), [], mark or plain_mark)
    return f"{scheme}://{rest}"


def url_identity(url: str | httpx.URL, key: bytes) -> str:
    """The canonical identity of a web URL: its normalized form without user-info (a
    credential: `curl -u` and the same user-info in the URL, or none, are one request
    to one resource) and with each secret query value as its keyed mark under ``key``
    (the ledger's). InvalidURL if it is none."""
    return _url_parts(url, normalize=True, mark=keyed_mark(key), userinfo=False)


def normalize_url(url: str | httpx.URL) -> str:
    """A web URL's normalized form as people see it (secret values ``REDACTED``);
    InvalidURL if it is none."""
    return _url_parts(url, normalize=True)


def redact_url(url: str | httpx.URL) -> str:
    """The URL with user-info and secret query values replaced by ``REDACTED``, the
    fragment dropped, and otherwise as given (for messages and redirect chains)."""
    return _url_parts(url, normalize=False)


def http_locator(method: str, url: str | httpx.URL, body: bytes | None = None,
                 content_type: str = "") -> str:
    """A request other than a plain GET as people see it: ``POST https://host/path``
    plus ``body:sha256=...`` of the (secret-redacted) body when there is one."""
    return _http(method, normalize_url(url), body, content_type)


def http_identity(method: str, url: str | httpx.URL, body: bytes | None, content_type: str,
                  key: bytes) -> str:
    """The identity of a request other than a plain GET: :func:`http_locator` with the
    URL's secret query values as their keyed marks. Secret body fields are credentials
    and stay ``REDACTED`` (requests differing only in them are one source)."""
    return _http(method, url_identity(url, key), body, content_type)


def _http(method: str, url: str, body: bytes | None, content_type: str) -> str:
    locator = f"{method.upper()} {url}"
    if body:
        digest = hashlib.sha256(redact_body(body, content_type)).hexdigest()
        locator += f"{_BODY_MARK}{digest}"
    return locator


_BODY_MARK = " body:sha256="
_HTTP_LOCATOR = re.compile(r"([A-Z][A-Z0-9_-]*) (\S+?)(?: body:sha256=([0-9a-f]{64}))?")


@dataclass(frozen=True)
class RequestLocator:
    """The parts of an ``http`` source's locator: the method, the request URL (as
    displayed) and the SHA-256 of the (secret-redacted) body when one was sent."""

    method: str
    url: str
    body_sha256: str | None = None


def split_http_locator(locator: str) -> RequestLocator | None:
    """``POST https://host/path body:sha256=HEX`` as its parts (None for another form:
    a plain URL, as an older ledger may hold)."""
    match = _HTTP_LOCATOR.fullmatch(locator)
    if match is None:
        return None
    return RequestLocator(match.group(1), match.group(2), match.group(3))


def without_userinfo(url: str) -> str:
    """``url`` without its user-info (``https://REDACTED@host/`` → ``https://host/``):
    a credential, even redacted, is no part of an address people follow."""
    return re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#@]*@", r"\1", url)
