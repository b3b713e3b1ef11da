"""Every secret-redaction rule of fetchledger (DESIGN §8), in one place.

Secrets are sent but never stored or shown: ``Authorization``, ``Cookie``,
``Proxy-Authorization`` and API-key headers, URL user-info, and query
parameters, form and JSON fields, options and variables named like a
key/token/secret/password/signature. Where one was, a ``REDACTED`` mark stays.

- names: :func:`is_secret_name` — one rule for query parameters, form and
  JSON fields, headers, command options and variables;
- requests: :func:`request_secrets` (every secret value a request carries, in
  every form it was sent), :func:`redact_body`, :func:`basic_credentials`;
  URLs in messages: :func:`shown_url`;
- URLs: :func:`redact_query` (also form bodies, fragments, cookie strings) and
  :func:`redact_path_params` (``;jsessionid=``); headers as a WARC stores them:
  :func:`redact_header`; command lines (argv words,
  ``sh -c`` scripts) in :mod:`fetchledger.identity.command_secrets`, by the same
  name rule;
- credentials known by their shape, not their name (webhook URLs, GitHub, Slack,
  AWS... token formats): :mod:`fetchledger.identity.shapes`, applied wherever a
  value is kept (query values, path segments, headers, bodies, argv words);
- identity: :func:`keyed_mark`, the mark a redacted query or argv value leaves
  in a source's identity (an HMAC of the value under the ledger's key, so two
  different values stay two sources while both display as ``REDACTED``);
- what was fetched: :func:`scrub`, :func:`scrub_bytes` and
  :func:`.echoed.scrub_secrets` (a whole Document, page offsets kept), for
  responses and command output that echo a secret back.

Every rule runs in time linear in its input.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, quote, quote_plus, unquote, unquote_to_bytes, urlencode

from .callbacks import (
    LINK_WORDS,
    is_callback_name,
    oauth_companions,
    plain_name,
    secret_value,
    token_like,
)
from .finder import finder as cached_finder
from .shapes import has_hint, may_hold_shapes, redact_shapes, shape_secrets

if TYPE_CHECKING:
    import httpx


__all__ = [
    "REDACTED",
    "Mark",
    "basic_credentials",
    "is_callback_name",
    "is_secret_name",
    "keyed_mark",
    "oauth_companions",
    "ordered_secrets",
    "param_name",
    "plain_mark",
    "redact_body",
    "redact_header",
    "redact_nested",
    "redact_path_params",
    "redact_query",
    "request_secrets",
    "scrub",
    "scrub_bytes",
    "secret_forms",
    "secret_value",
    "shown_database_url",
    "shown_url",
    "spelled_forms",
    "token_like",
]

REDACTED = "REDACTED"

Mark = Callable[[str], str]  # what a secret value becomes: REDACTED, or its keyed mark


def plain_mark(value: str) -> str:
    return REDACTED


# --- names ---------------------------------------------------------------------------
#
# A name is secret when, lowercased and with every character that is not a letter
# or digit dropped (so `access_token`, `access.token`, `AccessToken` and
# `accesstoken` are one name), it contains one of the secret words. Words that
# merely contain one (`keyword`, `author`, `design`) are taken out first: that
# allowlist is short on purpose, and a name that still holds a secret word after
# it (`author_token`) stays secret.

_SECRET_WORDS = re.compile(
    "key|token|secret|passw|pwd|passphrase|passcode|signature|sig|auth|credential|session"
    "|sessid|cookie|bearer|jwt|csrf|xsrf|hmac|assertion|samlresponse|samlrequest|mnemonic"
    # the same words in German, French, Spanish, Portuguese
    "|kennwort|motdepasse|contrasena|contraseña|senha")
# Short words that are secret only as the whole name or its end (`dbpass`,
# `connect.sid`, `_gh_sess`), not inside others (`passenger`, `footprint`, `inside`).
_SECRET_ENDINGS = ("pass", "otp", "pw", "sid", "sess", "cred", "creds")
_NOT_SECRET = re.compile(
    "keyword|keyboard|keynote|monkey|donkey|hockey|jockey|turkey|whiskey"
    "|author(?!i[sz])|design|signal|assign|signup|signin|sigma|sight|tokeniz|secretar"
    "|bypass|compass"
    # settings that name how to authenticate, not with what: --auth-type=legacy,
    # token_endpoint=https://..., auth_url=...
    "|(?:auth|token)(?:type|method|mode|scheme|url|uri|endpoint|provider)")
_NOT_NAME = re.compile(r"[\W_]+")  # what is not a letter or digit, in any script


@lru_cache(maxsize=16384)  # a long command line may hold thousands of distinct names
def is_secret_name(name: str) -> bool:
    """True for a query parameter, form or JSON field, header, command option or
    variable named like a secret: ``api_key``, ``apiKey``, ``accesstoken``,
    ``X-Amz-Signature``, ``Authentication``, ``--client-secret``, ``DB_PASSWORD``,
    ``Cookie``, ``session_id``... but not ``keyword``, ``--author`` or ``design``."""
    # NFKC first: fullwidth and other compatibility letters (`ＡＰＩ＿ＫＥＹ`) are ASCII then
    plain = name if name.isascii() else unicodedata.normalize("NFKC", name)
    lowered = plain.lower()
    if not (lowered.isascii() and lowered.isalnum()):
        lowered = _NOT_NAME.sub("", lowered)
    # (every word of the allowlist holds a secret word or `pass`: a name holding neither
    # has none to take out — most names, and thousands of distinct values after options)
    if "pass" not in lowered and not _SECRET_WORDS.search(lowered):
        return lowered.endswith(_SECRET_ENDINGS)
    squeezed = _NOT_SECRET.sub("", lowered)
    return (bool(_SECRET_WORDS.search(squeezed)) or squeezed.endswith(_SECRET_ENDINGS)) \
        and _PLACE.search(plain, max(0, len(plain) - 5)) is None


# A secret's name ending in a word for where the secret is kept names that place, not
# the secret: --password-file PATH, --token-path, --passphrase-fd N, PGPASSFILE=PATH
_PLACE = re.compile(r"(?i)(?:(?:[\W_]|(?<=pass)|(?<=key)|(?<=token)|(?<=word)|(?<=secret)"
                    r"|(?<=phrase)|(?<=wd))(?:file|path|fd|dir)|(?<=key)[\W_]?(?:store|ring))\Z")


def param_name(escaped: str) -> str:
    """A query parameter name as written (``api%5Fkey``, ``a+b``), decoded."""
    return unquote_to_bytes(escaped.replace("+", " ")).decode("utf-8", "replace")


# --- values secret by their name and their shape (the rule: .callbacks) ---------------

# A path segment after which a token-like segment is a credential: a secret-like name
# (`/token/V`, `/reset-password/V`, `/session/V`) or a single-use link's word
# (:data:`.callbacks.LINK_WORDS`: `/verify/V`, `/invite/V`)


def _link_word(segment: str) -> bool:
    plain = plain_name(unquote(segment))
    return bool(plain) and (LINK_WORDS.search(plain) is not None or is_secret_name(plain))


# --- identity ------------------------------------------------------------------------


_MARK = re.compile(rf"{REDACTED}(?:~[0-9a-f]{{32}})?")


@lru_cache(maxsize=8)
def keyed_mark(key: bytes) -> Mark:
    """The mark a redacted value leaves in an identity: ``REDACTED~`` and 32 hex digits
    of its HMAC-SHA256 under ``key`` (the ledger's own random key). Two values give two
    marks; the mark reveals nothing of the value without the key. A value that already
    is a mark stays as it is, so an identity marked again is unchanged (and a locator
    written before keyed marks, holding ``REDACTED``, keeps it)."""
    # HMAC (RFC 2104) from its two padded keys hashed once: thousands of values in one
    # command line cost a copy and an update each, not a new HMAC object.
    block = (hashlib.sha256(key).digest() if len(key) > 64 else key).ljust(64, b"\0")
    inner = hashlib.sha256(bytes(byte ^ 0x36 for byte in block))
    outer = hashlib.sha256(bytes(byte ^ 0x5C for byte in block))

    @lru_cache(maxsize=4096)  # a value repeated in a long command is hashed once
    def mark(value: str) -> str:
        if value.startswith(REDACTED) and _MARK.fullmatch(value):
            return value
        first = inner.copy()
        first.update(value.encode("utf-8", "surrogatepass"))
        second = outer.copy()
        second.update(first.digest())
        return f"{REDACTED}~{second.hexdigest()[:32]}"

    def many(values: Iterable[str]) -> list[str]:
        """The marks of ``values``, in one loop (thousands of distinct values in one
        command line: no call and cache look-up per value; encoded at once when they
        hold no NUL, looked at as marks only when one holds ``REDACTED``)."""
        values = list(values)
        joined = "\0".join(values)
        encoded = joined.encode("utf-8", "surrogatepass").split(b"\0") \
            if joined.count("\0") == len(values) - 1 \
            else [value.encode("utf-8", "surrogatepass") for value in values]
        digests: list[str] = []
        add = digests.append
        inner_copy, outer_copy = inner.copy, outer.copy
        for data in encoded:
            first = inner_copy()
            first.update(data)
            second = outer_copy()
            second.update(first.digest())
            add(second.hexdigest()[:32])
        marks = [f"{REDACTED}~{digest}" for digest in digests]
        if REDACTED in joined:  # a value that is a mark stays as it is
            for i, value in enumerate(values):
                if value.startswith(REDACTED) and _MARK.fullmatch(value):
                    marks[i] = value
        return marks

    mark.many = many  # type: ignore[attr-defined]
    return mark


# --- requests ------------------------------------------------------------------------


def basic_credentials(userinfo: bytes | str) -> str:
    """The ``Authorization`` value a URL's user-info is sent as: ``Basic`` and the
    base64 of ``user:password``, each percent-decoded."""
    text = userinfo.decode("ascii", "replace") if isinstance(userinfo, bytes) else userinfo
    user, _, password = text.partition(":")
    pair = f"{unquote(user)}:{unquote(password)}".encode()
    return "Basic " + base64.b64encode(pair).decode("ascii")


def request_secrets(url: str | httpx.URL, headers: Iterable[tuple[str, str | None]] = (),
                    body: bytes | None = None, content_type: str = "") -> list[str]:
    """Every secret a request carries, in every form it was sent (plain,
    percent-encoded, JSON-escaped, the Basic base64 of user-info), longest first:
    what to scrub from a response that echoes them."""
    if isinstance(url, str):
        import httpx

        url = httpx.URL(url)
    found: list[str] = []
    if url.userinfo:
        userinfo = url.userinfo.decode("ascii", "replace")
        password = userinfo.partition(":")[2]
        found.extend((userinfo, unquote(userinfo), password, unquote(password)))
        found.extend(_base64_forms(basic_credentials(userinfo).removeprefix("Basic ")))
    redact_query(url.query.decode("ascii", "replace"), found, plain_mark)
    redact_path_params(url.raw_path.partition(b"?")[0].decode("ascii", "replace"), found,
                       plain_mark)
    found.extend(shape_secrets(str(url)))  # a webhook's path, a token anywhere in it
    for name, value in headers:
        if value and is_secret_name(name):
            found.extend(_header_secrets(name, value))
        elif value:  # a URL or query in another header (Referer: https://h/?token=V)
            redact_header(name, value, found)
    if body:
        found.extend(_body_secrets(body, content_type))
    found.extend(form for value in {v.strip() for v in found} if len(value) >= 8  # echoed
                 for form in _base64_forms(base64.b64encode(value.encode()).decode()))  # in base64
    return secret_forms(found)


def _header_secrets(name: str, value: str) -> list[str]:
    found = [value]
    scheme, _, credentials = value.strip().partition(" ")
    credentials = credentials.strip()
    if credentials and scheme.lower() in ("basic", "bearer", "token", "digest"):
        found.extend(_base64_forms(credentials) if scheme.lower() == "basic" else [credentials])
        if scheme.lower() == "basic":
            try:
                pair = base64.b64decode(credentials, validate=True).decode("utf-8")
            except ValueError:
                pair = ""
            found.extend((pair, pair.partition(":")[2]))
    if name.lower() == "cookie":  # each cookie's value; short ones only under a secret name
        for cookie_name, _, cookie in (c.strip().partition("=") for c in value.split(";")):
            if len(cookie.strip()) >= 6 or is_secret_name(cookie_name):
                found.append(cookie)
    return found


def _body_secrets(body: bytes, content_type: str) -> list[str]:
    data = _json_body(body, content_type)
    found: list[str] = []
    if data is not None:
        for k, v in _json_items(data):
            if is_secret_name(k) and isinstance(v, (str, int)):
                found.append(str(v))
            elif isinstance(v, str):
                redact_nested(v, found, plain_mark)  # a URL or query in a string
    elif _is_form(content_type):
        redact_query(body.decode("utf-8", "replace"), found, plain_mark)
    else:  # a body of another type: the tokens and webhook URLs in it
        found.extend(shape_secrets(body.decode("utf-8", "replace")))
    return found


# Values that carry no secret however they are named (`auth=1`, `session=true`, a
# lone `/`): scrubbing them from a page would destroy its figures and words, and
# hide nothing. They are still redacted wherever their name is seen.
_TRIVIAL = frozenset({"true", "false", "yes", "no", "on", "off", "null", "none", REDACTED.lower()})


def _trivial(value: str) -> bool:
    if len(value) > 8:  # the longest trivial value is REDACTED
        return False
    return (value.lower() in _TRIVIAL or (value.isdigit() and len(value) <= 2)
            or (len(value) < 4 and not any(c.isalnum() for c in value)))


def secret_forms(values: Iterable[str]) -> list[str]:
    """The values (stripped, trivial ones left out) and the other spellings a request
    or a page may give them — percent-encoded, form-encoded, JSON-escaped — longest
    first."""
    # two sorts with C-level keys: by spelling, then (stable) by length, longest first
    return sorted(sorted(spelled_forms(values)), key=len, reverse=True)


_SPELLED_ALIKE = re.compile(r"[A-Za-z0-9_.~-]*")  # no encoding changes these


_SPELLED_WITH_SPACES = re.compile(r"[A-Za-z0-9_.~ -]*")  # ...but for a space


@lru_cache(maxsize=4096)
def _spellings(value: str) -> tuple[str, ...]:
    if (value.isascii() and value.isalnum()) or _SPELLED_ALIKE.fullmatch(value):
        return (value,)
    if _SPELLED_WITH_SPACES.fullmatch(value):  # `Bearer V`: the forms below, at once
        return (value, value.replace(" ", "%20"), value.replace(" ", "+"))
    escaped = quote(value, safe="")
    lower_hex = re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), escaped)
    in_json = json.dumps(value)[1:-1]
    # also as PHP's json_encode writes it (`\/`) and as HTML escapes it (`&amp;`, `&#x27;`)
    return tuple({value, escaped, lower_hex, quote_plus(value, safe=""), in_json,
                  in_json.replace("/", "\\/"), html.escape(value, quote=False),
                  html.escape(value)})


def _json_body(body: bytes, content_type: str) -> object | None:
    if "json" not in content_type.lower():
        return None
    try:
        data: object = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
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
        return {k: REDACTED if is_secret_name(str(k)) and not isinstance(v, (dict, list))
                else _json_redacted(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_json_redacted(item) for item in data]
    if isinstance(data, str):
        return redact_nested(data, [], plain_mark)  # a URL or query in a string
    return data


def _is_form(content_type: str) -> bool:
    return content_type.lower().split(";")[0].strip() == "application/x-www-form-urlencoded"


def redact_body(body: bytes, content_type: str) -> bytes:
    """The body with secret fields of a form or JSON body replaced by ``REDACTED`` (they
    are credentials: requests differing only in them are one source)."""
    data = _json_body(body, content_type)
    if data is not None:
        return json.dumps(_json_redacted(data), sort_keys=True, ensure_ascii=False).encode()
    if _is_form(content_type):
        text = redact_shapes(body.decode("utf-8", "replace"), [], plain_mark)  # (any part)
        pairs = parse_qsl(text, keep_blank_values=True)
        return urlencode([(k, REDACTED if is_secret_name(k) else redact_nested(v, [], plain_mark))
                          for k, v in pairs], quote_via=quote).encode()
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
    head = redact_path_params(_SHOWN_USERINFO.sub(rf"\1{REDACTED}@", head), [], plain_mark)
    if sep:
        head += "?" + redact_query(query, [], plain_mark)
    return redact_shapes(head, [], plain_mark)


def shown_database_url(url: str) -> str:
    """A database URL (``postgresql://user:password@host/db?...``) as it may be printed:
    the password dropped from the user-info, secret parameters (``password=``)
    redacted; the user, hosts, database and other parameters kept."""
    text = _CONTROL_CHARS.sub(lambda m: f"\\x{ord(m.group()):02x}", url[:500])
    scheme, sep, rest = text.partition("://")
    if not sep:
        return _shown(text)
    cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    userinfo, at, hosts = rest[:cut].rpartition("@")
    user = userinfo.split(":", 1)[0]
    head, mark, query = rest[cut:].partition("?")
    shown = f"{scheme}://{user}@{hosts}" if at and user else f"{scheme}://{hosts}"
    return shown + head + (mark + redact_query(query, [], plain_mark) if mark else "")


def redact_query(query: str, found: list[str], mark: Mark, separator: str = "&") -> str:
    """A raw query (or form body, fragment, cookie string: pairs split at
    ``separator``) with each secret parameter's value replaced by its mark, and the
    secrets of a URL or query nested in another value (:func:`redact_nested`) too, the
    rest exactly as written; the values removed are appended to ``found``. Tokens and
    webhook URLs (:mod:`.shapes`) are marked in every part."""
    parts = []
    hinted = may_hold_shapes(query)  # (one pass; most queries hold no token at all)
    split = query.split(separator)
    companions = _has_companions(split)
    for part in split:
        name, eq, value = part.partition("=")
        named = param_name(name) if eq and value else ""
        if named and (is_secret_name(named) or (is_callback_name(named) and secret_value(
                named, unquote(value.replace("+", " ")), companions))):
            plain = unquote(value.replace("+", " "))
            found.append(plain)
            parts.append(f"{name}={mark(plain)}")
        elif eq and value:
            pair = f"{name}={redact_nested(value, found, mark)}"
            # a token in the name, or across its `=` (base64 tokens hold `=`), too
            parts.append(redact_shapes(pair, found, mark) if hinted and has_hint(name)
                         else pair)
        else:  # a bare word (`?ghp_...`): a token in it
            parts.append(redact_shapes(part, found, mark) if hinted else part)
    return separator.join(parts)


def _has_companions(parts: Sequence[str]) -> bool:
    """:func:`oauth_companions` of a query's raw parts, asked only when a callback name
    is among them."""
    pairs = [(param_name(name), value) for name, eq, value
             in (part.partition("=") for part in parts) if eq]
    return any(is_callback_name(name) for name, _ in pairs) and oauth_companions(pairs)


# --- values nested in values -----------------------------------------------------------
#
# A URL or a query inside a parameter's value (``next=https%3A%2F%2Fh%2Fp%3Ftoken%3DV``,
# OAuth's ``redirect_uri=``, a JSON string), percent-encoded any number of times or not
# at all. Its separators are found at every level of encoding — ``?`` is also ``%3F``,
# ``%253F``, ... — the level being how many times it was encoded (``?`` 0, ``%3F`` 1,
# ``%253F`` 2). A secret value runs to the next separator of its own level or an outer
# one: a deeper-encoded ``&`` is part of it. Each pattern starts only at ``?&;#``,
# ``=``, ``:`` or ``%``, and each scan stops at the next separator: linear.

# (blanks, quotes and angle brackets end a value too: a URL inside a header or text)
_NESTED_SEP = re.compile(r"[?&;#\s<>\"']|%(?:25)*(?:3[fFbB]|26|23)")
_NESTED_EQ = re.compile(r"=|%(?:25)*3[dD]")
# `://` (in any encoding), then user-info up to `@`, never past a `/ ? #` of any level.
_NESTED_USERINFO = re.compile(
    r"(?:://|%(?:25)*3[aA]%(?:25)*2[fF]%(?:25)*2[fF])"
    r"((?:(?!%(?:25)*(?:2[fF]|3[fF]|23|40))[^/?#@\s])+)(?:@|%(?:25)*40)")
_NESTED_COLON = re.compile(r":|%(?:25)*3[aA]")
_MAY_NEST = re.compile(r"[=@:]|%(?:25)*(?:3[dD]|40|3[aA])")
# A JSON string under a key, in a value at any level of encoding: "KEY":"V", %22KEY%22%3A%22V%22
_NESTED_JSON = re.compile(
    r"(?:\"|%(?:25)*22)([^\W\d][\w.-]*)(?:\"|%(?:25)*22)"
    r"((?:\s|\+|%(?:25)*20)*(?::|%(?:25)*3[aA])(?:\s|\+|%(?:25)*20)*(?:\"|%(?:25)*22))"
    r"((?:(?!\"|%(?:25)*22)[^\\])+)(?=\"|%(?:25)*22)")


def _level(separator: str) -> int:
    return 0 if len(separator) == 1 else 1 + separator.count("25", 1, len(separator) - 2)


def _decoded(raw: str, times: int) -> str:
    """``raw`` percent-decoded ``times`` times (``+`` as a space the first time)."""
    text = raw.replace("+", " ") if times else raw
    for _ in range(times):
        if "%" not in text:
            break
        text = unquote(text)
    return text


def redact_nested(text: str, found: list[str], mark: Mark) -> str:
    """A parameter's raw value with the secrets of any URL or query inside it replaced by
    their marks: secret-named pairs (``token%3DV``, ``token%253DV``, ``token=V``) and
    user-info (``https%3A%2F%2Fuser%3Apw%40host``); the rest exactly as written. The
    values removed (decoded, and as written when that differs) are appended to
    ``found``. Tokens and capability URLs (:mod:`.shapes`) in it are marked too."""
    text = redact_shapes(text, found, mark)
    if not _MAY_NEST.search(text):
        return text
    if "@" in text or "%" in text:
        text = _NESTED_USERINFO.sub(lambda m: _nested_userinfo(m, found, mark), text)
    if '"' in text or "%" in text:  # JSON in a value: filter={"api_key":"V"}, encoded
        text = _NESTED_JSON.sub(lambda m: _nested_json(m, found, mark), text)
    eqs = list(_NESTED_EQ.finditer(text))
    if not eqs:
        return text
    seps = list(_NESTED_SEP.finditer(text))
    sep_starts = [m.start() for m in seps]
    levels = [_level(m.group()) for m in seps]
    pieces: list[str] = []
    last, seen, segment, count = 0, -1, 0, len(seps)
    for eq in eqs:  # the first `=` of each segment names its pair
        if eq.start() < last:
            continue  # inside a value already marked
        while segment < count and sep_starts[segment] < eq.start():
            segment += 1  # the separators before it (both only move forward)
        if segment == seen:
            continue
        seen = segment
        begin = seps[segment - 1].end() if segment else 0
        name = _decoded(text[begin:eq.start()], 4)
        named = is_secret_name(name)
        if not named and not is_callback_name(name):
            continue
        level, after = _level(eq.group()), segment
        while after < len(seps) and levels[after] > level:  # deeper: inside the value
            after += 1
        end = sep_starts[after] if after < len(seps) else len(text)
        raw = text[eq.end():end]
        if not raw or _MARK.fullmatch(raw):
            continue
        plain = _decoded(raw, level + 1)
        if not named and not secret_value(name, plain):
            continue
        found.extend((plain, raw) if raw != plain else (plain,))
        pieces.extend((text[last:eq.end()], mark(plain)))
        last = end
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _nested_json(match: re.Match[str], found: list[str], mark: Mark) -> str:
    name, _, raw = match.groups()
    if not is_secret_name(name) or _MARK.fullmatch(raw):
        return match.group()
    plain = _decoded(raw, 4)
    found.extend((plain, raw) if raw != plain else (plain,))
    return match.group()[:match.start(3) - match.start()] + mark(plain)


def _nested_userinfo(match: re.Match[str], found: list[str], mark: Mark) -> str:
    raw = match.group(1)
    if _MARK.fullmatch(raw):
        return match.group()
    plain = _decoded(raw, 4)
    found.append(plain)
    colon = _NESTED_COLON.search(raw)
    if colon and colon.end() < len(raw):
        found.append(_decoded(raw[colon.end():], 4))
    start, end = match.span(1)
    whole = match.group()
    offset = match.start()
    return whole[:start - offset] + mark(plain) + whole[end - offset:]


# `;name=value` inside a path segment (matrix or path parameters: `;jsessionid=...`).
_PATH_PARAM = re.compile(r";([^;/?#=]*)=([^;/?#]*)")


def redact_path_params(path: str, found: list[str], mark: Mark) -> str:
    """A raw path with each secret path parameter's value (``/a;jsessionid=V``) and
    each token-like segment after a secret-like or single-use link's word
    (``/token/V``, ``/reset-password/V``: :func:`token_like`) replaced by its mark; the
    values removed are appended to ``found``."""
    if _LINK_HINT(path):
        path = _redact_link_segments(path, found, mark)
    if ";" not in path:
        return path

    def one(match: re.Match[str]) -> str:
        name, value = match.groups()
        if not value or not is_secret_name(param_name(name)):
            return match.group()
        plain = unquote(value)
        found.append(plain)
        return f";{name}={mark(plain)}"

    return _PATH_PARAM.sub(one, path)


# A segment of 16 characters or more after another: what a link's token may be
_LINK_HINT = re.compile(r"(?:^|(?<=/))[^/?#;]+/[A-Za-z0-9._~+=%-]{16}").search


def _redact_link_segments(path: str, found: list[str], mark: Mark) -> str:
    segments = path.split("/")
    changed = False
    for i in range(1, len(segments)):
        segment = segments[i]
        if len(segment) < 16 or not (_link_word(segments[i - 1].partition(";")[0]) or (
                i > 1 and len(segments[i - 1]) <= 12  # Django's /reset/UIDB64/TOKEN/
                and LINK_WORDS.search(plain_name(segments[i - 2])) is not None)):
            continue
        value, semicolon, params = segment.partition(";")
        plain = unquote(value)
        if _MARK.fullmatch(plain) or not token_like(plain):
            continue
        found.append(plain)
        segments[i] = mark(plain) + semicolon + params
        changed = True
    return "/".join(segments) if changed else path


# A URL inside a header value (``Link: <https://...>; rel=next``).
_HEADER_URL = re.compile(r"(?<![a-zA-Z0-9+.-])[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]+")


def redact_header(name: str, value: str, found: list[str] | None = None) -> str:
    """A header as stored (WARC): REDACTED under a secret name (``Cookie``,
    ``Set-Cookie``, ``Authorization``, API keys), else the secrets of its URLs
    (absolute or relative: ``Link: </p?token=V>``, ``Refresh: 0; url=/cb?token=V``,
    fragments) redacted; the values removed are appended to ``found``."""
    if is_secret_name(name):
        return REDACTED
    found = found if found is not None else []
    if name.lower() in ("location", "content-location"):  # a URL, relative or not
        return _header_url(value, found)
    value = _HEADER_URL.sub(lambda m: _header_url(m.group(), found), value)
    return redact_nested(value, found, plain_mark)  # relative URLs, queries


def _base64_forms(encoded: str) -> list[str]:
    """A base64 value as sent, without its padding, and in the URL-safe alphabet."""
    bare = encoded.rstrip("=")
    return [encoded, bare, bare.replace("+", "-").replace("/", "_")]


def _header_url(url: str, found: list[str]) -> str:
    """One URL, absolute or relative: user-info, secret path parameters, secret query
    and fragment values redacted, the rest as written."""
    head, qmark, query = url.partition("?")
    scheme, slashes, rest = head.partition("://")
    if slashes:
        authority, slash, path = rest.partition("/")
        if "@" in authority:
            userinfo, _, host = authority.rpartition("@")
            found.extend((unquote(userinfo), unquote(userinfo.partition(":")[2])))
            authority = f"{REDACTED}@{host}"
        head = f"{scheme}{slashes}{authority}{slash}{redact_path_params(path, found, plain_mark)}"
    else:
        head = redact_path_params(head, found, plain_mark)
    if not qmark:
        head, hash_sign, fragment = head.partition("#")
        return redact_shapes(f"{head}{hash_sign}{redact_query(fragment, found, plain_mark)}",
                             found, plain_mark)
    query, hash_sign, fragment = query.partition("#")
    return redact_shapes(f"{head}?{redact_query(query, found, plain_mark)}{hash_sign}"
                         f"{redact_query(fragment, found, plain_mark)}", found, plain_mark)


# --- scrubbing what was fetched or printed ---------------------------------------------

def spelled_forms(values: Iterable[str]) -> dict[str, str]:
    """Each spelling of each value (plain, percent-encoded...) → the value it spells.
    (The same values are asked for more than once while one command is identified: the
    last few answers are kept; callers never change them.)"""
    return _spelled_forms(tuple(values))


@lru_cache(maxsize=4)
def _spelled_forms(values: tuple[str, ...]) -> dict[str, str]:
    forms: dict[str, str] = {}
    for value in sorted({v.strip() for v in values}):
        if value.isascii() and value.isalnum():  # most values: spelled one way
            if (len(value) > 2 or not value.isdigit()) and value.lower() not in _TRIVIAL:
                forms.setdefault(value, value)
        elif value and not _trivial(value):
            for form in _spellings(value):
                forms.setdefault(form, value)
    return forms


def ordered_secrets(secrets: Iterable[str]) -> tuple[str, ...]:
    """The secrets worth scrubbing (not empty, not a trivial word), sorted, once each."""
    return tuple(sorted({s for s in secrets if s and not _trivial(s.strip())}))


def scrub(text: str, secrets: Iterable[str], mark: Mark | None = None) -> str:
    """``text`` with every occurrence of each secret (in each of its spellings) replaced
    by ``mark`` of it, ``REDACTED`` by default; values under eight characters only
    where they stand as a whole word. Linear in the text and the secrets."""
    mark = mark or plain_mark
    forms = spelled_forms(secrets)
    if not forms or (len(forms) <= 8 and not any(form in text for form in forms)):
        return text  # (a few values found nowhere: no automaton to build)
    return cached_finder(tuple(forms)).sub(text, lambda found: mark(forms[found]),
                                           marks_of(mark, forms))


def marks_of(mark: Mark, forms: dict[str, str]) -> Callable[[list[str]], list[str]] | None:
    """The marks of the values of many of ``forms`` at once, when ``mark`` records them
    (:meth:`.recorder.Recorder.record_many`: no Python call per value), else None."""
    record = getattr(mark, "record_many", None)
    return None if record is None else lambda found: record(list(map(forms.__getitem__, found)))


def scrub_bytes(data: bytes, secrets: Sequence[str]) -> bytes:
    """:func:`scrub` for bytes (command output, raw responses): ``REDACTED``."""
    forms = ordered_secrets(secrets)
    if not forms:
        return data
    finder = cached_finder(tuple(f.encode("utf-8", "surrogateescape").decode("latin-1")
                           for f in forms), ascii_words=True)
    return finder.sub(data.decode("latin-1"), lambda _: REDACTED).encode("latin-1")
