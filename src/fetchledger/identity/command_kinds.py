"""Commands of one kind in a long script (DESIGN §8), for
:mod:`fetchledger.identity.command_secrets`: the commands of a script that differ only
in the digits of the values the rules mark (``mysql -pp000001 db``, ``mysql -pp000002
db``; ``curl -d '{"token": "v1"}' u``, ``curl -d '{"token": "v2"}' u``) are redacted
alike, so the rules run for the first of them and the others take what it gave, their
own values in their places.

The first command of a kind (its words with each digit but 0 as 1) is a template when
each word it changed is the word with values marked in their places (each a value
recorded by the :class:`.Recorder`, shown in the text as written around it), and
each value found that holds a digit stands once, as written, in its words. A later
command of the kind takes it only when it differs from the first *inside the marked
values* alone (every other character the same), and then gets its words, its own
values marked, and the values found at the same places. What this takes for granted:
that whether and how the rules mark a value does not depend on which digits other
than 0 it holds, as they decide by names, places, lengths and kinds of characters —
but where a digit's value can matter, left out: a script holding a ``%`` or a
backslash (escapes), the start of a token's format (``r8_``, ``ya29.``:
:func:`.shapes.may_hold_shapes`), or a word the rules name holding a digit (``7z``:
``special``); a 0 stays a 0 (``0x…`` is a hex word, ``1x…`` may be a token). Tests
compare this with the rules on generated scripts (``tests/test_redaction_fast_paths.py``).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Collection, Sequence
from collections.abc import Set as AbstractSet
from functools import partial
from itertools import accumulate
from typing import cast

from .recorder import WORD_BREAK, Recorder
from .runs import LEAST, Runs, digit_run
from .secrets import Mark
from .shapes import may_hold_shapes, redact_shapes

__all__ = ["ENABLED", "HOLE", "BareTemplate", "DigitKinds", "DigitTemplate", "bare_template",
           "by_digits", "digit_kinds", "digit_template", "masked", "redactor"]

ENABLED = True  # (tests turn it off to compare with the rules)
SINGLE = True  # by_digits's way for one value per marked word (tests compare)

_DIGITS = str.maketrans("23456789", "11111111")  # (a 0 stays: 0x1f is no 1x1f)
_HAS_DIGIT = re.compile("[0-9]").search
_SLOT = re.compile("\0\x03([\U000f0000-\U0010ffff])\0")
_FIRST_SLOT = 0xF0000

# (the words the rules rewrote otherwise: index, word, what it became), (each word with
# marked values: index, and the start, end and mark (its place in the next list) of each
# value in it), (the values' places in the order the first command recorded them: index,
# start, end), (each value found: as it is, or its place: index, start, end), the first
# command's words, and when each marked word holds one value: the other words' places and
# words, and each marked word's place, value's span and mark, and text around it
DigitTemplate = tuple[list[tuple[int, str, str]],
                      list[tuple[int, tuple[tuple[int, int, int], ...]]],
                      list[tuple[int, int, int]], list[str | tuple[int, int, int]], list[str],
                      tuple[list[int], list[str],
                            list[tuple[int, int, int, int, str, str]]] | None]


def masked(word: str) -> str:
    """``word`` with each ASCII digit but 0 as ``1``."""
    return word.translate(_DIGITS)


def digit_kinds(values: Sequence[str], special: AbstractSet[str]) -> list[str] | None:
    """``values`` (a script's words) with each digit as ``0``, or None when a digit may
    matter to a rule in them: a ``%`` or backslash, the start of a token's format, a
    word of ``special`` (masked: the words the rules name that hold a digit) or a path
    ending in one."""
    joined = "\0".join(values)
    if "%" in joined or "\\" in joined or joined.count("\0") != len(values) - 1 \
            or may_hold_shapes(joined):
        return None
    kinds = masked(joined).split("\0")
    distinct = set(kinds)
    if not special.isdisjoint(distinct) or not special.isdisjoint(
            [word.rsplit("/", 1)[-1] for word in distinct if "/" in word]):
        return None
    return kinds


def digit_template(words: Sequence[str], redacted: Sequence[str], found: Sequence[str],
                   recorder: Recorder, recorded: int) -> DigitTemplate | None:
    """How the commands of ``words``' kind are redacted, from it (redacted as
    ``redacted``, the values ``found``, ``recorder`` holding ``recorded`` values before
    it); None when it cannot say (see the module's docstring)."""
    rewritten: list[tuple[int, str, str]] = []
    spanned: list[tuple[int, list[tuple[int, int, str]]]] = []
    places: dict[str, tuple[int, int, int]] = {}  # slot character → its value's place
    values = recorder.values
    for j, (word, clean) in enumerate(zip(words, redacted, strict=True)):
        if clean == word:
            continue
        parts = _SLOT.split(clean)  # text, slot, text, slot, ..., text
        texts, slots = parts[0::2], parts[1::2]
        inside = [values[ord(slot) - _FIRST_SLOT] for slot in slots]
        written = [piece for pair in zip(texts, [*inside, ""], strict=True) for piece in pair]
        if not slots or "\0" in "".join(texts) or "\0" in "".join(inside) \
                or "".join(written) != word:
            rewritten.append((j, word, clean))  # (a later one takes it only as it is)
            continue
        ends = list(accumulate(map(len, written)))  # value k: ends[2k] to ends[2k + 1]
        spans = [(ends[2 * k], ends[2 * k + 1], slot) for k, slot in enumerate(slots)]
        for start, end, slot in spans:
            if slot in places:  # one value in two places: which is which in another?
                return None
            places[slot] = (j, start, end)
        spanned.append((j, spans))
    if any(_HAS_DIGIT(word) for _, word, _ in rewritten):
        return None  # (a word rewritten otherwise, with digits: the others seldom the same)
    # the values are marked in the order they stand (as the rules mark them: those the
    # first one recorded anew did so in that order, or it makes no template)
    order = sorted(places.values())
    new = [places[slot] for slot in map(chr, range(_FIRST_SLOT + recorded,
                                                    _FIRST_SLOT + len(values))) if slot in places]
    if new != sorted(new):
        return None
    index = {place: k for k, place in enumerate(order)}
    marked = [(j, tuple((start, end, index[j, start, end]) for start, end, _ in spans))
              for j, spans in spanned]
    joined = "\0".join(words)
    starts = [0, *accumulate(len(word) + 1 for word in words)]
    marked_at = [(starts[j] + low, starts[j] + high) for j, low, high in order]
    taken: list[str | tuple[int, int, int]] = []
    for value in found:
        if not _HAS_DIGIT(value):
            taken.append(value)
            continue
        at = joined.find(value)
        if at < 0 or joined.find(value, at + 1) >= 0:
            return None  # (made from the words, or in two places)
        if not any(low < at + len(value) and at < high for low, high in marked_at):
            taken.append(value)  # (outside the marked values: the same in the others)
            continue
        j = bisect_right(starts, at) - 1
        taken.append((j, at - starts[j], at - starts[j] + len(value)))
    single = None  # (each word with one marked value, and the others: the usual case)
    if all(len(spans) == 1 for _, spans in marked):
        spanned_at = {j for j, _ in marked}
        others = [j for j in range(len(words)) if j not in spanned_at]
        single = (others, [words[j] for j in others],
                  [(j, start, end, k, words[j][:start], words[j][end:])
                   for j, ((start, end, k),) in marked])
    return rewritten, marked, order, taken, list(words), single


def by_digits(template: DigitTemplate, words: Sequence[str], found: list[str],
              recorder: Recorder) -> list[str] | None:
    """``words`` redacted by ``template`` (its values found appended to ``found``), or
    None when they differ from its kind's first command outside the values it marked."""
    rewritten, marked, order, taken, first, single = template
    if single is not None and SINGLE:  # the same checks and words, without the copies
        others, expected, spans1 = single  # (one kind: as many words, each as long)
        if len(words) != len(first) or list(map(words.__getitem__, others)) != expected:
            return None
        for j, start, end, _, before, after in spans1:
            word = words[j]
            if len(word) != len(first[j]) or word[:start] != before or word[end:] != after:
                return None
        out = list(words)
        for j, _, clean in rewritten:
            out[j] = clean
        marks = [recorder(words[j][start:end]) for j, start, end in order]
        for j, _, _, k, before, after in spans1:
            out[j] = before + marks[k] + after
        found.extend([value if isinstance(value, str) else words[value[0]][value[1]:value[2]]
                      for value in taken])
        return out
    same = list(words)  # the words with the first one's values: its words, or not alike
    for j, spans in marked:
        word, before = words[j], first[j]
        if len(spans) == 1:  # (mostly)
            start, end, _ = spans[0]
            same[j] = word[:start] + before[start:end] + word[end:]
            continue
        pieces: list[str] = []
        last = 0
        for start, end, _ in spans:
            pieces.extend((word[last:start], before[start:end]))
            last = end
        pieces.append(word[last:])
        same[j] = "".join(pieces)
    if same != first:
        return None
    out = list(words)
    for j, _, clean in rewritten:
        out[j] = clean
    marks = [recorder(words[j][start:end]) for j, start, end in order]
    for j, spans in marked:
        word = words[j]
        if len(spans) == 1:  # (mostly)
            start, end, k = spans[0]
            out[j] = word[:start] + marks[k] + word[end:]
            continue
        pieces = []
        last = 0
        for start, end, k in spans:
            pieces.append(word[last:start])
            pieces.append(marks[k])
            last = end
        pieces.append(word[last:])
        out[j] = "".join(pieces)
    found.extend([value if isinstance(value, str) else words[value[0]][value[1]:value[2]]
                  for value in taken])
    return out



_UNSEEN = object()
HOLE = object()  # a bare value's place in a command's kind (command_secrets._plan)
# How the commands of one kind are redacted: the words of the first (its bare values'
# places aside), where each bare value stands (and whether it is marked), the
# values found: (index of a bare value or -1, what follows it), and when the rules
# changed no other word: the places of the marked bare values
BareTemplate = tuple[list[str], list[tuple[int, bool]], list[tuple[int, tuple[str, ...]]],
                     list[int] | None]


def bare_template(words: Sequence[str], key: tuple[object, ...], redacted: list[str],
                  found: list[str], start: int, ends: list[int], mark: Callable[[str], str],
                  placed_words: AbstractSet[str]) -> BareTemplate | None:
    """How the commands of ``key``'s kind are redacted, from the first of them (``words``,
    redacted as ``redacted``, its values ``found[start:]``, each word's ending at
    ``ends``); None when a word named by place is in it (of ``placed_words``, or ending
    in ``:`` or ``=``), or when a bare value came out
    other than as itself (nothing found) or as its mark (itself found, and "" after it
    for an option's value: its cookies' values)."""
    literal = [word for word in key if isinstance(word, str)]  # (the rest: holes)
    if not placed_words.isdisjoint(literal) or any(
            word[-1:] in (":", "=") or word.rsplit("/", 1)[-1] in placed_words
            for word in literal):
        return None
    bare: list[tuple[int, bool]] = []
    values_found: list[tuple[int, tuple[str, ...]]] = []
    last = start
    for j, end in enumerate(ends):
        seen = found[last:end]
        last = end
        if key[j] is not HOLE:
            if seen:
                values_found.append((-1, tuple(seen)))
            continue
        word = words[j]
        if redacted[j] == word and not seen:
            bare.append((j, False))
        elif redacted[j] == mark(word) and seen in ([word], [word, ""]):
            bare.append((j, True))
            values_found.append((j, tuple(seen[1:])))
        else:
            return None
    unchanged = all(redacted[j] == words[j] for j, word in enumerate(key) if word is not HOLE)
    return redacted, bare, values_found, [j for j, marked in bare if marked] if unchanged else None




class DigitKinds:
    """The simple commands of one script by their kinds (their words with each digit as
    0, found at the first look): the first of a kind through the rules, the others by
    its template when it has one. No more templates are made once many kinds came only
    once (the commands of such a script seldom come again)."""

    def __init__(self, values: Sequence[str], recorder: Recorder, special: AbstractSet[str],
                 few: int, found: list[str], rules: Callable[[Sequence[str]], list[str]]
                 ) -> None:
        self._values = values
        self._found = found
        self._rules = rules
        self._special = special
        self._kinds: list[str] | object | None = _UNSEEN
        self._recorder = recorder
        self._few = few
        self._first: dict[tuple[str, ...], DigitTemplate | None] = {}
        self._alike = self._tries = self._signed = 0
        self._signs: dict[tuple[str, ...], str] = {}

    def redact(self, words: Sequence[str], begin: int, end: int) -> list[str]:
        """``words`` (the script's words ``begin`` to ``end``: one simple command)
        redacted, its values appended to ``found``: by its kind's template, or by the
        rules (then it may become its kind's template)."""
        found, rules = self._found, self._rules
        if self._kinds is _UNSEEN:  # the kinds are found once a command makes a template
            recorded, at = len(self._recorder.values), len(found)
            shown = rules(words)
            template = digit_template(words, shown, found[at:], self._recorder, recorded)
            self._tries += 1
            if template is not None:
                self._kinds = digit_kinds(self._values, self._special)
                if self._kinds is not None:
                    self._first[tuple(self._kinds[begin:end])] = template
            elif self._tries > self._few:
                self._kinds = None
            return shown
        if self._kinds is None:
            return rules(words)
        kind = tuple(cast(list[str], self._kinds)[begin:end])
        first = self._first.get(kind, _UNSEEN)
        if isinstance(first, tuple):
            alike = by_digits(first, words, found, self._recorder)
            if alike is not None:
                self._alike += 1
                return alike
        recorded, at = len(self._recorder.values), len(found)
        shown = rules(words)
        if first is _UNSEEN and len(self._first) <= max(self._few, 2 * self._alike):
            self._first[kind] = digit_template(words, shown, found[at:], self._recorder,
                                               recorded)
        return shown


    def run(self, runs: Runs, i: int, begin: int, n: int, cleans: list[str]) -> int:
        """The commands from ``runs``' ``rich[i]`` on (its words from ``begin``, ``n`` of
        them) that stand in a run of its kind and that its template takes (:func:`by_digits`),
        redacted into ``cleans`` at once (:func:`.runs.digit_run`); how many (0: none,
        or too few to be worth it)."""
        kinds = self._kinds
        if not isinstance(kinds, list) or not SINGLE:
            return 0
        kind = tuple(kinds[begin:begin + n])
        first = self._first.get(kind)
        if not isinstance(first, tuple) or first[5] is None:
            return 0
        if self._signed != len(self._first):  # each kind's template, told apart but for
            self._signs = {kind: repr(template[:4] + template[5:])  # its first's words
                           for kind, template in self._first.items()
                           if isinstance(template, tuple) and template[5] is not None}
            self._signed = len(self._first)
        # (kinds of one template but for their first's words: those whose 0s stand
        # elsewhere in their values, p000010 beside p000001, redacted alike)
        k = runs.length_of_kinds(i, kinds, self._signs, self._signs[kind])
        if k < LEAST:
            return 0
        k = digit_run(first, runs.values, cleans, self._found, self._recorder, begin, n, k)
        self._alike += k
        return k


def redactor(values: Sequence[str], mark: object, found: list[str],
             rules: Callable[..., list[str]], depth: int, *, special: AbstractSet[str],
             few: int) -> DigitKinds | None:
    """How a simple command of a script (its words, where they stand in its ``values``)
    is redacted by its kind, in a script (of many commands) whose marks are recorded
    (:class:`DigitKinds`, ``special`` and ``few`` as there; ``rules(words, found, mark,
    depth, shapes=False)`` for the others); None elsewhere (then by the rules)."""
    if not ENABLED or not isinstance(mark, Recorder):
        return None
    return DigitKinds(values, mark, special, few, found, partial(
        rules, found=found, mark=mark, depth=depth, shapes=False))


def shapes_marked(words: list[str], found: list[str], mark: Mark,
                   done: Collection[int]) -> list[str]:
    """``words`` with the tokens and webhook secrets (:mod:`.shapes`) still in them
    marked, but for those at ``done``: one pass over all of them (a token holds no NUL,
    the words' separator)."""
    chosen = [i for i in range(len(words)) if i not in done] if done else range(len(words))
    joined = WORD_BREAK.join(words[i] for i in chosen)
    if not may_hold_shapes(joined):
        return words
    if joined.count(WORD_BREAK) != len(chosen) - 1:
        marked = [redact_shapes(words[i], found, mark) for i in chosen]
    else:
        marked = redact_shapes(joined, found, mark).split(WORD_BREAK)
    out = list(words)
    for i, word in zip(chosen, marked, strict=True):
        out[i] = word
    return out
