"""Every secret-redaction rule of fetchledger (DESIGN §8), in one place.

Secrets are sent but never stored or shown: ``Authorization``, ``Cookie``,
``Proxy-Authorization`` and API-key headers, URL user-info, and query
parameters, form and JSON fields, options and variables named like a
key/token/secret/password/signature. Where one was, a ``REDACTED`` mark stays.

- names: :func:`is_secret_name` — one rule for query parameters, form and
  JSON fields, headers, command options and variables;
- requests: :func:`request_secrets` (every secret value a request carries, in
  every form it was sent), :func:`redact_body`, :func:`basic_credentials`,
  :func:`redact_header` (headers as stored in a WARC);
  URLs in messages: :func:`shown_url`;
- command lines: :func:`redact_argument`, :func:`redact_argv` (``sh -c``
  scripts redacted word by word), :func:`redact_command_text` (each collects the
  values it removed, for :func:`secret_forms`);
- identity: :func:`keyed_mark`, the mark a redacted query or argv value leaves
  in a source's identity (an HMAC of the value under the ledger's key, so two
  different values stay two sources while both display as ``REDACTED``);
- what was fetched: :func:`scrub`, :func:`scrub_bytes` and
  :func:`scrub_secrets` (a whole Document, page offsets kept), for responses
  and command output that echo a secret back.

Every rule runs in time linear in its input.
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import hmac
import json
import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, quote, quote_plus, unquote, unquote_to_bytes, urlencode

import ahocorasick

if TYPE_CHECKING:
    import httpx

    from ..document import Document, Page

__all__ = [
    "REDACTED",
    "Mark",
    "basic_credentials",
    "is_secret_name",
    "keyed_mark",
    "param_name",
    "redact_argument", "redact_argv",
    "redact_body",
    "redact_command_text",
    "redact_header",
    "request_secrets",
    "scrub", "scrub_bytes",
    "scrub_secrets",
    "secret_forms",
    "shown_database_url",
    "shown_url",
]

REDACTED = "REDACTED"

Mark = Callable[[str], str]  # what a secret value becomes: REDACTED, or its keyed mark


def _plain_mark(value: str) -> str:
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
    "key|token|secret|password|passwd|pwd|passphrase|signature|sig|auth|credential|session"
    "|cookie|bearer|jwt")
# Short words that are secret only as the whole name or its end (`dbpass`), not
# inside others (`passenger`, `footprint`).
_SECRET_ENDINGS = ("pass", "otp")
_NOT_SECRET = re.compile(
    "keyword|keyboard|keynote|monkey|donkey|hockey|jockey|turkey|whiskey"
    "|author(?!i[sz])|design|signal|assign|signup|signin|sigma|sight|tokeniz|secretar"
    "|bypass|compass")
_NOT_NAME = re.compile(r"[^a-z0-9]+")


@lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """True for a query parameter, form or JSON field, header, command option or
    variable named like a secret: ``api_key``, ``apiKey``, ``accesstoken``,
    ``X-Amz-Signature``, ``Authentication``, ``--client-secret``, ``DB_PASSWORD``,
    ``Cookie``, ``session_id``... but not ``keyword``, ``--author`` or ``design``."""
    squeezed = _NOT_SECRET.sub("", _NOT_NAME.sub("", name.lower()))
    return bool(_SECRET_WORDS.search(squeezed)) or squeezed.endswith(_SECRET_ENDINGS)


def param_name(escaped: str) -> str:
    """A query parameter name as written (``api%5Fkey``, ``a+b``), decoded."""
    return unquote_to_bytes(escaped.replace("+", " ")).decode("utf-8", "replace")


# --- identity ------------------------------------------------------------------------


_MARK = re.compile(rf"{REDACTED}(?:~[0-9a-f]{{32}})?")


def keyed_mark(key: bytes) -> Mark:
    """The mark a redacted value leaves in an identity: ``REDACTED~`` and 32 hex digits
    of its HMAC-SHA256 under ``key`` (the ledger's own random key). Two values give two
    marks; the mark reveals nothing of the value without the key. A value that already
    is a mark stays as it is, so an identity marked again is unchanged (and a locator
    written before keyed marks, holding ``REDACTED``, keeps it)."""
    @lru_cache(maxsize=1024)  # a value repeated in a long command is hashed once
    def mark(value: str) -> str:
        if _MARK.fullmatch(value):
            return value
        digest = hmac.new(key, value.encode("utf-8", "surrogatepass"), hashlib.sha256)
        return f"{REDACTED}~{digest.hexdigest()[:32]}"

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
        found.append(basic_credentials(userinfo).removeprefix("Basic "))
    for param, param_value in parse_qsl(url.query.decode("ascii", "replace"),
                                        keep_blank_values=False):
        if is_secret_name(param):
            found.append(param_value)
    for name, value in headers:
        if value and is_secret_name(name):
            found.extend(_header_secrets(name, value))
    if body:
        found.extend(_body_secrets(body, content_type))
    return secret_forms(found)


def _header_secrets(name: str, value: str) -> list[str]:
    found = [value]
    scheme, _, credentials = value.strip().partition(" ")
    credentials = credentials.strip()
    if credentials and scheme.lower() in ("basic", "bearer", "token", "digest"):
        found.append(credentials)
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
    if data is not None:
        return [str(v) for k, v in _json_items(data) if is_secret_name(k)
                and isinstance(v, (str, int))]
    if _is_form(content_type):
        text = body.decode("utf-8", "replace")
        return [v for k, v in parse_qsl(text, keep_blank_values=False) if is_secret_name(k)]
    return []


# Values that carry no secret however they are named (`auth=1`, `session=true`, a
# lone `/`): scrubbing them from a page would destroy its figures and words, and
# hide nothing. They are still redacted wherever their name is seen.
_TRIVIAL = frozenset({"true", "false", "yes", "no", "on", "off", "null", "none", REDACTED.lower()})


def _trivial(value: str) -> bool:
    return (value.lower() in _TRIVIAL or (value.isdigit() and len(value) <= 2)
            or (len(value) < 4 and not any(c.isalnum() for c in value)))


def secret_forms(values: Iterable[str]) -> list[str]:
    """The values (stripped, trivial ones left out) and the other spellings a request
    or a page may give them — percent-encoded, form-encoded, JSON-escaped — longest
    first."""
    forms: set[str] = set()
    for value in {v.strip() for v in values}:
        if value and not _trivial(value):
            forms.update(_spellings(value))
    return sorted(forms, key=lambda s: (-len(s), s))


_SPELLED_ALIKE = re.compile(r"[A-Za-z0-9_.~-]*")  # no encoding changes these


@lru_cache(maxsize=4096)
def _spellings(value: str) -> tuple[str, ...]:
    if _SPELLED_ALIKE.fullmatch(value):
        return (value,)
    escaped = quote(value, safe="")
    lower_hex = re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), escaped)
    return tuple({value, escaped, lower_hex, quote_plus(value, safe=""),
                  json.dumps(value)[1:-1]})


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
        pairs = parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
        return urlencode([(k, REDACTED if is_secret_name(k) else v) for k, v in pairs],
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
        head += "?" + _redacted_query(query, [], _plain_mark)
    return head


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
    return shown + head + (mark + _redacted_query(query, [], _plain_mark) if mark else "")


def _redacted_query(query: str, found: list[str], mark: Mark) -> str:
    """A raw query with each secret parameter's value replaced by its mark, the rest
    exactly as written."""
    parts = []
    for part in query.split("&"):
        name, eq, value = part.partition("=")
        if eq and value and is_secret_name(param_name(name)):
            plain = unquote(value.replace("+", " "))
            found.append(plain)
            parts.append(f"{name}={mark(plain)}")
        else:
            parts.append(part)
    return "&".join(parts)


# --- command lines ------------------------------------------------------------------

_HEADER = re.compile(r"(-H\s*)?([A-Za-z0-9][A-Za-z0-9_-]*)\s*:\s*(\S.*)", re.DOTALL)
_ASSIGNMENT = re.compile(r"-{0,2}[A-Za-z_][A-Za-z0-9_.-]*")
# A URL inside an argument. The look-behind makes every match start where a run of
# scheme characters starts, so the search stays linear on long arguments.
_URL = re.compile(r"(?<![a-zA-Z0-9+.-])[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"]+")
_HEADER_URL = re.compile(r"(?<![a-zA-Z0-9+.-])[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]+")
_USER_OPTIONS = frozenset({"-u", "--user", "--proxy-user"})
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh"})
_MAX_NESTING = 4  # sh -c "bash -c '...'" levels redacted word by word


def _redact_url(url: str, found: list[str], mark: Mark) -> str:
    head, sep, query = url.partition("?")
    scheme, slashes, rest = head.partition("://")
    authority, slash, path = rest.partition("/")
    if "@" in authority:
        userinfo, host = authority.rsplit("@", 1)
        found.extend((userinfo, userinfo.partition(":")[2]))
        head = f"{scheme}{slashes}{REDACTED}@{host}{slash}{path}"
    if sep:
        query, hash_sign, fragment = query.partition("#")
        return f"{head}?{_redacted_query(query, found, mark)}{hash_sign}{fragment}"
    return head


def redact_header(name: str, value: str) -> str:
    """A header as stored (WARC): REDACTED under a secret name, else its URLs' secrets."""
    if is_secret_name(name):
        return REDACTED
    if name.lower() in ("location", "content-location"):  # a URL, relative or not
        return _redact_url(value, [], _plain_mark)
    return _HEADER_URL.sub(lambda m: _redact_url(m.group(), [], _plain_mark), value)


def redact_argument(argument: str, previous: str | None = None,
                    secrets: list[str] | None = None, mark: Mark | None = None) -> str:
    """One argument of a command line with any secret in it replaced by ``mark`` of
    it (``REDACTED`` by default).

    Rules (simple on purpose, documented in the README): the value after
    ``--NAME=`` or ``NAME=`` (and the argument after a ``--NAME`` option)
    when NAME is secret-like; the value of a header whose name is secret-like
    (``Authorization: ...``, also as ``-HAuthorization: ...``); the password of
    ``-u/--user USER:PASSWORD``; URL user-info and secret-like query values.
    The secret values removed are appended to ``secrets`` when it is given.
    """
    mark = mark or _plain_mark
    found = secrets if secrets is not None else []
    if previous is not None and previous.startswith("--") and "=" not in previous \
            and is_secret_name(previous) and not argument.startswith("-"):
        found.append(argument)
        return mark(argument)
    if previous in _USER_OPTIONS and ":" in argument:
        user, _, password = argument.partition(":")
        found.append(password)
        return f"{user}:{mark(password)}"
    header = _HEADER.fullmatch(argument)
    if header and is_secret_name(header.group(2)) and "://" not in argument:
        value = header.group(3).strip()
        found.append(value)
        found.append(value.rsplit(" ", 1)[-1])  # the token of "Bearer TOKEN"
        return f"{header.group(1) or ''}{header.group(2)}: {mark(value)}"
    name, equals, value = argument.partition("=")
    if equals and value and _ASSIGNMENT.fullmatch(name) and is_secret_name(name):
        found.append(value)
        return f"{name}={mark(value)}"
    if "://" not in argument:
        return argument
    return _URL.sub(lambda m: _redact_url(m.group(0), found, mark), argument)


def redact_argv(argv: Sequence[str], secrets: list[str] | None = None,
                mark: Mark | None = None) -> list[str]:
    """``argv`` with secrets replaced by ``mark`` of them (see :func:`redact_argument`);
    the script of ``sh -c``/``bash -c`` (and other shells) is redacted word by word
    (:func:`redact_command_text`); a secret found in one argument is also scrubbed
    from all the others."""
    mark = mark or _plain_mark
    found = secrets if secrets is not None else []
    if not _could_hold_secrets("\n".join(argv)):
        return list(argv)
    redacted = _redact_words(list(argv), found, mark, depth=0)
    return _scrub_marked(redacted, found, mark)


def _redact_words(words: Sequence[str], found: list[str], mark: Mark, depth: int
                  ) -> list[str]:
    scripts = _script_positions(words)
    redacted = []
    previous: str | None = None
    for i, word in enumerate(words):
        if i in scripts and depth < _MAX_NESTING:
            redacted.append(_redact_script(word, found, mark, depth + 1))
        elif _may_hold_secret(word, previous):
            redacted.append(redact_argument(word, previous, found, mark))
        else:
            redacted.append(word)
        previous = word
    return redacted


def _may_hold_secret(word: str, previous: str | None) -> bool:
    """False for a word no rule of :func:`redact_argument` can touch (most of them): no
    ``:``, no ``=`` after a secret-like name, and no option before it that takes a
    secret (a quick test first, so that 30,000 plain words cost little)."""
    if ":" in word:
        return True
    if "=" in word and is_secret_name(word.partition("=")[0]):
        return True
    return previous is not None and _may_precede_secret(previous)


def _script_positions(words: Sequence[str]) -> set[int]:
    """Indexes of the words that are shell scripts: the first operand after a ``-c``
    option (``-c``, ``-ec``, ``-lc``...) of a shell (``sh``, ``bash``, ...)."""
    positions: set[int] = set()
    shell_at: int | None = None
    command_flag = False
    skip_value = False
    for i, word in enumerate(words):
        if skip_value:
            skip_value = False
            continue
        if shell_at is None:
            if word.rsplit("/", 1)[-1] in _SHELLS:
                shell_at, command_flag = i, False
            continue
        if word == "--":  # the end of the shell's options
            continue
        if word.startswith(("-", "+")) and len(word) > 1:
            command_flag = command_flag or (word[0] == "-" and not word.startswith("--")
                                            and "c" in word[1:])
            skip_value = word in ("-o", "+o", "-O", "+O")
            continue
        if command_flag:
            positions.add(i)
        shell_at = None  # the shell's operands start here; look for another shell after
    return positions


def _scrub_marked(words: list[str], found: list[str], mark: Mark) -> list[str]:
    forms = _forms_of(found)
    if not forms:
        return words
    finder = _finder(tuple(forms))
    joined = "\0".join(words)  # one pass over every word (argv holds no NUL)
    if joined.count("\0") != len(words) - 1:
        return [finder.sub(w, lambda value: mark(forms[value])) for w in words]
    return finder.sub(joined, lambda value: mark(forms[value])).split("\0")


def _forms_of(values: Iterable[str]) -> dict[str, str]:
    """Each spelling of each value (plain, percent-encoded...) → the value it spells."""
    forms: dict[str, str] = {}
    for value in sorted({v.strip() for v in values}):
        if value and not _trivial(value):
            for form in _spellings(value):
                forms.setdefault(form, value)
    return forms


def redact_command_text(text: str, secrets: list[str] | None = None,
                        mark: Mark | None = None) -> str:
    """A shell command line (or a label) with its secrets redacted word by word, its
    form kept: words that hold no secret stay exactly as written, operators
    (``;``, ``|``, ``&&``) and comments too."""
    mark = mark or _plain_mark
    found = secrets if secrets is not None else []
    return _redact_script(text, found, mark, depth=0)


# What any rule needs to see before it can redact a word: a `:` (a header, a URL,
# user:password), an assignment to a secret-like name, an option that takes a
# secret (`--token VALUE`, `-u`), or a shell that runs a script of its own. Each
# pattern starts only where a run of its characters starts: linear on long runs.
_ASSIGNED_NAME = re.compile(r"(?<![A-Za-z0-9_.-])(-{0,2}[A-Za-z_][A-Za-z0-9_.-]*)=")
_OPTION_WORD = re.compile(r"(?<![^\s;&|<>()'\"])(?:--[^\s;&|<>()'\"=]+|-u)"
                          r"(?![^\s;&|<>()'\"])")
_SHELL_WORD = re.compile(r"(?<![^\s;&|<>()'\"/])(?:" + "|".join(sorted(_SHELLS)) +
                         r")(?![^\s;&|<>()'\"])")


@lru_cache(maxsize=16)
def _could_hold_secrets(text: str) -> bool:
    """False when no rule can redact anything in ``text`` (a script, or argv joined by
    newlines): one scan instead of a rule per word, for almost every command."""
    if ":" in text or _SHELL_WORD.search(text):
        return True
    if any(is_secret_name(name) for name in set(_ASSIGNED_NAME.findall(text))):
        return True
    return any(_may_precede_secret(option) for option in set(_OPTION_WORD.findall(text)))


def _may_precede_secret(option: str) -> bool:
    return option in _USER_OPTIONS or (option.startswith("--") and is_secret_name(option))


def _redact_script(text: str, found: list[str], mark: Mark, depth: int) -> str:
    if not _could_hold_secrets(text):  # most scripts: one scan, no word loop
        return text
    start = len(found)
    pieces: list[str] = []
    last = 0
    for command in _shell_commands(text):
        values = [value for _, _, value in command]
        redacted = _redact_words(values, found, mark, depth)
        for (begin, end, value), clean in zip(command, redacted, strict=True):
            if clean != value:
                pieces.extend((text[last:begin], shlex.quote(clean)))
                last = end
    pieces.append(text[last:])
    rebuilt = "".join(pieces)
    return scrub(rebuilt, found[start:], mark) if len(found) > start else rebuilt


# Shell words: runs of ordinary characters, quoted strings and escapes; operators
# and newlines end a command, `#` at a word's start begins a comment.
_PLAIN_RUN = re.compile(r"[^\s'\"\\;&|<>()]+")
_PLAIN_TOKEN = re.compile(r"[^\s;&|<>()]+|[;&|<>()\n]")  # a script without quoting
_BLANK_RUN = re.compile(r"[ \t\r\f\v]+")
_OPERATORS = frozenset(";&|<>()\n")
_BLANKS = frozenset(" \t\r\f\v")
Words = tuple[tuple[int, int, str], ...]


@lru_cache(maxsize=16)  # one script is redacted several times in one run
def _shell_commands(text: str) -> tuple[Words, ...]:
    """The simple commands of a shell script, each a tuple of its words as
    ``(start, end, value)``: spans in ``text`` and the word with its quoting removed.
    One pass, linear in the length of the text; an unclosed quote runs to the end."""
    if not any(quoting in text for quoting in "'\"\\#"):
        return _plain_commands(text)
    commands: list[list[tuple[int, int, str]]] = [[]]
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char in _BLANKS:
            i = _BLANK_RUN.match(text, i).end()  # type: ignore[union-attr]
        elif char in _OPERATORS:
            if commands[-1]:
                commands.append([])
            i += 1
        elif char == "#":
            newline = text.find("\n", i)
            i = n if newline < 0 else newline
        else:
            start = i
            value, i = _shell_word(text, i)
            commands[-1].append((start, i, value))
    return tuple(tuple(command) for command in commands if command)


def _plain_commands(text: str) -> tuple[Words, ...]:
    """:func:`_shell_commands` of a script with no quotes, escapes or comments: words
    are their own values."""
    commands: list[list[tuple[int, int, str]]] = [[]]
    for match in _PLAIN_TOKEN.finditer(text):
        token = match.group()
        if token in _OPERATORS:
            if commands[-1]:
                commands.append([])
        else:
            commands[-1].append((match.start(), match.end(), token))
    return tuple(tuple(command) for command in commands if command)


def _shell_word(text: str, i: int) -> tuple[str, int]:
    parts: list[str] = []
    n = len(text)
    while i < n:
        char = text[i]
        if char in _BLANKS or char in _OPERATORS:
            break
        if char == "'":
            close = text.find("'", i + 1)
            close = n if close < 0 else close
            parts.append(text[i + 1 : close])
            i = close + 1
        elif char == '"':
            i = _double_quoted(text, i + 1, parts)
        elif char == "\\":
            parts.append(text[i + 1 : i + 2].replace("\n", ""))
            i += 2
        else:
            run = _PLAIN_RUN.match(text, i)
            assert run is not None
            parts.append(run.group())
            i = run.end()
    return "".join(parts), i


def _double_quoted(text: str, i: int, parts: list[str]) -> int:
    """Append the inside of a double-quoted string starting at ``i``; the index after it."""
    n = len(text)
    while i < n:
        stop = min((p for p in (text.find('"', i), text.find("\\", i)) if p >= 0), default=n)
        parts.append(text[i:stop])
        if stop >= n:
            return n
        if text[stop] == '"':
            return stop + 1
        escaped = text[stop + 1 : stop + 2]
        parts.append(escaped if escaped in '$`"\\' else "\\" + escaped)
        i = stop + 2
    return n


# --- scrubbing what was fetched or printed ---------------------------------------------

# Shorter values are replaced only where they stand as a whole word (not inside a
# longer run of letters and digits), so a three-letter password does not eat every
# word that holds those letters.
_ANYWHERE = 8


def _ascii_alnum(char: str) -> bool:
    return char.isascii() and char.isalnum()


class _Finder:
    """Every occurrence of a set of strings in a text, found in one pass however many
    strings there are (Aho-Corasick): leftmost first, the longest at a place, never
    overlapping; a string under eight characters only where it stands alone (no
    letter or digit on either side: ASCII ones for bytes read as Latin-1)."""

    def __init__(self, forms: Iterable[str], *, ascii_words: bool = False) -> None:
        self._automaton = ahocorasick.Automaton()
        for form in forms:
            self._automaton.add_word(form, len(form))
        self._empty = len(self._automaton) == 0
        if not self._empty:
            self._automaton.make_automaton()
        self._alnum: Callable[[str], bool] = _ascii_alnum if ascii_words else str.isalnum

    def spans(self, text: str) -> list[tuple[int, int]]:
        if self._empty:
            return []
        found = []
        for end, size in self._automaton.iter(text):
            start, stop = end - size + 1, end + 1
            if size < _ANYWHERE and ((start > 0 and self._alnum(text[start - 1]))
                                     or (stop < len(text) and self._alnum(text[stop]))):
                continue
            found.append((start, stop))
        found.sort(key=lambda span: (span[0], -span[1]))
        chosen: list[tuple[int, int]] = []
        for start, stop in found:
            if not chosen or start >= chosen[-1][1]:
                chosen.append((start, stop))
        return chosen

    def sub(self, text: str, replacement: Callable[[str], str]) -> str:
        pieces: list[str] = []
        last = 0
        for start, stop in self.spans(text):
            pieces.extend((text[last:start], replacement(text[start:stop])))
            last = stop
        pieces.append(text[last:])
        return "".join(pieces) if last else text


@lru_cache(maxsize=64)
def _finder(forms: tuple[str, ...], *, ascii_words: bool = False) -> _Finder:
    return _Finder(forms, ascii_words=ascii_words)


def _ordered(secrets: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted({s for s in secrets if s and not _trivial(s.strip())}))


def scrub(text: str, secrets: Iterable[str], mark: Mark | None = None) -> str:
    """``text`` with every occurrence of each secret (in each of its spellings) replaced
    by ``mark`` of it, ``REDACTED`` by default; values under eight characters only
    where they stand as a whole word. Linear in the text and the secrets."""
    mark = mark or _plain_mark
    forms = _forms_of(secrets)
    if not forms:
        return text
    return _finder(tuple(forms)).sub(text, lambda found: mark(forms[found]))


def scrub_bytes(data: bytes, secrets: Sequence[str]) -> bytes:
    """:func:`scrub` for bytes (command output, raw responses): ``REDACTED``."""
    forms = _ordered(secrets)
    if not forms:
        return data
    finder = _finder(tuple(f.encode("utf-8", "surrogateescape").decode("latin-1")
                           for f in forms), ascii_words=True)
    return finder.sub(data.decode("latin-1"), lambda _: REDACTED).encode("latin-1")


def scrub_secrets(document: Document, secrets: Sequence[str]) -> Document:
    """Replace every secret the request carried by ``REDACTED`` wherever the response
    echoed it (text, raw bytes, metadata), keeping page offsets right."""
    forms = _ordered(secrets)
    if not forms:
        return document
    finder = _finder(forms)
    fields = (document.text, document.title, document.site, document.author)
    raw = scrub_bytes(document.raw, forms)
    if raw == document.raw and not any(finder.spans(v or "") for v in fields) \
            and not _meta_has(document.meta, finder):
        return document
    text, pages = _redact_text(document.text, finder, document.pages)

    def clean(value: str | None) -> str | None:
        return finder.sub(value, _plain_mark) if value else value

    return replace(document, text=text, raw=raw, pages=pages, title=clean(document.title),
                   site=clean(document.site), author=clean(document.author),
                   meta=_meta_scrubbed(document.meta, finder),
                   warnings=(*document.warnings,
                             "the response echoed a secret of the request; it was redacted"))


def _meta_has(data: Any, finder: _Finder) -> bool:
    if isinstance(data, str):
        return bool(finder.spans(data))
    if isinstance(data, dict):
        return any(_meta_has(k, finder) or _meta_has(v, finder) for k, v in data.items())
    if isinstance(data, (list, tuple)):
        return any(_meta_has(v, finder) for v in data)
    return False


def _meta_scrubbed(data: Any, finder: _Finder) -> Any:
    if isinstance(data, str):
        return finder.sub(data, _plain_mark)
    if isinstance(data, dict):
        return {_meta_scrubbed(k, finder): _meta_scrubbed(v, finder) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_meta_scrubbed(v, finder) for v in data]
    return data


def _redact_text(text: str, finder: _Finder, pages: tuple[Page, ...]
                 ) -> tuple[str, tuple[Page, ...]]:
    parts: list[str] = []
    ends: list[int] = []  # the end of each replaced span in the old text...
    shifts: list[int] = []  # ...and the total shift of offsets from there on
    last = shift = 0
    for start, stop in finder.spans(text):
        parts.extend((text[last:start], REDACTED))
        last = stop
        shift += len(REDACTED) - (stop - start)
        ends.append(stop)
        shifts.append(shift)
    parts.append(text[last:])

    def moved(offset: int) -> int:
        index = bisect.bisect_right(ends, offset)
        return offset + (shifts[index - 1] if index else 0)

    return "".join(parts), tuple(replace(p, start=moved(p.start), end=moved(p.end))
                                 for p in pages)
