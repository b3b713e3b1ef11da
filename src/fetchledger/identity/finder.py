"""Every occurrence of a set of strings in a text, in one pass (Aho-Corasick): what
secret scrubbing (:mod:`fetchledger.identity.secrets`) replaces, however many
secrets there are."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache
from itertools import chain, islice
from operator import itemgetter, le

import ahocorasick

__all__ = ["Finder", "finder"]

# Shorter values are replaced only where they stand as a whole word (not inside a
# longer run of letters and digits), so a three-letter password does not eat every
# word that holds those letters.
_ANYWHERE = 8
# pyahocorasick frees its trie recursively: a string of some 600,000 characters
# overflows the C stack and kills the process (a segfault when the automaton is
# collected). Longer strings are found with str.find (linear: two-way search), each
# on its own; there are few of them, since every one is as long as this.
_AUTOMATON_MAX = 4096


def _ascii_alnum(char: str) -> bool:
    return char.isascii() and char.isalnum()


class Finder:
    """Every occurrence of a set of strings in a text, found in one pass however many
    strings there are (Aho-Corasick): leftmost first, the longest at a place, never
    overlapping; a string under eight characters only where it stands alone (no
    letter or digit on either side: ASCII ones for bytes read as Latin-1)."""

    def __init__(self, forms: Iterable[str], *, ascii_words: bool = False) -> None:
        self._automaton = ahocorasick.Automaton()
        self._long: list[str] = []
        for form in forms:
            if len(form) > _AUTOMATON_MAX:
                self._long.append(form)
            elif form:
                self._automaton.add_word(form, len(form))
        self._empty = len(self._automaton) == 0
        if not self._empty:
            self._automaton.make_automaton()
        self._alnum: Callable[[str], bool] = _ascii_alnum if ascii_words else str.isalnum

    def spans(self, text: str) -> list[tuple[int, int]]:
        found = self._found(text)
        if not found:
            return []
        found.sort(key=_STOP, reverse=True)  # (by start, the longest first: stable sorts)
        found.sort(key=_START)
        if all(map(le, map(_STOP, found), map(_START, islice(found, 1, None)))):
            return found  # (mostly: none overlaps)
        chosen: list[tuple[int, int]] = []
        for start, stop in found:
            if not chosen or start >= chosen[-1][1]:
                chosen.append((start, stop))
        return chosen

    def _found(self, text: str) -> list[tuple[int, int]]:
        """Every occurrence (the short ones standing alone), unsorted, maybe overlapping."""
        found = [span for form in self._long for span in _occurrences(text, form)]
        if self._empty:
            return found
        alnum, last, add = self._alnum, len(text) - 1, found.append
        for end, size in self._automaton.iter(text):
            start = end - size + 1
            if size < _ANYWHERE and ((start and (alnum(text[start - 1])
                                                 or _mark_ends(text, start - 1)))
                                     or (end < last and (alnum(text[end + 1])
                                                         or _mark_starts(text, end + 1)))):
                continue
            add((start, end + 1))
        return found

    def sub(self, text: str, replacement: Callable[[str], str],
            many: Callable[[list[str]], list[str]] | None = None) -> str:
        """``text`` with each occurrence replaced by ``replacement`` of it (``many``:
        the replacements of all of them at once, in order)."""
        spans = self.spans(text)
        if not spans:
            return text
        cuts = [0, *chain.from_iterable(spans), len(text)]
        kept = list(map(text.__getitem__, map(slice, cuts[0::2], cuts[1::2])))
        hits = list(map(text.__getitem__, map(slice, cuts[1:-1:2], cuts[2:-1:2])))
        replaced = many(hits) if many is not None else list(map(replacement, hits))
        return "".join(chain.from_iterable(zip(kept, replaced, strict=False))) + kept[-1]


_START, _STOP = itemgetter(0), itemgetter(1)


# A value recorded while a command line is redacted once for two marks stands in the
# text as NUL, \x03, a private-use character, NUL (recorder.Recorder); every
# mark it becomes starts and ends with a letter or digit, so its NULs count as ones.
def _mark_starts(text: str, index: int) -> bool:
    return text[index] == "\0" and text.startswith("\x03", index + 1)


def _mark_ends(text: str, index: int) -> bool:
    return text[index] == "\0" and index > 0 and "\U000f0000" <= text[index - 1] <= "\U0010ffff"


def _occurrences(text: str, form: str) -> Iterable[tuple[int, int]]:
    at = text.find(form)
    while at >= 0:
        yield at, at + len(form)
        at = text.find(form, at + len(form))


@lru_cache(maxsize=64)
def finder(forms: tuple[str, ...], *, ascii_words: bool = False) -> Finder:
    return Finder(forms, ascii_words=ascii_words)

