"""The identity of command output (DESIGN §4: argv + working directory).

A command's display locator is ``COMMAND-LINE (in CWD)``: the shell-quoted
argv with secrets replaced by ``REDACTED``; piped text is ``stdin: LABEL (in
CWD)``. Its identity is the same with each redacted value as its keyed mark
(an HMAC under the ledger's key), so commands, ``sh -c`` scripts and labels
that differ only in a secret are two sources that both display as redacted.
Secrets are redacted by the command-line rules of :mod:`.secrets`.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InvalidArgument, InvalidPath
from ..hints import Hint
from . import Identity
from .command_secrets import redact_argv_each, redact_command_text_each
from .secrets import Mark, keyed_mark, plain_mark, secret_forms

__all__ = [
    "CommandLocator",
    "command_line",
    "command_locator",
    "piped_locator",
    "working_directory",
]


@dataclass(frozen=True, kw_only=True)
class CommandLocator(Identity):
    """The identity of a command's output: argv (secrets redacted) and working directory.

    ``display`` is ``COMMAND-LINE (in CWD)``, the command line being the
    shell-quoted argv (``shlex.join``), which is unambiguous; piped text is
    ``stdin: LABEL (in CWD)``. ``locator`` is the identity: the same with keyed
    marks in place of ``REDACTED``. ``secrets``: the values redacted, in every
    spelling (to scrub from the output; never shown or stored).
    """

    argv: tuple[str, ...]  # redacted
    cwd: str
    command_line: str  # redacted, as people read it
    secrets: tuple[str, ...] = field(default=(), repr=False, compare=False)


def command_locator(
    argv: Sequence[str], cwd: str | os.PathLike[str] | None = None, *, shell: bool = False,
    key: bytes,
) -> CommandLocator:
    """The locator of running ``argv`` in ``cwd`` (default: the working directory),
    redacted values keyed under ``key`` (the ledger's).

    With ``shell``, ``argv`` is joined with spaces into one script for
    ``sh -c``, so ``run --shell -- 'ls | wc -l'`` and ``run -- sh -c 'ls | wc -l'``
    are one source. Raises InvalidArgument for an empty command and
    InvalidPath for a ``cwd`` that is not a directory.
    """
    if not argv or not any(argv) or (shell and not " ".join(argv).strip()):
        raise InvalidArgument("no command to run", hint=Hint("{run}"))
    if not shell and not argv[0].strip():  # `run -- ' '`: no program has a blank name
        raise InvalidArgument("no command to run: the command name is empty (blank)",
                              hint=Hint("{run}"))
    joined = "".join(argv)  # (each test below once over all of them: a long argv)
    if "\0" in joined:
        raise InvalidArgument("a command argument contains a NUL byte")
    if not joined.isascii():  # (else every one is UTF-8; a lone surrogate is in one)
        for arg in argv:
            _check_utf8(arg, "a command argument")
    folder = working_directory(cwd)
    found: list[str] = []
    shown, keyed = _shown_argv(argv, shell=shell, marks=(plain_mark, keyed_mark(key)),
                               found=found)
    line = shell_join(shown)
    return CommandLocator("command", f"{shell_join(keyed)} (in {folder})",
                          f"{line} (in {folder})", argv=shown, cwd=folder,
                          command_line=shown[2] if shell else line,
                          secrets=tuple(secret_forms(found)))


_UNSAFE = re.compile(r"[^\w@%+=:,./-]", re.ASCII).search  # what shlex.quote quotes


def shell_join(words: Sequence[str]) -> str:
    """:func:`shlex.join` of ``words``, the test of each word run by one C-level map and
    its quoting (:func:`shlex.quote`'s) written out (15,000 words of a long argv: no
    Python call for each)."""
    return " ".join([(word or "''") if unsafe is None else "'" + word.replace("'", "'\"'\"'") + "'"
                     for word, unsafe in zip(words, map(_UNSAFE, words), strict=True)])



def command_line(argv: Sequence[str], *, shell: bool = False) -> str:
    """The command as people read it, secrets redacted: the shell-quoted argv, or
    the script itself with ``shell``. Never raises."""
    if shell:
        return _shown_argv(argv, shell=True)[0][2]
    return shlex.join(_shown_argv(argv, shell=False)[0])


def _shown_argv(argv: Sequence[str], *, shell: bool, marks: Sequence[Mark] = (plain_mark,),
                found: list[str] | None = None) -> list[tuple[str, ...]]:
    """The argv redacted with each of ``marks`` (the rules run once)."""
    if shell:
        return [("sh", "-c", script)
                for script in redact_command_text_each(" ".join(argv), marks, found)]
    return [tuple(words) for words in redact_argv_each(argv, marks, found)]


def piped_locator(label: str, cwd: str | os.PathLike[str] | None = None, *,
                  key: bytes) -> CommandLocator:
    """The locator of text piped in (``read - --label LABEL``): the label and folder."""
    shown = one_line_label(label)
    if not shown:
        raise InvalidArgument("--label must name what produced the piped text",
                              hint=Hint("{label}"))
    _check_utf8(shown, "the label", hint="name it in UTF-8 text")
    folder = working_directory(cwd)
    clean, keyed = redact_command_text_each(shown, (plain_mark, keyed_mark(key)))
    return CommandLocator("command", f"stdin: {keyed} (in {folder})",
                          f"stdin: {clean} (in {folder})", argv=(), cwd=folder,
                          command_line=clean)


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
    _check_utf8(str(resolved), "the working directory", error=InvalidPath,
                hint="run it from a folder whose path is UTF-8")
    return str(resolved)


def _check_utf8(text: str, what: str, *,
                error: type[InvalidArgument | InvalidPath] = InvalidArgument,
                hint: str = Hint("rename what it names, or {pipe_label}")) -> None:
    """Bad input for text holding bytes that are not UTF-8 (Python keeps them as lone
    surrogates): no ledger can store the name, so it cannot identify a source."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        shown = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise error(f"{what} is not valid UTF-8: {shown}", hint=hint) from exc
