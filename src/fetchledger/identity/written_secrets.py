"""Secrets a script writes into a credentials file's lines, for :mod:`.fed_secrets`
(DESIGN §8): the formats a line of text gives a password in without a name the other
rules know, read on a script's raw text and on what its ``printf`` commands print.

- ``.netrc``: ``machine HOST login USER password PW`` (also ``default``, ``account``);
- ``.pgpass``: ``HOST:PORT:DATABASE:USER:PW`` (in a script that names a pgpass file);
- keyed lines of what ``printf`` prints (``printf '[client]\\npassword=%s\\n' PW``): a
  line ``NAME=V`` or ``NAME: V`` whose NAME is secret-like.

Each is one regular expression over the text (linear); the values are appended to
``found`` as they stand.
"""

from __future__ import annotations

import re

from .secrets import is_secret_name

__all__ = ["may_write_lines", "written_lines_found"]

_NETRC = re.compile(r"(?i)(?:\bmachine\s+[^\s'\"]+|\bdefault)"
                    r"(?:\s+(?:login|account|port)\s+[^\s'\"]+){0,3}"
                    r"\s+password\s+(?![$`])([^\s'\"\\]+)")
_PGPASS = re.compile(r"(?<![^\s'\"])[^\s:'\"]+:(?:\d+|\*):[^\s:'\"]+:[^\s:'\"]+:"
                     r"(?![$`])([^\s'\"\\]+)")
# a line of printed text (after a real or an escaped line break, or at its start)
_KEYED_LINE = re.compile(r"(?:^|(?<=\n)|(?<=\\n))[ \t]*([A-Za-z_][\w.-]*)[ \t]*[=:][ \t]*"
                         r"(?![$`%])([^\s'\"\\]+)")
_HINTS = ("machine", "default", "pgpass", "PGPASS")


def may_write_lines(text: str) -> bool:
    """Whether :func:`written_lines_found` can find anything in ``text`` (substring tests;
    the keywords of a .netrc are lower case)."""
    return any(hint in text for hint in _HINTS)


def written_lines_found(text: str, found: list[str], *, printed: bool = False,
                        pgpass: bool | None = None) -> None:
    """Append to ``found`` the passwords of ``.netrc`` and ``.pgpass`` lines in ``text``;
    for ``printed`` text (what a printf prints) also the values of keyed lines. ``pgpass``:
    whether the script names a pgpass file (by default: whether ``text`` does)."""
    lowered = text.lower()
    if "password" in lowered:
        found.extend(match.group(1) for match in _NETRC.finditer(text))
    if pgpass if pgpass is not None else "pgpass" in lowered:
        found.extend(match.group(1) for match in _PGPASS.finditer(text))
    if printed:
        found.extend(match.group(2) for match in _KEYED_LINE.finditer(text)
                     if is_secret_name(match.group(1)))
