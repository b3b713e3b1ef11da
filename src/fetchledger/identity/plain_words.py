"""The words of a long script's commands of no special word (DESIGN §8), for
:mod:`fetchledger.identity.command_secrets`: thousands of ``export TOKEN=V`` or
``A_TOKEN=V cmd``, each redacted as its rules redact it, the assignment rule's pattern
run in C over all of them at once and what a word makes of the next one asked once per
distinct word (tests compare with the word-by-word way)."""

from __future__ import annotations

import operator
import re
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Collection, Sequence
from itertools import compress, groupby, repeat
from typing import cast

from .recorder import MAX_NESTING, Recorder
from .secrets import Mark, is_secret_name

__all__ = ["memo_after_options", "no_words", "plain_run"]


def plain_run(values: Sequence[str], need: Sequence[int], first: Collection[int],
              cleans: list[str], found: list[str], mark: Mark, assignment: re.Pattern[str],
              names_next: Callable[[str], bool],
              by_the_rules: Callable[[str, str | None, list[str], Mark, int, bool], str],
              depth: int) -> Callable[[int, int], int]:
    """``run(at, stop)``: the words ``values[need[at]]``, ... of commands of no special
    word (a script's words; ``first``: where its commands start) below ``stop``
    redacted into ``cleans``, the values found appended to ``found``; the next ``at``.
    A word ``NAME=V`` of ``assignment``, NAME secret-like, not ``-u…`` and not after a
    word that ``names_next`` a secret, is ``NAME=`` and the mark of V (V found); any
    other goes ``by_the_rules`` (the word, the one before it in its command, ``found``,
    ``mark``, ``depth`` and whether a script in it is read)."""
    if len(need) == 1:  # (only the end: no such word)
        return no_words
    nested = depth < MAX_NESTING
    inside = bisect_left(need, len(values))  # (the word after a last option is no word)
    matches = [*map(assignment.fullmatch, map(values.__getitem__, need[:inside])),
               *[None] * (len(need) - inside)]
    names: dict[str, bool] = {}  # whether a word makes the next one a secret

    def run(at: int, stop: int) -> int:
        end = bisect_left(need, stop, at)
        if not AT_ONCE or end - at <= _FEW:
            return one_by_one(at, stop)
        # the words whose only rule is the assignment rule, each run of them at once
        # (C-level: names and the words before asked once per distinct one)
        places, hits = need[at:end], matches[at:end]
        named = list(map(_IS_NOT_NONE, hits, repeat(None)))
        assigned = list(map(_NAME, compress(hits, named)))
        secret = {name: is_secret_name(name) for name in set(assigned)}
        before = [None if i in first else values[i - 1] for i in compress(places, named)]
        told: dict[str | None, bool] = {None: False}  # (no word before: none names it)
        for word in set(before):
            if word is not None:
                if word not in names:
                    names[word] = names_next(word)
                told[word] = names[word]
        secrets = list(map(secret.__getitem__, assigned))
        after = list(map(told.__getitem__, before))
        users = list(map(_USER, compress(map(values.__getitem__, places), named)))
        if all(named) and all(secrets) and not any(after) and not any(users):
            flags = named  # (mostly: every one of them is such a word)
        else:
            simple = iter(map(_all_three, secrets, after, users))
            flags = [next(simple) if is_named else False for is_named in named]
        for ok, group in groupby(enumerate(flags, at), _SECOND):
            indices = list(map(_FIRST, group))
            if ok:
                _assign(cast(list[re.Match[str]], list(map(matches.__getitem__, indices))),
                        list(map(need.__getitem__, indices)), cleans, found, mark)
            else:
                one_by_one(indices[0], need[indices[-1]] + 1)
        return end

    def one_by_one(at: int, stop: int) -> int:
        i = need[at]
        while i < stop:
            word, previous, match = values[i], None if i in first else values[i - 1], matches[at]
            if match is not None and previous is not None and previous not in names:
                names[previous] = names_next(previous)
            if match is not None and is_secret_name(match.group(1)) \
                    and (not word.startswith("-u") or word.startswith("--")) \
                    and (previous is None or not names[previous]):
                found.append(match.group(2))
                cleans[i] = f"{match.group(1)}={mark(match.group(2))}"
            else:
                cleans[i] = by_the_rules(word, previous, found, mark, depth, nested)
            at += 1
            i = need[at]
        return at

    return run


AT_ONCE = True  # (tests turn it off: each word in turn)
_FEW = 8  # fewer words: in turn
_IS_NOT_NONE = operator.is_not
_NAME = operator.methodcaller("group", 1)
_FIRST, _SECOND = operator.itemgetter(0), operator.itemgetter(1)
_USER = re.compile("-u").match  # -uUSER:PW: not an assignment (--user=... never starts so)


def _all_three(secret: bool, names_next: bool, user: object) -> bool:
    return secret and not names_next and user is None


def _assign(hits: list[re.Match[str]], places: list[int], cleans: list[str],
            found: list[str], mark: Mark) -> None:
    """``NAME=V`` at each of ``places`` as ``NAME=`` and the mark of V (V found), in turn."""
    values = list(map(operator.methodcaller("group", 2), hits))
    found.extend(values)
    marks = mark.record_many(values) if isinstance(mark, Recorder) else list(map(mark, values))
    deque(map(cleans.__setitem__, places,
              map("{}={}".format, map(_NAME, hits), marks)), maxlen=0)


def no_words(at: int, stop: int) -> int:
    """The run of a script with no such word."""
    return at


_Rules = Callable[[str, str | None, list[str], Mark, int, bool], str]


def memo_after_options(rules: _Rules, enabled: Callable[[], bool]) -> _Rules:
    """``rules(word, previous, found, mark, depth, nested)`` for the words of one script
    (one mark, one depth), what they gave a word after no option given again
    (``{"api_key":`` on each line of a heredoc): a word before that is no option (no
    leading ``-``) is none to the rules, which ask of it only whether it is an option
    that takes a secret, or ``-u``. (A word after an option, mostly a distinct value,
    goes to the rules.) Nothing is kept while ``enabled()`` is false (tests compare)."""
    memo: dict[str, tuple[str, list[str]]] = {}

    def redact(word: str, previous: str | None, found: list[str], mark: Mark, depth: int,
               nested: bool) -> str:
        if previous is not None and previous[:1] == "-":  # (an option's value: seldom again)
            return rules(word, previous, found, mark, depth, nested)
        again = memo.get(word)
        if again is not None:
            found.extend(again[1])
            return again[0]
        at = len(found)
        clean = rules(word, previous, found, mark, depth, nested)
        if enabled():
            memo[word] = (clean, found[at:])
        return clean

    return redact
