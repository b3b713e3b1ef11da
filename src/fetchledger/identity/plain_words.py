"""The words of a long script's commands of no special word (DESIGN §8), for
:mod:`fetchledger.identity.command_secrets`: thousands of ``export TOKEN=V`` or
``A_TOKEN=V cmd``, each redacted as its rules redact it, the assignment rule's pattern
run in C over all of them at once and what a word makes of the next one asked once per
distinct word (tests compare with the word-by-word way)."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Collection, Sequence

from .recorder import MAX_NESTING
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
