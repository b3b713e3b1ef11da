"""Files a user names for fetchledger to read whole: drafts (``check``, ``render``,
``export --cited-by``), input lists (``batch``, ``ingest``) and request bodies (``curl -d
@FILE``). One reader for all of them, so that every one refuses the same odd inputs the
same way (bad input, exit 2), and none can hang:

- an empty name is said to be empty (never taken for the working directory);
- a name the file system refuses (too long, a NUL byte, a symlink loop, a file where a
  folder should be) is one clean error, never a traceback;
- a directory, and anything that is not a regular file — a FIFO (its open waits for a
  writer for ever), a device (``/dev/zero`` never ends), a socket — is refused before it
  is opened; the pipes a shell hands over by name (``/dev/stdin``, ``/dev/fd/N``, as
  ``<(command)`` makes them) are read like ``-``;
- a file is read up to its cap, never further.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
from typing import BinaryIO

from .errors import BadInput, InvalidArgument, InvalidPath

__all__ = ["MAX_DRAFT", "MAX_INPUT_LIST", "MAX_REQUEST_BODY", "path_error", "read_named",
           "read_named_text", "shown_name", "standard_input"]

MAX_DRAFT = 64 << 20  # bytes: a draft is read whole
MAX_INPUT_LIST = 256 << 20  # bytes of one batch or ingest input list
MAX_REQUEST_BODY = 64 << 20  # bytes of a request body read from @FILE

# descriptors this process already holds, by name: a shell's pipe (`<(cmd)`, `/dev/stdin`)
_OWN_DESCRIPTOR = re.compile(r"/dev/(?:stdin|fd/[0-9]+)|/proc/self/fd/[0-9]+")
_SHOWN_MAX = 80  # characters of a name shown in a message


def shown_name(name: str) -> str:
    """A file name for a message: bytes that are not UTF-8 as ``\\xNN``, a long name cut
    (its length said), a name with blanks at its ends quoted."""
    text = os.fsencode(name).decode("utf-8", "backslashreplace")
    if len(text) > _SHOWN_MAX:
        text = f"{text[:_SHOWN_MAX - 20]}… ({len(text)} characters)"
    if text != text.strip():
        text = repr(text)
    return text


def path_error(name: str, exc: OSError | ValueError, *, what: str = "file",
               verb: str = "read") -> InvalidPath:
    """The InvalidPath for a name the file system refused (``os.stat`` or ``open``)."""
    shown = shown_name(name)
    if isinstance(exc, ValueError):  # an embedded NUL byte
        return InvalidPath(f"the {what} name {shown} contains a NUL byte")
    if exc.errno == errno.ENOENT:
        return InvalidPath(f"no such file: {shown}")
    if exc.errno == errno.ENAMETOOLONG:
        return InvalidPath(f"the {what} name is too long for the file system: {shown}",
                           hint="each part of a path holds at most 255 bytes")
    if exc.errno == errno.ENOTDIR:
        return InvalidPath(f"no such file: {shown} (a part of the path is a file, not a "
                           "folder)")
    if exc.errno == errno.ELOOP:
        return InvalidPath(f"cannot {verb} {shown}: a loop of symbolic links")
    return InvalidPath(f"cannot {verb} {shown}: {exc.strerror or exc}")


def read_named(name: str, *, what: str, cap: int, stdin: BinaryIO | None = None,
               too_large: type[BadInput] = InvalidArgument) -> bytes:
    """The bytes of the file ``name`` (``-``: ``stdin``, else standard input), at most
    ``cap`` of them: ``too_large`` (exit 2) past it, InvalidPath (exit 2) for a name that
    names no regular file (see the module's docstring)."""
    if name == "-":
        source = stdin if stdin is not None else standard_input()
        return _capped(source.read(cap + 1), name, what, cap, too_large)
    if not name:
        raise InvalidPath(f"the {what} file name is empty", hint="name a file, or - for "
                                                                  "standard input")
    try:
        status = os.stat(name)
    except (OSError, ValueError) as exc:
        raise path_error(name, exc) from exc
    own_pipe = stat.S_ISFIFO(status.st_mode) and _OWN_DESCRIPTOR.fullmatch(name)
    if stat.S_ISDIR(status.st_mode):
        raise InvalidPath(f"{shown_name(name)} is a directory, not a {what}")
    if not stat.S_ISREG(status.st_mode) and not own_pipe:
        raise InvalidPath(f"{shown_name(name)} is not a regular file (a device, pipe or "
                          "socket)", hint="pipe what it holds on standard input, as -")
    try:
        # O_NONBLOCK: should the name have become a FIFO since, the open does not wait
        descriptor = os.open(name, os.O_RDONLY | (0 if own_pipe else os.O_NONBLOCK))
    except OSError as exc:
        raise path_error(name, exc) from exc
    with os.fdopen(descriptor, "rb") as handle:
        if not own_pipe and not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise InvalidPath(f"{shown_name(name)} is not a regular file (a device, pipe "
                              "or socket)")
        try:
            data = handle.read(cap + 1)
        except OSError as exc:
            raise path_error(name, exc) from exc
    return _capped(data, name, what, cap, too_large)


def standard_input(closed: str = "so - reads nothing") -> BinaryIO:
    """The process's standard input as bytes; InvalidArgument (exit 2) when it is closed
    (``<&-``: Python then has no ``sys.stdin``, and each reader of ``-`` failed with a
    traceback)."""
    stream = sys.stdin
    if stream is None or getattr(stream, "buffer", None) is None:
        raise InvalidArgument(f"standard input is closed, {closed}",
                              hint="pipe the input in, or name a file")
    return stream.buffer


def read_named_text(name: str, *, what: str, cap: int, stdin: BinaryIO | None = None,
                    error: type[BadInput] = InvalidArgument) -> str:
    """:func:`read_named`, decoded as UTF-8 (a BOM skipped); ``error`` (exit 2) for bytes
    that are not UTF-8 and past the cap."""
    data = read_named(name, what=what, cap=cap, stdin=stdin, too_large=error)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{shown_name(name)} is not UTF-8 text ({exc.reason} at byte "
                    f"{exc.start})") from exc


def _capped(data: bytes, name: str, what: str, cap: int, too_large: type[BadInput]) -> bytes:
    if len(data) > cap:
        raise too_large(f"{shown_name(name)} is over {cap >> 20} MiB: too large for a {what}")
    return data
