"""The identity of command output (DESIGN §4: argv + working directory).

A command's locator is ``COMMAND-LINE (in CWD)``: the shell-quoted argv with
secrets replaced by ``REDACTED``; piped text is ``stdin: LABEL (in CWD)``.
Secrets are redacted by the command-line rules of :mod:`.secrets`.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidArgument, InvalidPath
from . import Identity
from .secrets import redact_argv, redact_command_text

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

    ``locator`` (and ``display``) is ``COMMAND-LINE (in CWD)``, the command line
    being the shell-quoted argv (``shlex.join``), which is unambiguous; piped
    text is ``stdin: LABEL (in CWD)``.
    """

    argv: tuple[str, ...]  # redacted
    cwd: str
    command_line: str  # redacted, as people read it


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
    locator = f"{shlex.join(shown)} (in {folder})"
    return CommandLocator("command", locator, locator, argv=shown, cwd=folder,
                          command_line=command_line(argv, shell=shell))


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
    locator = f"stdin: {clean} (in {folder})"
    return CommandLocator("command", locator, locator, argv=(), cwd=folder, command_line=clean)


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
