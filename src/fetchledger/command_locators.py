"""The identity of command output (DESIGN §4: argv + working directory), and the
redaction of secrets in command lines.

A command's locator is ``COMMAND-LINE (in CWD)``: the shell-quoted argv with
secrets replaced by ``REDACTED``; piped text is ``stdin: LABEL (in CWD)``.
Option names are judged by whole segments (``--api-token``, ``DB_PASSWORD``),
so ``--author`` or ``sort --key`` stay as typed; URLs inside arguments lose
their user-info and secret query values by the same rule as fetched URLs.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

from .errors import InvalidArgument, InvalidPath
from .locators import REDACTED, is_secret_param

__all__ = [
    "CommandLocator",
    "command_line",
    "command_locator",
    "is_secret_name",
    "piped_locator",
    "redact_argument",
    "redact_argv",
    "redact_command_text",
    "scrub",
    "secret_values",
    "working_directory",
]

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


def secret_values(argv: Sequence[str], *, shell: bool = False) -> list[str]:
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


@dataclass(frozen=True)
class CommandLocator:
    """The identity of a command's output: argv (secrets redacted) and working directory.

    ``locator`` is ``COMMAND-LINE (in CWD)``, the command line being the
    shell-quoted argv (``shlex.join``), which is unambiguous; piped text is
    ``stdin: LABEL (in CWD)``.
    """

    argv: tuple[str, ...]  # redacted
    cwd: str
    command_line: str  # redacted, as people read it
    locator: str


def command_locator(
    argv: Sequence[str], cwd: str | os.PathLike[str] | None = None, *, shell: bool = False
) -> CommandLocator:
    """The locator of running ``argv`` in ``cwd`` (default: the working directory).

    With ``shell``, ``argv`` is joined with spaces into one script for
    ``sh -c``, so ``run --shell -- 'ls | wc -l'`` and ``run -- sh -c 'ls | wc -l'``
    are one source. Raises InvalidArgument for an empty command and
    InvalidPath for a ``cwd`` that is not a directory.
    """
    if not argv or not any(argv) or (shell and not " ".join(argv).strip()):
        raise InvalidArgument("no command to run", hint="fetchledger run -- CMD ARGS...")
    if any("\0" in arg for arg in argv):
        raise InvalidArgument("a command argument contains a NUL byte")
    folder = working_directory(cwd)
    shown = _shown_argv(argv, shell=shell)
    return CommandLocator(shown, folder, command_line(argv, shell=shell),
                          f"{shlex.join(shown)} (in {folder})")


def command_line(argv: Sequence[str], *, shell: bool = False) -> str:
    """The command as people read it, secrets redacted: the shell-quoted argv, or
    the script itself with ``shell``. Never raises."""
    if shell:
        return _shown_argv(argv, shell=True)[2]
    return shlex.join(_shown_argv(argv, shell=False))


def _shown_argv(argv: Sequence[str], *, shell: bool) -> tuple[str, ...]:
    if shell:
        return ("sh", "-c", redact_command_text(" ".join(argv)))
    return tuple(redact_argv(argv))


def piped_locator(label: str, cwd: str | os.PathLike[str] | None = None) -> CommandLocator:
    """The locator of text piped in (``read - --label LABEL``): the label and folder."""
    shown = one_line_label(label)
    if not shown:
        raise InvalidArgument("--label must name what produced the piped text",
                              hint='e.g. fetchledger read - --label "git log -5"')
    folder = working_directory(cwd)
    clean = redact_command_text(shown)
    return CommandLocator((), folder, clean, f"stdin: {clean} (in {folder})")


def one_line_label(label: str) -> str:
    return " ".join(label.split())


def working_directory(cwd: str | os.PathLike[str] | None) -> str:
    """The resolved working directory; InvalidPath when it is not a directory."""
    given = Path(cwd).expanduser() if cwd is not None else Path.cwd()
    try:
        resolved = given.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise InvalidPath(f"no such directory: {cwd}") from exc
    if not resolved.is_dir():
        raise InvalidPath(f"{cwd} is not a directory")
    return str(resolved)
