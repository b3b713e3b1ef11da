"""The mark that records (DESIGN §8): a command line is redacted once, with a
:class:`Recorder` as the mark, and rendered with each real mark (``REDACTED`` for its
display, keyed marks for its identity), for
:mod:`fetchledger.identity.command_secrets`."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Collection, Sequence
from itertools import filterfalse
from typing import cast

from .secrets import REDACTED, Mark, plain_mark

__all__ = ["MAX_NESTING", "WORD_BREAK", "Recorder", "Unrendered", "redacted_each"]

MAX_NESTING = 4  # sh -c "bash -c '...'" levels redacted word by word

# --- one pass of the rules for every mark ----------------------------------------------
#
# A command's display (REDACTED), identity (keyed marks) and secrets are one redaction
# rendered with two marks. The rules run once with a Recorder as the mark: each value
# becomes a slot that no rule can take for a secret (NUL, a control character and a
# private-use character, NUL: a secret holds no NUL, and none is so short and bare),
# and each word a script has to quote is wrapped, since its quoting depends on the mark.

WORD_BREAK = "\0\x06\0"
_OPEN, _CLOSE = "\0\x01\0", "\0\x02\0"  # a word to shell-quote once its marks are in
_SLOT = re.compile("\0\x03([\U000f0000-\U0010ffff])\0")
_SLOTS = 0x10FFFF - 0xF0000
# What shlex.quote quotes, outside slots: a private-use character or \x03 not in a slot
# counts too (the input may hold them; a slot is NUL, \x03, one of them, NUL).
_UNSAFE_OUTSIDE_SLOTS = re.compile("[^\\w@%+=:,./\\-\0\x03\U000f0000-\U0010ffff]"
                                   "|(?<!\0)\x03|(?<!\x03)[\U000f0000-\U0010ffff]"
                                   "|(?<![\U000f0000-\U0010ffff])\0(?!\x03)",
                                   re.ASCII).search
# A word of safe characters and whole slots only (most a script quotes: `TOKEN=<slot>`),
# in which _UNSAFE_OUTSIDE_SLOTS finds nothing: asked first, a simpler pattern
_SAFE_WITH_SLOTS = re.compile("(?:[\\w@%+=:,./\\-]|\0\x03[\U000f0000-\U0010ffff]\0)*",
                              re.ASCII).fullmatch
_QUOTE_WRAPPED = re.compile("\0\x01\0([^\0]*)\0\x02\0")
# A word whose quoting only its marks decide (the rest is safe, no script inside)
_OPEN_PLAIN, _CLOSE_PLAIN = "\0\x07\0", "\0\x08\0"
_PLAIN_WRAPPED = re.compile("\0\x07\0([^\0]*)\0\x08\0")
_UNSAFE = re.compile(r"[^\w@%+=:,./-]", re.ASCII).search  # what shlex.quote quotes


def _unsafe_outside_slots(word: str) -> object:
    """:data:`_UNSAFE_OUTSIDE_SLOTS` of ``word``, None at once for a word of safe
    characters and whole slots (``SAFE_FIRST`` off: the pattern alone, tests compare)."""
    if SAFE_FIRST and _SAFE_WITH_SLOTS(word) is not None:
        return None
    return _UNSAFE_OUTSIDE_SLOTS(word)


SAFE_FIRST = True


class Unrendered(Exception):
    """A recorded value that did not render: the caller runs the rules again."""


class Recorder:
    """A mark that records the values it is given (see above); :meth:`render` then puts
    any mark in their places."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self._slots: dict[str, str] = {}

    def __call__(self, value: str) -> str:
        slot = self._slots.get(value)
        if slot is None:  # NUL, a private-use character that numbers the value, NUL
            if len(self.values) >= _SLOTS:
                raise Unrendered  # more distinct values than slots: the rules run per mark
            slot = self._slots[value] = f"\0\x03{chr(0xF0000 + len(self.values))}\0"
            self.values.append(value)
        return slot

    def record_many(self, values: Sequence[str]) -> list[str]:
        """The slots of ``values``, as one call each in turn gives them (in C: no call,
        no look-up in Python for each value of a run of commands, :mod:`.runs`)."""
        slots = self._slots
        new = list(filterfalse(slots.__contains__, dict.fromkeys(values)))
        if new:
            if len(self.values) + len(new) > _SLOTS:
                raise Unrendered  # more distinct values than slots (as one by one)
            first = 0xF0000 + len(self.values)
            slots.update(zip(new, [f"\0\x03{slot}\0" for slot in map(
                chr, range(first, first + len(new)))], strict=True))
            self.values.extend(new)
        return list(map(slots.__getitem__, values))

    @staticmethod
    def quote(word: str) -> str:
        """``word`` shell-quoted as :func:`shlex.quote` will quote it once its marks are
        in: now, when the rest of it needs quotes anyway (a mark holds no quote);
        else wrapped, to be quoted (or not) by :meth:`render`."""
        if _OPEN in word or _OPEN_PLAIN in word:  # a script inside: quoted last
            return _OPEN + word + _CLOSE
        if not word:
            return "''"
        if _UNSAFE_OUTSIDE_SLOTS(word):
            return "'" + word.replace("'", "'\"'\"'") + "'"
        if "\0\x03" not in word:  # no mark in it: as shlex.quote leaves a safe word
            return word
        return _OPEN_PLAIN + word + _CLOSE_PLAIN  # quoted iff a mark in it needs quotes

    @staticmethod
    def quote_many(words: Sequence[str]) -> list[str]:
        """:meth:`quote` of each of ``words`` (the pattern run in C over them all)."""
        joined = "".join(words)
        if _OPEN in joined or _OPEN_PLAIN in joined:
            return list(map(Recorder.quote, words))
        return ["''" if not word else "'" + word.replace("'", "'\"'\"'") + "'" if unsafe
                else word if "\0\x03" not in word else _OPEN_PLAIN + word + _CLOSE_PLAIN
                for word, unsafe in zip(words, map(_unsafe_outside_slots, words), strict=True)]

    def render(self, text: str, mark: Mark) -> str | None:
        """``text`` with each slot as ``mark`` of its value (a value holding slots is
        rendered first) and each wrapped word shell-quoted; None if anything is left
        that is not what a rule wrote (the caller then runs the rules with ``mark``)."""
        if "\0" not in text:
            return text
        if mark is plain_mark:  # REDACTED: no word with it needs quotes for it
            # (a split with the wrapped word as its group: outside, word, outside, ...)
            text = "".join(_PLAIN_WRAPPED.split(_SLOT.sub(REDACTED, text)))
        else:  # split at the slots: text, slot, text, ...; one mark per distinct value
            parts = _SLOT.split(text)
            slots = parts[1::2]
            distinct: Collection[str] = set(slots)
            recorded = self.values
            if len(distinct) == len(recorded):  # (mostly: every value recorded is here)
                distinct, values = list(map(chr, range(0xF0000, 0xF0000 + len(recorded)))), recorded
            else:
                values = [recorded[index - 0xF0000] for index in map(ord, distinct)]
            if "\0" in "".join(values):
                inner = [self.render(value, mark) if "\0" in value else value
                         for value in values]
                if None in inner:
                    return None
                values = cast(list[str], inner)
            many = getattr(mark, "many", None)  # (a keyed mark: all in one loop)
            marks = dict(zip(distinct, many(values) if many else map(mark, values),
                             strict=True))
            parts[1::2] = map(marks.__getitem__, slots)
            text = "".join(parts)
            # (a `~` is one of what _UNSAFE finds: each keyed mark needs quotes)
            if _OPEN_PLAIN in text and all(map(_UNSAFE, marks.values())):
                text = "'".join(_PLAIN_WRAPPED.split(text))  # each has a mark: each quoted
            elif _OPEN_PLAIN in text:
                text = _PLAIN_WRAPPED.sub(lambda m: shlex.quote(m.group(1)), text)
        quoted: dict[str, str] = {}

        def quote(match: re.Match[str]) -> str:
            word = match.group(1)
            done = quoted.get(word)
            if done is None:
                done = quoted[word] = shlex.quote(word)
            return done

        for _ in range(MAX_NESTING + 2):  # innermost first: a script inside a script
            if _OPEN not in text:
                break
            text = _QUOTE_WRAPPED.sub(quote, text)
        return None if "\0" in text.replace(WORD_BREAK, "") else text

    def render_words(self, words: Sequence[str], mark: Mark) -> list[str] | None:
        joined = self.render(WORD_BREAK.join(words), mark)
        return None if joined is None else joined.split(WORD_BREAK)


def redacted_each(redact: Callable[[Mark, list[str]], list[str]], marks: Sequence[Mark],
          secrets: list[str] | None, *, recordable: bool = True) -> list[list[str]]:
    """``redact`` (a redaction appending the values it finds) rendered with each mark:
    run once with a :class:`Recorder`; run per mark when the input holds a NUL (a slot's
    first character) or that fails (more distinct values than slots, a value that does
    not render)."""
    found = secrets if secrets is not None else []
    recorder = Recorder()
    recorded: list[str] = []
    try:
        if not recordable:
            raise Unrendered
        words = redact(recorder, recorded)
        each = [recorder.render_words(words, mark) for mark in marks]
        values: list[str | None] = list(recorded) if "\0" not in "".join(recorded) else [
            recorder.render(value, plain_mark) for value in recorded]
    except Unrendered:
        each, values = [None], [None]
    rendered = [words for words in each if words is not None]
    shown = [value for value in values if value is not None]
    if len(rendered) < len(marks) or len(shown) < len(values):
        shown = []
        redact(plain_mark, shown)
        rendered = [redact(mark, []) for mark in marks]
    found.extend(shown)
    return rendered
