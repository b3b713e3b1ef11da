"""The canonical identity of a source (DESIGN §4), and what people are shown.

A source's *locator* is what dedupes it: one canonical locator, one id.
Secrets never enter a locator; the display form keeps a redaction mark.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import InvalidPath

__all__ = ["REDACTED", "file_locator"]

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
