"""Every occurrence of a set of strings in a text, in one pass (Aho-Corasick): what
secret scrubbing (:mod:`fetchledger.identity.secrets`) replaces, however many
secrets there are."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache

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
        found = [span for form in self._long for span in _occurrences(text, form)]
        if self._empty and not found:
            return []
        for end, size in ([] if self._empty else self._automaton.iter(text)):
            start, stop = end - size + 1, end + 1
            if size < _ANYWHERE and ((start > 0 and (self._alnum(text[start - 1])
                                                     or _mark_ends(text, start - 1)))
                                     or (stop < len(text) and (self._alnum(text[stop])
                                                               or _mark_starts(text, stop)))):
                continue
            found.append((start, stop))
        found.sort(key=lambda span: (span[0], -span[1]))
        chosen: list[tuple[int, int]] = []
        for start, stop in found:
            if not chosen or start >= chosen[-1][1]:
                chosen.append((start, stop))
        return chosen

    def sub(self, text: str, replacement: Callable[[str], str]) -> str:
        pieces: list[str] = []
        last = 0
        for start, stop in self.spans(text):
            pieces.extend((text[last:start], replacement(text[start:stop])))
            last = stop
        pieces.append(text[last:])
        return "".join(pieces) if last else text


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

