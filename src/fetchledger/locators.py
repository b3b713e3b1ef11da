"""The canonical identity of a source (DESIGN §4), and what people are shown.

A source's *locator* is what dedupes it: one canonical locator, one id.
Secrets never enter a locator; the display form keeps a redaction mark.

- Local file: the resolved absolute path.
- Web page (and any GET without a body): the normalized URL — lowercase
  scheme and host, default port dropped, dot segments resolved, percent
  escapes normalized, fragment dropped, tracking parameters (``utm_*``,
  ``fbclid``, ``gclid``, ...) dropped, the rest of the query kept in order.
- Other HTTP requests: ``METHOD normalized-URL`` plus the SHA-256 of the body
  (with secret fields of form and JSON bodies redacted first).

Secrets (user-info, query parameters named like key/token/secret/password/
signature, Authorization/Cookie/API-key headers) are replaced by
``REDACTED``, so requests that differ only in a secret are one source.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, quote, unquote_to_bytes, urlencode

from .addresses import parse_ip_host
from .errors import InvalidPath, InvalidURL

if TYPE_CHECKING:
    import httpx

__all__ = [
    "REDACTED",
    "file_locator",
    "http_locator",
    "is_secret_header",
    "is_secret_param",
    "normalize_url",
    "parse_http_url",
    "redact_body",
    "redact_url",
    "secret_values",
    "shown_url",
]

REDACTED = "REDACTED"


def file_locator(path: str | os.PathLike[str]) -> Path:
    """The resolved absolute path of a readable regular file (its identity).

    Raises InvalidPath (bad input, exit 2) for a missing path, a directory,
    a device or pipe, or a path that cannot be resolved.
    """
    given = Path(path).expanduser()
    try:
        resolved = given.resolve(strict=True)
    except FileNotFoundError as exc:
        raise InvalidPath(f"no such file: {path}") from exc
    except (OSError, RuntimeError) as exc:  # symlink loops, permission on a parent
        raise InvalidPath(f"cannot resolve {path}: {exc}") from exc
    if resolved.is_dir():
        raise InvalidPath(f"{path} is a directory, not a file",
                          hint="pass the files inside it, e.g. a shell glob")
    if not resolved.is_file():
        raise InvalidPath(f"{path} is not a regular file (a device, pipe or socket)",
                          hint="pipe its content with `fetchledger read -` instead")
    return resolved


# --- URLs ---------------------------------------------------------------------------------

_HOST_NAME = re.compile(r"^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?$")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def parse_http_url(url: str) -> httpx.URL:
    """A fetchable http(s) URL, or InvalidURL (bad input: exit 2, nothing recorded).

    Numeric IPv4 hosts in any spelling (``0x7f.1``, ``2130706433``) become
    dotted quads, as browsers do, so the policy and the request agree on them.
    """
    text = url.strip() if isinstance(url, str) else ""
    if not text:
        raise InvalidURL("empty URL")
    if _CONTROL.search(text):
        raise InvalidURL(f"the URL {_shown(text)} contains control characters")
    scheme = _SCHEME.match(text)
    if scheme is None:
        raise InvalidURL(f"{_shown(text)} is not a URL (no http:// or https://)",
                         hint=f"did you mean https://{_shown(text).lstrip('/')} ?")
    if scheme.group(1).lower() not in ("http", "https"):
        raise InvalidURL(f"only http and https URLs can be fetched, not {scheme.group(1)}:"
                         f" ({_shown(text)})",
                         hint="use `fetchledger read PATH` for local files")
    import httpx  # here, not at import time: reading files needs no HTTP stack

    text = _canonical_ipv4_host(text)
    try:
        parsed = httpx.URL(text)
    except (httpx.InvalidURL, ValueError, UnicodeError) as exc:
        raise InvalidURL(f"malformed URL {_shown(text)}: {exc}") from exc
    host = parsed.raw_host.decode("ascii", "replace").lower()
    if not host:
        raise InvalidURL(f"the URL {_shown(text)} has no host")
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise InvalidURL(f"the URL {_shown(text)} has an invalid port {parsed.port}")
    ip = parse_ip_host(host)
    if ip is not None:
        literal = f"[{ip}]" if ip.version == 6 else str(ip)
        if literal != host:
            parsed = parsed.copy_with(host=str(ip))
    elif not _HOST_NAME.match(host) or len(host) > 253:
        raise InvalidURL(f"the URL {_shown(text)} has an invalid host name")
    return parsed


_AUTHORITY = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)([^/?#]*)(.*)$", re.DOTALL)


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


def shown_url(text: str) -> str:
    """Any input as it may be printed: a URL with its secrets redacted, even when it is
    too broken to parse."""
    return _shown(str(text))


# User-info before the host, also after fewer or other slashes, as browsers read
# ``http:/user:pw@host`` and ``http:\\user:pw@host``.
_SHOWN_USERINFO = re.compile(r"^((?:[A-Za-z][A-Za-z0-9+.-]*)?:[/\\]*|[^/?#]*//)[^/?#]*@")


def _shown(text: str) -> str:
    """A URL as it may appear in an error message: user-info and secret query values
    redacted lexically (it may be too broken to parse), fragment dropped, one line."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text[:500])
    head, sep, query = text.split("#", 1)[0].partition("?")
    head = _SHOWN_USERINFO.sub(rf"\1{REDACTED}@", head)
    if sep:
        parts = []
        for part in query.split("&"):
            name, eq, _ = part.partition("=")
            secret = eq and is_secret_param(_param_name(name))
            parts.append(f"{name}={REDACTED}" if secret else part)
        head += "?" + "&".join(parts)
    return head


_TRACKING_EXACT = frozenset({
    "fbclid", "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "msclkid", "yclid", "igshid",
    "twclid", "ttclid", "li_fat_id", "mc_cid", "mc_eid", "_ga", "_gl", "_hsenc", "_hsmi",
    "mkt_tok", "oly_anon_id", "oly_enc_id", "vero_id", "rb_clickid", "s_cid", "wickedid",
    "ref_src", "ref_url", "__s", "srsltid", "epik", "spm",
})
_TRACKING_PREFIXES = ("utm_", "pk_", "mtm_", "hsa_")

# Words that make a query parameter or header a secret ("apiKey", "X-Amz-Signature").
_SECRET_WORDS = frozenset({
    "key", "apikey", "token", "secret", "password", "passwd", "pwd", "pass", "passphrase",
    "signature", "sig", "auth", "authorization", "credential", "credentials", "session",
    "sessionid", "jwt", "bearer", "otp", "cookie", "privatekey",
})
_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(name)]


def is_secret_param(name: str) -> bool:
    """True for query parameters (and form/JSON fields) named like a secret:
    ``key``, ``api_key``, ``apiKey``, ``access_token``, ``client_secret``,
    ``password``, ``X-Amz-Signature``, ``sig``, ``session_id``..."""
    words = _words(name)
    joined = "".join(words)
    return bool(words) and (joined in _SECRET_WORDS or any(w in _SECRET_WORDS for w in words))


def is_secret_header(name: str) -> bool:
    """True for Authorization, Proxy-Authorization, Cookie, Set-Cookie and API-key-like
    headers (``X-API-Key``, ``X-Auth-Token``, ``Api-Secret``...)."""
    return name.strip().lower() in _SECRET_HEADERS or is_secret_param(name)


def _is_tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered in _TRACKING_EXACT or lowered.startswith(_TRACKING_PREFIXES)


_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")


def _normalize_escapes(text: str) -> str:
    """Decode escapes of unreserved characters, uppercase the others (RFC 3986 §6.2.2)."""
    def fix(match: re.Match[str]) -> str:
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


def _param_name(escaped: str) -> str:
    return unquote_to_bytes(escaped.replace("+", " ")).decode("utf-8", "replace")


def _url_parts(url: str | httpx.URL, *, normalize: bool) -> str:
    parsed = parse_http_url(url) if isinstance(url, str) else url
    scheme = parsed.scheme
    host = parsed.raw_host.decode("ascii").lower().rstrip(".")
    host = f"[{host}]" if ":" in host else host
    port = parsed.port
    default = {"http": 80, "https": 443}[scheme]
    netloc = host if port in (None, default) else f"{host}:{port}"
    if parsed.userinfo:
        netloc = f"{REDACTED}@{netloc}"
    raw_path, _, raw_query = parsed.raw_path.decode("ascii").partition("?")
    pairs = _query_pairs(raw_query)
    kept = []
    for name, value in pairs:
        plain = _param_name(name)
        if normalize and _is_tracking(plain):
            continue
        if value is not None and is_secret_param(plain):
            value = REDACTED
        kept.append(name if value is None else f"{name}={value}")
    path = raw_path or "/"
    query = "&".join(kept)
    if normalize:
        path, query = _normalize_escapes(path), _normalize_escapes(query)
    return f"{scheme}://{netloc}{path}" + (f"?{query}" if query or (raw_query and not normalize)
                                           else "")


def normalize_url(url: str | httpx.URL) -> str:
    """The canonical identity of a web URL (secrets redacted); InvalidURL if it is none."""
    return _url_parts(url, normalize=True)


def redact_url(url: str | httpx.URL) -> str:
    """The URL with user-info and secret query values replaced by ``REDACTED``, the
    fragment dropped, and otherwise as given (for messages and redirect chains)."""
    return _url_parts(url, normalize=False)


def secret_values(url: str | httpx.URL, headers: Iterable[tuple[str, str | None]] = (),
                  body: bytes | None = None, content_type: str = "") -> list[str]:
    """Every secret a request carries (to scrub from what is stored), longest first."""
    parsed = parse_http_url(url) if isinstance(url, str) else url
    found: list[str] = []
    if parsed.userinfo:
        found.extend([parsed.userinfo.decode("ascii", "replace"), parsed.password or ""])
    for param, param_value in parse_qsl(parsed.query.decode("ascii", "replace"),
                                        keep_blank_values=False):
        if is_secret_param(param):
            found.append(param_value)
    for name, value in headers:
        if value and is_secret_header(name):
            found.append(value)
            scheme, _, credentials = value.partition(" ")
            if credentials and scheme.lower() in ("basic", "bearer", "token", "digest"):
                found.append(credentials.strip())
            if name.lower() == "cookie":
                found.extend(v for _, _, v in (c.partition("=") for c in value.split(";")))
    if body:
        found.extend(_body_secrets(body, content_type))
    unique = {v.strip() for v in found if v and len(v.strip()) >= 6}
    return sorted(unique, key=len, reverse=True)


def _body_secrets(body: bytes, content_type: str) -> list[str]:
    data = _json_body(body, content_type)
    if data is not None:
        return [str(v) for k, v in _json_items(data) if is_secret_param(k)
                and isinstance(v, (str, int))]
    if _is_form(content_type):
        text = body.decode("utf-8", "replace")
        return [v for k, v in parse_qsl(text, keep_blank_values=False) if is_secret_param(k)]
    return []


def _json_body(body: bytes, content_type: str) -> object | None:
    if "json" not in content_type.lower():
        return None
    try:
        data: object = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    return data


def _json_items(data: object) -> Iterable[tuple[str, object]]:
    if isinstance(data, dict):
        for key, value in data.items():
            yield str(key), value
            yield from _json_items(value)
    elif isinstance(data, list):
        for item in data:
            yield from _json_items(item)


def _json_redacted(data: object) -> object:
    if isinstance(data, dict):
        return {k: REDACTED if is_secret_param(str(k)) and not isinstance(v, (dict, list))
                else _json_redacted(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_json_redacted(item) for item in data]
    return data


def _is_form(content_type: str) -> bool:
    return content_type.lower().split(";")[0].strip() == "application/x-www-form-urlencoded"


def redact_body(body: bytes, content_type: str) -> bytes:
    """The body with secret fields of a form or JSON body replaced by ``REDACTED``."""
    data = _json_body(body, content_type)
    if data is not None:
        return json.dumps(_json_redacted(data), sort_keys=True, ensure_ascii=False).encode()
    if _is_form(content_type):
        pairs = parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
        return urlencode([(k, REDACTED if is_secret_param(k) else v) for k, v in pairs],
                         quote_via=quote).encode()
    return body


def http_locator(method: str, url: str | httpx.URL, body: bytes | None = None,
                 content_type: str = "") -> str:
    """Identity of a request other than a plain GET: ``POST https://host/path`` plus
    ``body:sha256=...`` of the (secret-redacted) body when there is one."""
    locator = f"{method.upper()} {normalize_url(url)}"
    if body:
        digest = hashlib.sha256(redact_body(body, content_type)).hexdigest()
        locator += f" body:sha256={digest}"
    return locator
