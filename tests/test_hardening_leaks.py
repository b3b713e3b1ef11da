"""Issue 13 under ``make hardening``: redaction time on giant command lines, measured.

Every shape of a 100,000-character argv (one argument of letters, one with a
``://`` in it, many short arguments, assignments, a header, a shell script) is
redacted whole here; under ``make hardening`` each is timed (best of 5, every
run on a fresh argv so that no cache helps) as one ``run`` identifies it — the
display form, the keyed identity and the values to scrub — beside two
baselines measured in the same run: ``shlex.join`` of the same argv (the
floor: only quoting it) and the URL search of fetchledger before issue 13 (a
scheme pattern without a look-behind, quadratic on a long run of letters).
The target is 50 ms; the figures go to docs/reliability.md.
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable

import pytest

from fetchledger.identity.commands import command_locator
from fetchledger.identity.secrets import redact_argv, redact_command_text

from measured import HEAVY, record_fact

SIZE = 100_000
SHAPES: dict[str, list[str]] = {
    "one argument of letters": ["echo", "a" * SIZE],
    "one argument with :// inside": ["echo", "a" * (SIZE // 2) + "://" + "b" * (SIZE // 2)],
    "10,000 short arguments": ["echo", *(["abcdefghi"] * (SIZE // 10))],
    "x=x=x=... (assignments)": ["env", "x=" * (SIZE // 2)],
    "-H and 100k letters": ["curl", "-H" + "a" * SIZE],
    "--token=<100k>": ["tool", "--token=" + "t" * SIZE],
    "sh -c, 100k-character script": ["sh", "-c", "echo " + "ab " * (SIZE // 3)],
    "sh -c, one quoted 100k word": ["sh", "-c", "echo '" + "q" * SIZE + "'"],
    "sh -c, 12,500 secret assignments": ["sh", "-c", "TOKEN=1 " * (SIZE // 8)],
    "10,000 distinct secret values": ["tool", *(f"--token=v{n}" for n in range(10_000))],
}
_OLD_URL = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"]+")  # before issue 13


def _best_ms(work: Callable[[int], object], repeat: int) -> float:
    """The best time of ``work(n)`` for n in 0..repeat-1 (each run a new input)."""
    best = float("inf")
    for n in range(repeat):
        started = time.perf_counter()
        work(n)
        best = min(best, time.perf_counter() - started)
    return best * 1000


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_100k_command_line_is_redacted_whole(shape: str) -> None:
    argv = SHAPES[shape]
    shown = redact_argv(argv)
    assert len(shown) == len(argv)
    assert "t" * 100 not in " ".join(redact_argv(["tool", "--token=" + "t" * SIZE]))

    def everything(n: int) -> None:  # what one `run` does: display, identity, secrets
        command_locator([*argv[:-1], argv[-1] + f" {n}"], key=b"k" * 32)

    if not HEAVY:
        everything(0)
        return
    record_fact("redaction", shape, ms=round(_best_ms(everything, 5), 2),
                floor_ms=round(_best_ms(lambda n: shlex.join(argv), 5), 2), target_ms=50)


def test_a_100k_shell_script_is_redacted_whole() -> None:
    script = "export TOKEN=" + "s" * 20 + "; " + "echo word " * (SIZE // 10)
    assert "s" * 20 not in redact_command_text(script)
    if HEAVY:
        record_fact("redaction", "run --shell, 100k-character script",
                    ms=round(_best_ms(lambda n: command_locator(
                        [script + f" {n}"], shell=True, key=b"k" * 32), 5), 2),
                    floor_ms=round(_best_ms(lambda n: shlex.split(script), 5), 2),
                    target_ms=50)


@pytest.mark.skipif(not HEAVY, reason="seconds of quadratic work: make hardening only")
def test_the_old_url_search_as_the_baseline() -> None:
    argument = "a" * SIZE
    record_fact("redaction", "baseline: the URL search before issue 13, one argument of "
                "letters", ms=round(_best_ms(lambda n: _OLD_URL.search(argument), 1), 2),
                floor_ms=None, target_ms=50)
