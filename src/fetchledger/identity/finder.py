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
        self._forms: list[str] = []
        for form in forms:
            if len(form) > _AUTOMATON_MAX:
                self._long.append(form)
            elif form:
                self._automaton.add_word(form, len(form))
                self._forms.append(form)
        self._empty = len(self._automaton) == 0
        if not self._empty:
            self._automaton.make_automaton()
        self._alnum: Callable[[str], bool] = _ascii_alnum if ascii_words else str.isalnum
        self._split: tuple[ahocorasick.Automaton, ahocorasick.Automaton | None] | None = None

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
        split = self._words() if WHOLE_WORDS and len(text) >= _LONG_TEXT \
            and text.isascii() and "\0\x03" not in text else None
        if split is not None:
            words, rest = split
            if rest is not None:
                self._hits(rest, text, found)
            # each short value of letters and digits as a whole word of the text: between
            # two of what is no letter or digit, each made \x01 (a C-level translation)
            bounded = f"\x01{text.translate(_NOT_ALNUM)}\x01"
            found.extend([(end - 1 - size, end - 1) for end, size in words.iter(bounded)])
            return found
        self._hits(self._automaton, text, found)
        return found

    def _words(self) -> tuple[ahocorasick.Automaton, ahocorasick.Automaton | None] | None:
        """An automaton of the short forms of ASCII letters and digits, each between two
        \x01, and one of the others (None without any), made on first use; None when
        there are few short forms (the one automaton's hits are few then)."""
        if self._split is None:
            forms = [form for form in self._forms if form]
            words = [form for form in forms
                     if len(form) < _ANYWHERE and form.isascii() and form.isalnum()]
            if len(words) < _MANY_WORDS:
                self._split = (_NO_WORDS, None)
                return None
            chosen = set(words)
            others = [form for form in forms if form not in chosen]
            bounded = ahocorasick.Automaton()
            for form in chosen:
                bounded.add_word(f"\x01{form}\x01", len(form))
            bounded.make_automaton()
            rest = None
            if others:
                rest = ahocorasick.Automaton()
                for form in others:
                    rest.add_word(form, len(form))
                rest.make_automaton()
            self._split = (bounded, rest)
        return None if self._split[0] is _NO_WORDS else self._split

    def _hits(self, automaton: ahocorasick.Automaton, text: str,
              found: list[tuple[int, int]]) -> None:
        """The hits of ``automaton`` in ``text`` appended to ``found``, a short form's only
        where it stands alone."""
        alnum, last, add = self._alnum, len(text) - 1, found.append
        for end, size in automaton.iter(text):
            start = end - size + 1
            if size < _ANYWHERE and ((start and (alnum(text[start - 1])
                                                 or _mark_ends(text, start - 1)))
                                     or (end < last and (alnum(text[end + 1])
                                                         or _mark_starts(text, end + 1)))):
                continue
            add((start, end + 1))

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

# Short values of letters and digits found as whole words of an ASCII text (an automaton
# of them between two \x01 over the text with each other character made \x01: no hit for
# each of the values a longer word begins with, `v1` and `v12` in `v123`) when there are
# this many of them and the text is this long (tests turn WHOLE_WORDS off to compare)
WHOLE_WORDS = True
_MANY_WORDS = 16
_LONG_TEXT = 4096
_NOT_ALNUM = {code: 1 for code in range(128) if not chr(code).isalnum()}
_NO_WORDS = ahocorasick.Automaton()


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

