"""Sentences and quoted strings of a draft paragraph's prose.

A draft is not stored text: its sentences end with citation markers glued
after the punctuation (``water.[1] Next``), abbreviations (Ph.D., e.g.,
U.S.) and decimals do not end a sentence, and a quotation is never cut in
two. Offsets are into the paragraph's prose.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..text.passages import is_abbreviation

__all__ = ["quote_spans", "split_sentences"]

_TERMINATOR = re.compile(r"[.!?…]+|[。！？]+")
_CLOSERS = "\"'”’»)]」』）›"
_CJK_TERMINATORS = "。！？"
# Opening quote -> the characters that close it: English and most languages (“…”,
# ‘…’), German and Czech („…“, ‚…‘), French, Italian, Russian («…», ‹…›), German and
# Danish (»…«, ›…‹), Japanese and Chinese (「…」, 『…』).
_TYPOGRAPHIC = {"“": "”", "„": "“”", "«": "»", "‹": "›", "「": "」", "『": "』", "‘": "’",
                "‚": "‘’", "»": "«", "›": "‹"}
_APOSTROPHES = "’'"  # closers that are also apostrophes: never between two letters
_OPEN_BEFORE = " \t\n([{—–-/\u00a0"
_ELISION = re.compile(r"'\d{2}s?(?![\w.,:])")


def quote_spans(prose: str) -> list[tuple[int, int]]:
    """``(open, close)`` index pairs of quotation marks: the quoted text is
    ``prose[open + 1 : close]``. Typographic quotes pair with their closers (a
    ``’`` between two letters is an apostrophe, not a closer); straight quotes,
    double or single, pair when one can open (at the start, or after a space or
    bracket, before a non-space — a single one not before a cut year: ``'90s``) and
    the next can close (after a non-space, not before a letter or digit)."""
    spans: list[tuple[int, int]] = []
    i = 0
    n = len(prose)
    while i < n:
        char = prose[i]
        close = -1
        if char in _TYPOGRAPHIC:
            close = _typographic_close(prose, char, i + 1)
        elif char in "\"'" and _can_open(prose, i):
            close = _straight_close(prose, char, i + 1)
        if close != -1:
            spans.append((i, close))
            i = close + 1
            continue
        i += 1
    return spans


def _can_open(prose: str, i: int) -> bool:
    if i + 1 >= len(prose) or prose[i + 1].isspace():
        return False
    if prose[i] == "'" and _ELISION.match(prose, i):
        return False  # a year cut short: '90s, in '98
    return i == 0 or prose[i - 1] in _OPEN_BEFORE


def _straight_close(prose: str, char: str, start: int) -> int:
    close = start
    n = len(prose)
    while True:
        close = prose.find(char, close)
        if close == -1:
            return -1
        after = prose[close + 1] if close + 1 < n else " "
        if not prose[close - 1].isspace() and not after.isalnum():
            return close
        close += 1


def _typographic_close(prose: str, opener: str, start: int) -> int:
    closers = _TYPOGRAPHIC[opener]
    at = start
    while True:
        close = _find_any(prose, closers, at)
        if close == -1 or prose[close] not in _APOSTROPHES or not _between_letters(prose, close):
            return close
        at = close + 1


def _between_letters(prose: str, at: int) -> bool:
    return 0 < at < len(prose) - 1 and prose[at - 1].isalpha() and prose[at + 1].isalpha()


def _find_any(text: str, chars: str, start: int) -> int:
    found = [p for p in (text.find(c, start) for c in chars) if p != -1]
    return min(found) if found else -1


def split_sentences(
    prose: str,
    markers: Sequence[tuple[int, int]] = (),
    protected: Sequence[tuple[int, int]] = (),
) -> list[tuple[int, int]]:
    """Sentence spans ``(start, end)`` of a paragraph's prose, whitespace trimmed.

    ``markers`` are the prose spans of citation markers: a run of them right
    after the end punctuation (``water.[1][2] Next``, or ``water. [1] Next``)
    belongs to the sentence before. ``protected`` spans (quotations) are never
    cut inside, except where a terminator closes the quotation itself.
    """
    starts = {start: end for start, end in markers}
    n = len(prose)
    cuts: list[int] = []
    for match in _TERMINATOR.finditer(prose):
        a, b = match.span()
        if _inside(protected, a, b, prose):
            continue
        cjk = prose[a] in _CJK_TERMINATORS
        j = b
        while j < n and prose[j] in _CLOSERS and j not in starts:
            j += 1
        glued = j in starts
        if glued:
            j = _marker_run_end(prose, starts, j)
        else:
            k = j
            while k < n and prose[k] in " \t":
                k += 1
            if k > j and k in starts:
                run_end = _marker_run_end(prose, starts, k)
                if _opens_sentence(prose, run_end, cjk=False):
                    j = run_end
        if not _opens_sentence(prose, j, cjk=cjk):
            continue
        if prose[a:b] == "." and not glued and is_abbreviation(prose, a):
            continue
        cuts.append(j)
    spans: list[tuple[int, int]] = []
    begin = 0
    for cut in [*cuts, n]:
        start, end = begin, cut
        while start < end and prose[start].isspace():
            start += 1
        while end > start and prose[end - 1].isspace():
            end -= 1
        if start < end:
            spans.append((start, end))
        begin = cut
    return spans


def _inside(protected: Sequence[tuple[int, int]], a: int, b: int, prose: str) -> bool:
    """Is the terminator ``prose[a:b]`` inside a quotation (and not closing it)?"""
    for open_at, close_at in protected:
        if open_at < a < close_at:
            return b != close_at  # "…boils." closes the quotation: a sentence may end
    return False


def _marker_run_end(prose: str, starts: dict[int, int], at: int) -> int:
    """End of the run of markers starting at ``at`` (glued or space-separated)."""
    end = starts[at]
    while True:
        k = end
        while k < len(prose) and prose[k] in " \t":
            k += 1
        if k in starts:
            end = starts[k]
        else:
            return end


def _opens_sentence(prose: str, at: int, *, cjk: bool) -> bool:
    """Does a new sentence (or the end of the paragraph) follow position ``at``?"""
    n = len(prose)
    if at >= n:
        return True
    if cjk:
        return True
    if not prose[at].isspace():
        return False
    k = at
    while k < n and prose[k].isspace():
        k += 1
    if k >= n:
        return True
    following = prose[k]
    return not (following.islower() or following in ",;:)")
