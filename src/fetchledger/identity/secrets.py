"""Every secret-redaction rule of fetchledger (DESIGN §8), in one place.

Secrets are sent but never stored or shown: ``Authorization``, ``Cookie``,
``Proxy-Authorization`` and API-key headers, URL user-info, and query
parameters, form and JSON fields, options and variables named like a
key/token/secret/password/signature. Where one was, a ``REDACTED`` mark stays.

- names: :func:`is_secret_param` (query, form and JSON field names),
  :func:`is_secret_header`, :func:`is_secret_name` (command options and
  variables, judged by whole segments so ``--author`` stays);
- requests: :func:`request_secrets` (every secret value a request carries),
  :func:`redact_body`; URLs in messages: :func:`shown_url`;
- command lines: :func:`redact_argument`, :func:`redact_argv`,
  :func:`redact_command_text`, :func:`command_secrets`;
- what was fetched: :func:`scrub` (text) and :func:`scrub_secrets` (a whole
  Document, page offsets kept), for responses that echo a secret back.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, quote, unquote_to_bytes, urlencode, urlsplit, urlunsplit

if TYPE_CHECKING:
    import httpx

    from ..document import Document, Page

__all__ = [
    "REDACTED",
    "command_secrets",
    "is_secret_header",
    "is_secret_name",
    "is_secret_param",
    "param_name",
    "redact_argument",
    "redact_argv",
    "redact_body",
    "redact_command_text",
    "request_secrets",
    "scrub",
    "scrub_secrets",
    "shown_url",
]

REDACTED = "REDACTED"


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


def request_secrets(url: str | httpx.URL, headers: Iterable[tuple[str, str | None]] = (),
                  body: bytes | None = None, content_type: str = "") -> list[str]:
    """Every secret a request carries (to scrub from what is stored), longest first."""
    if isinstance(url, str):
        import httpx

        url = httpx.URL(url)
    parsed = url
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



# --- URLs in messages ---------------------------------------------------------------

_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")

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
    text = _CONTROL_CHARS.sub(lambda m: f"\\x{ord(m.group()):02x}", text[:500])
    head, sep, query = text.split("#", 1)[0].partition("?")
    head = _SHOWN_USERINFO.sub(rf"\1{REDACTED}@", head)
    if sep:
        parts = []
        for part in query.split("&"):
            name, eq, _ = part.partition("=")
            secret = eq and is_secret_param(param_name(name))
            parts.append(f"{name}={REDACTED}" if secret else part)
        head += "?" + "&".join(parts)
    return head


def param_name(escaped: str) -> str:
    """A query parameter name as written (``api%5Fkey``, ``a+b``), decoded."""
    return unquote_to_bytes(escaped.replace("+", " ")).decode("utf-8", "replace")



# --- command lines ------------------------------------------------------------------

# Option and variable names whose value is a secret: `--token=…`, `--api-key …`,
# `GITHUB_TOKEN=…`, `-H "Authorization: …"`. Whole name segments only, so
# `--author` or `--keyword` are left alone; short options (`-p…`) are not
# guessed at.
_SECRET_SEGMENTS = frozenset({
    "token", "secret", "password", "passwd", "passphrase", "apikey", "credential",
    "credentials", "cookie", "auth", "authorization", "bearer",
})


_SECRET_PAIRS = ("api-key", "access-key", "private-key", "secret-key", "client-secret",
                 "session-key", "x-api-key")


_HEADER = re.compile(r"^(-H\s*)?([A-Za-z0-9][A-Za-z0-9_-]*)\s*:\s*(\S.*)$", re.DOTALL)


_URL = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"]+")


_USER_OPTIONS = frozenset({"-u", "--user", "--proxy-user"})


def is_secret_name(name: str) -> bool:
    """True for names like ``--api-token``, ``DB_PASSWORD``, ``X-Api-Key``, ``Cookie``."""
    normalized = name.lstrip("-").lower().replace("_", "-")
    if not normalized:
        return False
    if any(pair in normalized for pair in _SECRET_PAIRS):
        return True
    return any(segment in _SECRET_SEGMENTS for segment in normalized.split("-"))


def _redact_url(url: str, secrets: list[str]) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        secrets.append(userinfo)
        secrets.append(userinfo.partition(":")[2])
        netloc = f"{REDACTED}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(is_secret_param(k) for k, _ in pairs):
            secrets.extend(v for k, v in pairs if is_secret_param(k))
            query = "&".join(
                f"{quote(k, safe='')}={REDACTED if is_secret_param(k) else quote(v, safe='')}"
                for k, v in pairs)
    if (netloc, query) == (parts.netloc, parts.query):
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def redact_argument(
    argument: str, previous: str | None = None, secrets: list[str] | None = None
) -> str:
    """One argument of a command line with any secret in it replaced by ``REDACTED``.

    Rules (simple on purpose, documented in the README): the value after
    ``--NAME=`` or ``NAME=`` (and the argument after a ``--NAME`` option)
    when NAME is secret-like; the value of a header whose name is secret-like
    (``Authorization: ...``, also as ``-HAuthorization: ...``); the password of
    ``-u/--user USER:PASSWORD``; URL user-info and secret-like query values.
    The secret values removed are appended to ``secrets`` when it is given.
    """
    found = secrets if secrets is not None else []
    if previous is not None and previous.startswith("--") and "=" not in previous \
            and is_secret_name(previous) and not argument.startswith("-"):
        found.append(argument)
        return REDACTED
    if previous in _USER_OPTIONS and ":" in argument:
        user, _, password = argument.partition(":")
        found.append(password)
        return f"{user}:{REDACTED}"
    header = _HEADER.match(argument)
    if header and is_secret_name(header.group(2)) and "://" not in argument:
        value = header.group(3).strip()
        found.append(value)
        found.append(value.rsplit(" ", 1)[-1])  # the token of "Bearer TOKEN"
        return f"{header.group(1) or ''}{header.group(2)}: {REDACTED}"
    name, equals, value = argument.partition("=")
    if equals and value and re.fullmatch(r"-{0,2}[A-Za-z_][A-Za-z0-9_.-]*", name) \
            and is_secret_name(name):
        found.append(value)
        return f"{name}={REDACTED}"
    return _URL.sub(lambda m: _redact_url(m.group(0), found), argument)


def redact_argv(argv: Sequence[str], secrets: list[str] | None = None) -> list[str]:
    """``argv`` with secrets replaced by ``REDACTED`` (see :func:`redact_argument`);
    a secret found in one argument is also scrubbed from all the others."""
    found = secrets if secrets is not None else []
    redacted = [redact_argument(arg, argv[i - 1] if i else None, found)
                for i, arg in enumerate(argv)]
    scrubbable = _scrubbable(found)
    return [scrub(arg, scrubbable) for arg in redacted] if scrubbable else redacted


def _scrubbable(values: Sequence[str]) -> list[str]:
    return sorted({v for v in values if len(v) >= 4}, key=len, reverse=True)


def command_secrets(argv: Sequence[str], *, shell: bool = False) -> list[str]:
    """The secret values the redaction of ``argv`` removes, longest first (values
    under 4 characters are left out: too short to scrub from output safely)."""
    found: list[str] = []
    if shell:
        redact_command_text(" ".join(argv), found)
    else:
        redact_argv(argv, found)
    return _scrubbable(found)


def scrub(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every occurrence of each secret replaced by ``REDACTED``."""
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return text


def redact_command_text(text: str, secrets: list[str] | None = None) -> str:
    """A shell command line (or a label) with its secrets redacted, its form kept."""
    try:
        tokens = shlex.split(text)
    except ValueError:
        tokens = text.split()
    found = secrets if secrets is not None else []
    redacted = redact_argv(tokens, found)
    for token, clean in zip(tokens, redacted, strict=True):
        if token != clean:
            if token not in text:  # quoting changed its spelling: rebuild the line
                return shlex.join(redacted)
            text = text.replace(token, clean)
    return scrub(text, _scrubbable(found))



# --- what was fetched --------------------------------------------------------------

def scrub_secrets(document: Document, secrets: Sequence[str]) -> Document:
    """Replace every secret the request carried by ``REDACTED`` wherever the response
    echoed it (text, raw bytes, metadata), keeping page offsets right."""
    present = [s for s in secrets if s and (s in document.text or s.encode() in document.raw
                                            or s in repr(document.meta)
                                            or any(s in (v or "") for v in (
                                                document.title, document.site,
                                                document.author)))]
    if not present:
        return document
    pattern = re.compile("|".join(re.escape(s) for s in present))
    text, pages = _redact_text(document.text, pattern, document.pages)
    raw = re.compile(b"|".join(re.escape(s.encode()) for s in present)).sub(
        REDACTED.encode(), document.raw)

    def clean(value: str | None) -> str | None:
        return pattern.sub(REDACTED, value) if value else value

    meta = json.loads(pattern.sub(REDACTED, json.dumps(document.meta)))
    return replace(document, text=text, raw=raw, pages=pages, title=clean(document.title),
                   site=clean(document.site), author=clean(document.author), meta=meta,
                   warnings=(*document.warnings,
                             "the response echoed a secret of the request; it was redacted"))


def _redact_text(text: str, pattern: re.Pattern[str], pages: tuple[Page, ...]
                 ) -> tuple[str, tuple[Page, ...]]:
    parts: list[str] = []
    shifts: list[tuple[int, int]] = []  # (end of a replaced span in the old text, total shift)
    last = shift = 0
    for match in pattern.finditer(text):
        parts.extend((text[last : match.start()], REDACTED))
        last = match.end()
        shift += len(REDACTED) - (match.end() - match.start())
        shifts.append((match.end(), shift))
    parts.append(text[last:])

    def moved(offset: int) -> int:
        delta = 0
        for end, total in shifts:
            if end > offset:
                break
            delta = total
        return offset + delta

    return "".join(parts), tuple(replace(p, start=moved(p.start), end=moved(p.end))
                                 for p in pages)

