"""Runs of commands of one kind in a long script (DESIGN §8), for
:mod:`fetchledger.identity.command_secrets`: one pass per template.

A script of thousands of commands of one kind (``sshpass -p V1 x; sshpass -p V2 x;
...``, ``mysql -pV1 db; mysql -pV2 db; ...``) had a Python step per command once its
kind's template was known (:mod:`.command_kinds`): a slice, a look-up, the check of its
other words, its marks. Here the commands after it that stand one after the other, each
of as many words and of the same kind, are taken at once: a run is found by comparing
slices of the script's words (C-level list comparisons, its length by doubling and then
halving: linear), the words of each place in the command are one extended slice of the
script's words (``values[begin + j:end:n]``), checked, marked (:meth:`.Recorder.record_many`)
and written back by C-level slice assignments; the values found are the columns
interleaved, in the order the command-by-command way appends them. The output is that
of the command-by-command way (tests compare: ``tests/test_template_runs.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain
from operator import itemgetter, sub
from typing import TYPE_CHECKING

from .recorder import Recorder
from .secrets import Mark

if TYPE_CHECKING:
    from .command_kinds import BareTemplate, DigitTemplate

__all__ = ["ENABLED", "LEAST", "Runs", "bare_run", "digit_run", "longest"]

ENABLED = True  # (tests turn it off to compare with the command-by-command way)
LEAST = 4  # a run of fewer commands goes command by command


def longest(test: Callable[[int, int], bool], most: int) -> int:
    """The largest ``k`` of 1 to ``most`` such that the first ``k`` commands of a run are
    alike, ``test(a, b)`` telling whether commands ``a`` to ``b - 1`` are when those
    before ``a`` are (the first is): each piece asked about once, doubling, then
    halving (linear in ``k``)."""
    low, high = 1, 2
    while high <= most and test(low, high):
        low, high = high, 2 * high
    high = min(high, most + 1)
    while high - low > 1:
        middle = (low + high) // 2
        if test(low, middle):
            low = middle
        else:
            high = middle
    return low


def _interleaved(columns: Sequence[Sequence[str]]) -> Sequence[str]:
    """The columns' values row by row (one command's after another's)."""
    return columns[0] if len(columns) == 1 else list(chain.from_iterable(
        zip(*columns, strict=True)))


def _marks(mark: Mark, values: Sequence[str]) -> list[str]:
    return mark.record_many(values) if isinstance(mark, Recorder) else list(map(mark, values))


class Runs:
    """The commands of a script (its words ``values``, commands starting at ``starts``)
    that stand in runs of one kind, among those a list ``rich`` (ascending, ending with
    the number of commands) names."""

    def __init__(self, values: Sequence[str], starts: Sequence[int], rich: Sequence[int]
                 ) -> None:
        self.values = values
        self._starts = starts
        self._rich = rich
        self._lengths = list(map(sub, starts[1:], starts[:-1]))  # each command's words
        self._kinds_of: Sequence[str] | None = None
        self._kinds: list[tuple[str, ...]] = []

    def length(self, i: int, keys: Sequence[object], unit: Sequence[object]) -> int:
        """How many commands from ``rich[i]`` on stand one after another, each of as many
        words as ``unit`` and its words' ``keys`` those of ``unit`` (at least 1: the
        command ``rich[i]`` is of it)."""
        rich, lengths, command = self._rich, self._lengths, self._rich[i]
        begin, n = self._starts[command], len(unit)
        unit = list(unit)

        def alike(low: int, high: int) -> bool:  # (the commands low to high - 1 of the run)
            return rich[i + high - 1] == command + high - 1 \
                and lengths[command + low:command + high] == [n] * (high - low) \
                and list(keys[begin + low * n:begin + high * n]) == unit * (high - low)

        return longest(alike, len(rich) - 1 - i)

    def length_of_kinds(self, i: int, keys: Sequence[str], signs: dict[tuple[str, ...], str],
                        sign: str) -> int:
        """How many commands from ``rich[i]`` on stand one after another, the ``keys`` of
        each one's words (its kind) one that ``signs`` gives ``sign`` (at least 1)."""
        if self._kinds_of is not keys:  # each command's kind (C-level: map over slices)
            starts = self._starts
            self._kinds_of = keys
            self._kinds = list(map(tuple, map(keys.__getitem__,
                                              map(slice, starts[:-1], starts[1:]))))
        rich, kinds, command = self._rich, self._kinds, self._rich[i]

        def alike(low: int, high: int) -> bool:
            return rich[i + high - 1] == command + high - 1 \
                and list(map(signs.get, kinds[command + low:command + high])) \
                == [sign] * (high - low)

        return longest(alike, len(rich) - 1 - i)


def bare_run(template: BareTemplate,
             values: Sequence[str], cleans: list[str], found: list[str], mark: Mark,
             begin: int, n: int, k: int, *, holes_only: bool) -> None:
    """The ``k`` commands of ``n`` words from ``values[begin]`` on, each of a bare
    template's kind (:func:`.command_kinds.bare_template`), redacted into ``cleans`` as
    it redacts each of them, their values found appended to ``found`` in their order."""
    shown, bare, values_found, marked_only = template
    end = begin + k * n
    if marked_only is not None and holes_only:  # (its other words as they are)
        places = marked_only
    else:
        holes = {j for j, _ in bare}
        for j in range(n):
            if j not in holes:
                cleans[begin + j:end:n] = [shown[j]] * k
        places = [j for j, marked in bare if marked]
    if places:
        slots = _marks(mark, _interleaved([values[begin + j:end:n] for j in places]))
        for t, j in enumerate(places):
            cleans[begin + j:end:n] = slots[t::len(places)]
    columns: list[Sequence[str]] = []
    for j, tail in values_found:
        if j >= 0:
            columns.append(values[begin + j:end:n])
        columns.extend([value] * k for value in tail)
    if columns:
        found.extend(_interleaved(columns))


def digit_run(template: DigitTemplate, values: Sequence[str], cleans: list[str],
              found: list[str], recorder: Recorder, begin: int, n: int, k: int) -> int:
    """Of the ``k`` commands of ``n`` words from ``values[begin]`` on, each of a digit
    template's kind (:func:`.command_kinds.digit_template`, one value in each marked
    word), those that :func:`.command_kinds.by_digits` takes (the longest run of them
    from the first: how many, maybe 0) redacted into ``cleans`` as it redacts each,
    their values found appended to ``found`` in their order."""
    rewritten, _, order, taken, _, single = template
    assert single is not None  # (the caller's test)
    others, expected, spans = single

    def alike(low: int, high: int) -> bool:  # (the commands low to high - 1 of these)
        first, end, k = begin + low * n, begin + high * n, high - low
        return all(list(values[first + j:end:n]) == [word] * k
                   for j, word in zip(others, expected, strict=True)) and all(
            list(map(itemgetter(slice(None, start)), values[first + j:end:n])) == [before] * k
            and list(map(itemgetter(slice(stop, None)), values[first + j:end:n])) == [after] * k
            for j, start, stop, _, before, after in spans)

    if not alike(0, k):
        if not alike(0, 1):
            return 0
        k = longest(alike, k)
    end = begin + k * n
    for j, _, clean in rewritten:
        cleans[begin + j:end:n] = [clean] * k
    slots = recorder.record_many(_interleaved([
        list(map(itemgetter(slice(start, stop)), values[begin + j:end:n]))
        for j, start, stop in order])) if order else []
    for j, _, _, index, before, after in spans:
        cleans[begin + j:end:n] = [before + slot + after for slot in slots[index::len(order)]]
    columns: list[Sequence[str]] = []
    for value in taken:
        if isinstance(value, str):
            columns.append([value] * k)
        else:
            j, start, stop = value
            columns.append(list(map(itemgetter(slice(start, stop)), values[begin + j:end:n])))
    if columns:
        found.extend(_interleaved(columns))
    return k

