"""Hints proven absent from a long text, for a long text inside it (issue 13: the
script of ``sh -c "sh -c '…'"`` is asked at each level whether it holds an SQL logon
or a keyed quote, each a C-level scan of the whole text).

A pattern with no look-around but (optionally) one at its end that looks one character
past its match (``\\b``, as in ``conn\\b``) matches in a text ``t`` inside a text ``s``
(``s.find(t) >= 0``) only where it matches in ``s`` at the same place, unless its match
ends at the end of ``t`` (where the character after it is not ``s``'s). So when ``s``
holds no match, ``t`` holds one only in its last ``tail`` characters (the longest match
that looks past its end): a scan of those, and one ``find`` (about 0.1 ms for 100k
characters), instead of a scan of ``t``.

The last long text found to hold no match is kept for the next call (a nested level's
script) and forgotten when the command line is done (:func:`forget`)."""

from __future__ import annotations

import re

__all__ = ["AbsentHint", "forget"]

SHORTCUT = True  # (tests turn it off to compare)
_LONG = 4096  # shorter texts: a scan costs less than a find over the kept one
_HINTS: list[AbsentHint] = []


class AbsentHint:
    """``pattern.search`` as a yes or no, answered for a long text inside the last long
    text it found nothing in without a scan of it all (see the module's text)."""

    def __init__(self, pattern: re.Pattern[str], tail: int) -> None:
        self._pattern = pattern
        self._tail = tail  # 0: the pattern looks at nothing past its match
        self._free = ""  # the last long text holding no match
        _HINTS.append(self)

    def __call__(self, text: str) -> bool:
        free = self._free
        if SHORTCUT and len(free) >= len(text) >= _LONG and free.find(text) >= 0:
            return self._tail > 0 and self._pattern.search(
                text, len(text) - self._tail) is not None
        if self._pattern.search(text) is not None:
            return True
        if len(text) >= _LONG:
            self._free = text
        return False

    def forget(self) -> None:
        self._free = ""


def forget() -> None:
    """Every kept text dropped (a command line redacted: none of its text stays)."""
    for hint in _HINTS:
        hint.forget()
