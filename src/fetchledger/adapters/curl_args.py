"""curl's command-line arguments, parsed as curl reads them, into an HTTP request.

Supported (with curl's meaning): ``-X/--request``, ``-H/--header`` (``"Name:"``
removes a default header, ``"Name;"`` sends it empty, ``@FILE`` reads one
header a line from FILE, ``@-`` from stdin), ``-d/--data``,
``--data-ascii``, ``--data-raw``, ``--data-binary``, ``--data-urlencode``
(``@file`` and ``@-`` where curl reads them), ``--json``, ``-G/--get``,
``-u/--user``, ``-A/--user-agent``, ``-e/--referer``, ``-b/--cookie``,
``-L/--location``, ``-I/--head``, ``-m/--max-time``, ``--connect-timeout``,
``--url``, the URL anywhere; short flags combine (``-sSL``, ``-XPOST``).
Accepted and without effect because fetchledger always behaves so (``fetchledger
curl --help`` says how): ``-s``, ``-S``, ``--compressed``, ``-f/--fail``,
``--no-progress-meter``, ``-N``. Options that would write files, disable TLS
checks or bypass the address policy are refused, and so are those whose job
fetchledger does another way, each with its reason (:data:`REFUSED`).

fetchledger's own options may stand anywhere among them: ``--ledger PATH``,
``--allow-private``, ``--allow-host NAME``, ``--query Q``, ``--snippets N``
(:func:`parse_curl` takes them out into :attr:`CurlCommand.options`).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from ..config import MAX_SECONDS, MAX_SNIPPETS, MIN_SECONDS, seconds_message
from ..errors import InvalidArgument, InvalidPath
from ..identity.urls import redact_url
from ..inputs import MAX_REQUEST_BODY, read_named, standard_input

if TYPE_CHECKING:
    from ..net.client import HTTPRequest

__all__ = ["REFUSED", "CurlCommand", "OwnOptions", "parse_curl",
           "parse_curl_args", "split_own_options"]

# option -> (takes a value, canonical long name)
_LONG: dict[str, tuple[bool, str]] = {
    "--request": (True, "request"), "--header": (True, "header"), "--data": (True, "data"),
    "--data-ascii": (True, "data"), "--data-raw": (True, "data-raw"),
    "--data-binary": (True, "data-binary"), "--data-urlencode": (True, "data-urlencode"),
    "--json": (True, "json"), "--get": (False, "get"), "--user": (True, "user"),
    "--user-agent": (True, "user-agent"), "--referer": (True, "referer"),
    "--cookie": (True, "cookie"), "--location": (False, "location"), "--head": (False, "head"),
    "--max-time": (True, "max-time"), "--connect-timeout": (True, "connect-timeout"),
    "--url": (True, "url"),
    "--silent": (False, "noop"), "--show-error": (False, "noop"), "--compressed": (False, "noop"),
    "--fail": (False, "noop"), "--no-progress-meter": (False, "noop"),
    "--no-buffer": (False, "noop"), "--location-trusted": (False, "location"),
}
_SHORT: dict[str, str] = {
    "X": "--request", "H": "--header", "d": "--data", "G": "--get", "u": "--user",
    "A": "--user-agent", "e": "--referer", "b": "--cookie", "L": "--location", "I": "--head",
    "m": "--max-time", "s": "--silent", "S": "--show-error", "f": "--fail", "N": "--no-buffer",
}
_SHOWN = "`fetchledger show N --json` lists the HTTP facts the ledger kept"
REFUSED: dict[str, str] = {
    "-k": "TLS certificate checks cannot be turned off",
    "--insecure": "TLS certificate checks cannot be turned off",
    "-o": "the response goes to the ledger, not to a file",
    "--output": "the response goes to the ledger, not to a file",
    "-O": "the response goes to the ledger, not to a file",
    "--remote-name": "the response goes to the ledger, not to a file",
    "-x": "a proxy would hide the address connected to from the address policy",
    "--proxy": "a proxy would hide the address connected to from the address policy",
    "--resolve": "it would bypass the address policy",
    "--connect-to": "it would bypass the address policy",
    "--unix-socket": "it would bypass the address policy",
    "-F": "multipart forms are not supported; use -d or --json",
    "--form": "multipart forms are not supported; use -d or --json",
    "-T": "uploads are not supported; use --data-binary @FILE",
    "--upload-file": "uploads are not supported; use --data-binary @FILE",
    "-i": "the response is registered, not printed; `show N` lists its HTTP facts",
    "--include": "the response is registered, not printed; `show N` lists its HTTP facts",
    "-v": f"the exchange is registered, not traced; {_SHOWN}",
    "--verbose": f"the exchange is registered, not traced; {_SHOWN}",
    "--trace": f"the exchange is registered, not traced; {_SHOWN}",
    "--trace-ascii": f"the exchange is registered, not traced; {_SHOWN}",
    "-w": f"the response goes to the ledger; put --json before the verb for a JSON result, "
          f"and {_SHOWN}",
    "--write-out": f"the response goes to the ledger; put --json before the verb for a JSON "
                   f"result, and {_SHOWN}",
    "--retry": "fetchledger does not retry by itself: a failure is recorded as an attempt "
               "(exit 3); run the command again, or use `batch`, whose re-run retries "
               "failed inputs",
}


@dataclass(frozen=True)
class OwnOptions:
    """fetchledger's options found among curl's arguments."""

    ledger: str | None = None
    allow_private: bool = False
    allow_hosts: tuple[str, ...] = ()
    query: str | None = None
    k: int | None = None


@dataclass(frozen=True)
class CurlCommand:
    """A parsed curl command line."""

    url: str
    method: str
    headers: tuple[tuple[str, str | None], ...]
    body: bytes | None
    follow: bool = False
    max_time: float | None = None
    connect_timeout: float | None = None
    extra_secrets: tuple[str, ...] = field(default=(), compare=False, repr=False)
    options: OwnOptions = field(default_factory=OwnOptions, compare=False)

    @property
    def content_type(self) -> str:
        for name, value in self.headers:
            if name.lower() == "content-type" and value:
                return value
        return ""

    @property
    def shown(self) -> str:
        """The URL as it may be printed (secrets redacted)."""
        try:
            return redact_url(self.url)
        except Exception:
            return "the curl request"

    def http_request(self) -> HTTPRequest:
        from ..net.client import HTTPRequest  # imports httpx: only once a request is sent

        return HTTPRequest(self.url, self.method, self.headers, self.body,
                           follow_redirects=self.follow, total_timeout=self.max_time,
                           connect_timeout=self.connect_timeout)


def parse_curl(args: Sequence[str]) -> CurlCommand:
    """A command line as ``fetchledger curl`` takes it: curl's arguments, with
    fetchledger's own options anywhere among them (in :attr:`CurlCommand.options`).
    InvalidArgument (exit 2) for what curl would reject or fetchledger does not support."""
    rest, own = split_own_options(args)
    return replace(parse_curl_args(rest), options=own)


def split_own_options(args: Sequence[str]) -> tuple[list[str], OwnOptions]:
    """Take fetchledger's own options out of curl's arguments (they may stand anywhere;
    a value that follows a curl option taking one is left alone)."""
    rest: list[str] = []
    ledger: str | None = None
    allow_private = False
    hosts: list[str] = []
    query: str | None = None
    k: int | None = None
    items = list(args)
    index = 0

    def value_of(name: str, inline: str | None) -> str:
        nonlocal index
        if inline is not None:
            return inline
        index += 1
        if index >= len(items):
            raise InvalidArgument(f"{name} needs a value")
        return items[index]

    while index < len(items):
        arg = items[index]
        name, eq, inline_value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        inline = inline_value if eq else None
        if arg == "--":
            rest.extend(items[index:])
            break
        if name == "--ledger":
            ledger = value_of(name, inline)
        elif arg == "--allow-private":
            allow_private = True
        elif name == "--allow-host":
            hosts.append(value_of(name, inline))
        elif name == "--query":
            query = value_of(name, inline)
        elif name == "--snippets":
            text = value_of(name, inline)
            if not text.isdigit() or not 1 <= int(text) <= MAX_SNIPPETS:
                raise InvalidArgument(f"--snippets needs a whole number from 1 to "
                                      f"{MAX_SNIPPETS:,}, not {text!r}")
            k = int(text)
        else:
            rest.append(arg)
            if _takes_value(arg) and index + 1 < len(items):
                index += 1
                rest.append(items[index])
        index += 1
    return rest, OwnOptions(ledger, allow_private, tuple(hosts), query, k)


def _takes_value(arg: str) -> bool:
    if arg.startswith("--"):
        return _LONG.get(arg, (False, ""))[0]
    if arg.startswith("-") and len(arg) > 1:
        for position, letter in enumerate(arg[1:], start=1):
            long = _SHORT.get(letter)
            if long and _LONG[long][0]:
                return position == len(arg) - 1  # the value is the next argument
    return False


def _expand(args: Sequence[str]) -> list[tuple[str, str | None]]:
    """``(canonical option, value)`` pairs and ``("url", URL)`` for positional arguments."""
    pairs: list[tuple[str, str | None]] = []
    items = list(args)
    index = 0
    only_urls = False
    while index < len(items):
        arg = items[index]
        index += 1
        if only_urls or not arg.startswith("-") or arg == "-":
            pairs.append(("url", arg))
            continue
        if arg == "--":
            only_urls = True
            continue
        if arg.split('=', 1)[0] in REFUSED:
            name = arg.split("=", 1)[0]
            raise InvalidArgument(f"curl option {name} is not supported: {REFUSED[name]}")
        if arg.startswith("--"):
            spec = _LONG.get(arg)
            if spec is None:
                raise InvalidArgument(f"unknown or unsupported curl option {arg.split('=')[0]}",
                                      hint="see `fetchledger curl --help`")
            if spec[0]:
                if index >= len(items):
                    raise InvalidArgument(f"curl option {arg} needs a value")
                pairs.append((spec[1], items[index]))
                index += 1
            else:
                pairs.append((spec[1], None))
            continue
        letters = arg[1:]
        for position, letter in enumerate(letters):
            if f"-{letter}" in REFUSED:
                raise InvalidArgument(f"curl option -{letter} is not supported: "
                                      f"{REFUSED['-' + letter]}")
            long = _SHORT.get(letter)
            if long is None:
                raise InvalidArgument(f"unknown or unsupported curl option -{letter}",
                                      hint="see `fetchledger curl --help`")
            takes_value, name = _LONG[long]
            if not takes_value:
                pairs.append((name, None))
                continue
            value = letters[position + 1 :]
            if not value:
                if index >= len(items):
                    raise InvalidArgument(f"curl option -{letter} needs a value")
                value = items[index]
                index += 1
            pairs.append((name, value))
            break
    return pairs


def _read_data_file(spec: str, *, strip_newlines: bool, read_stdin: Callable[[], bytes],
                    what: str = "data") -> bytes:
    name = spec[1:]
    if name == "-":
        data = read_stdin()
    else:
        if not name:
            raise InvalidPath(f"the file name after @ is empty (curl reads {what} from @FILE)")
        try:
            data = read_named(str(Path(name).expanduser()), what=f"request {what} file",
                              cap=MAX_REQUEST_BODY, too_large=InvalidPath)
        except InvalidPath as exc:
            if exc.message.startswith("no such file"):
                raise InvalidPath(f"{exc.message} (curl reads {what} from @FILE)") from exc
            raise
    return data.replace(b"\r", b"").replace(b"\n", b"") if strip_newlines else data


def _urlencoded(spec: str, read_stdin: Callable[[], bytes]) -> bytes:
    """curl's --data-urlencode forms: content, =content, name=content, @file, name@file."""
    name, content = "", spec
    if "=" in spec and not spec.startswith("@") and (
            "@" not in spec or spec.index("=") < spec.index("@")):
        name, content = spec.split("=", 1)
        raw = content.encode()
    elif "@" in spec:
        name, file_spec = spec.split("@", 1)
        raw = _read_data_file("@" + file_spec, strip_newlines=False, read_stdin=read_stdin)
    else:
        raw = content.encode()
    encoded = quote(raw, safe="").encode()
    return name.encode() + b"=" + encoded if name else encoded


def _header(value: str) -> tuple[str, str | None]:
    name, sep, rest = value.partition(":")
    if sep:
        text = rest.strip()
        return name.strip(), text if text else None
    if value.endswith(";"):
        return value[:-1].strip(), ""
    # only a first word that has words after it is shown: one word may be a name with
    # its secret glued on (X-Api-Key_V), and is never echoed
    words = value.split(maxsplit=1)
    shown = f", not {words[0]!r}…" if len(words) > 1 else " (it has no colon)"
    raise InvalidArgument(f"a header must look like 'Name: value'{shown}")


def parse_curl_args(args: Sequence[str], *,
                    read_stdin: Callable[[], bytes] | None = None) -> CurlCommand:
    """A CurlCommand from curl's arguments; InvalidArgument (exit 2) for what curl
    would reject or fetchledger does not support."""
    stdin = read_stdin or (lambda: standard_input().read())  # (only when @- is given)
    for number, arg in enumerate(args, 1):  # bytes that are not UTF-8 (lone surrogates)
        if not arg.isascii():
            try:
                arg.encode("utf-8")
            except UnicodeEncodeError:  # (not quoted: it may be a header or a password)
                raise InvalidArgument(f"curl argument {number} is not valid UTF-8",
                                      hint="write it in UTF-8 text") from None
    urls: list[str] = []
    method: str | None = None
    headers: list[tuple[str, str | None]] = []
    data: list[bytes] = []
    json_body = get = follow = head = False
    user = agent = referer = cookie = None
    max_time: float | None = None
    connect_timeout: float | None = None
    for option, value in _expand(args):
        if option == "url" and value is not None:
            urls.append(value)
        elif option == "request":
            method = value
        elif option == "header" and value is not None and value.startswith("@"):
            headers.extend(_header_file(value, stdin))
        elif option == "header":
            headers.append(_header(value or ""))
        elif option in ("data", "data-binary", "json") and value is not None:
            from_file = value.startswith("@")
            data.append(_read_data_file(value, strip_newlines=option == "data",
                                        read_stdin=stdin) if from_file else value.encode())
            json_body = json_body or option == "json"
        elif option == "data-raw" and value is not None:
            data.append(value.encode())
        elif option == "data-urlencode" and value is not None:
            data.append(_urlencoded(value, stdin))
        elif option == "get":
            get = True
        elif option == "location":
            follow = True
        elif option == "head":
            head = True
        elif option == "user":
            user = value
        elif option == "user-agent":
            agent = value
        elif option == "referer":
            referer = value
        elif option == "cookie":
            cookie = value
        elif option == "max-time":
            max_time = _seconds("--max-time", value or "")
        elif option == "connect-timeout":
            connect_timeout = _seconds("--connect-timeout", value or "")
    command = _command(urls, method, headers, data, json_body=json_body, get=get,
                       follow=follow, head=head, user=user, agent=agent, referer=referer,
                       cookie=cookie, max_time=max_time)
    return replace(command, connect_timeout=connect_timeout)


def _seconds(option: str, text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not MIN_SECONDS <= seconds <= MAX_SECONDS:
        raise InvalidArgument(seconds_message(option, text))
    return seconds


def _header_file(spec: str, read_stdin: Callable[[], bytes]) -> list[tuple[str, str | None]]:
    """curl's ``-H @FILE``: one header a line (blank lines skipped), ``@-`` from stdin."""
    data = _read_data_file(spec, strip_newlines=False, read_stdin=read_stdin, what="headers")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidArgument(f"the headers in {spec[1:]} are not UTF-8 text") from exc
    return [_header(line) for line in text.splitlines() if line.strip()]


def _command(urls: list[str], method: str | None, headers: list[tuple[str, str | None]],
             data: list[bytes], *, json_body: bool, get: bool, follow: bool, head: bool,
             user: str | None, agent: str | None, referer: str | None, cookie: str | None,
             max_time: float | None) -> CurlCommand:
    if not urls:
        raise InvalidArgument("no URL given", hint="fetchledger curl [OPTIONS] URL")
    if len(urls) > 1:
        raise InvalidArgument(f"one URL per curl command, not {len(urls)}",
                              hint="use `fetchledger fetch URL...` for several pages")
    url = urls[0] if "://" in urls[0] else "http://" + urls[0]  # curl's default scheme
    given = {name.lower() for name, _ in headers}
    extra: list[tuple[str, str | None]] = []
    secrets: list[str] = []
    body: bytes | None = None
    if data and get:  # before a fragment (never sent), as curl puts it
        url = url.partition("#")[0]
        url += ("&" if "?" in url else "?") + b"&".join(data).decode("utf-8", "replace")
    elif data:
        body = b"".join(data) if json_body else b"&".join(data)
        if "content-type" not in given:
            extra.append(("Content-Type", "application/json" if json_body
                          else "application/x-www-form-urlencoded"))
        if json_body and "accept" not in given:
            extra.append(("Accept", "application/json"))
    if head and body is not None and method is None:
        raise InvalidArgument("-I (HEAD) cannot send data; add -G to put it in the URL")
    if user is not None:
        if ":" not in user:
            raise InvalidArgument("-u needs USER:PASSWORD (fetchledger does not prompt)")
        password = user.split(":", 1)[1]
        token = base64.b64encode(user.encode()).decode("ascii")
        secrets.extend((password, token))
        if "authorization" not in given:
            extra.append(("Authorization", f"Basic {token}"))
    for name, value in (("User-Agent", agent), ("Referer", referer)):
        if value is not None and name.lower() not in given:
            extra.append((name, value))
    if cookie is not None:
        if "=" not in cookie:
            raise InvalidArgument("-b reads cookies as 'name=value; ...'; cookie files are "
                                  "not supported")
        if "cookie" not in given:
            extra.append(("Cookie", cookie))
    verb = (method or ("HEAD" if head else "POST" if body is not None else "GET")).upper()
    return CurlCommand(url=url, method=verb, headers=(*extra, *headers), body=body,
                       follow=follow, max_time=max_time, extra_secrets=tuple(secrets))
