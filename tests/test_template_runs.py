"""Issue 13's redaction CPU, session 9: one pass per template (:mod:`fetchledger.identity.runs`).

A script of thousands of commands of one kind (``sshpass -p V1 x; sshpass -p V2 x``,
``mysql -pV1 db; mysql -pV2 db``) took a Python step per command once its kind's
template was known; a run of them standing one after another is now redacted at once
(C-level slices of the script's words). These tests hold it to the command-by-command
way (``command_secrets.RUNS`` off) and to the straightforward way (every shortcut off) on
generated scripts of runs of a few kinds, with digits and 0s moved inside the values,
commands of other kinds and plain commands between them; and bound its CPU (linear).
"""

from __future__ import annotations

import time

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fetchledger.identity import command_kinds, command_programs
from fetchledger.identity import command_secrets as cs
from fetchledger.identity.commands import command_locator
from fetchledger.identity.recorder import Recorder, Unrendered
from fetchledger.identity.runs import longest
from test_redaction_fast_paths import _DIGIT_WORDS, _HEADS
from test_secret_script_paths import _MARKS, _WORDS, _word

from measured import best_ms


@st.composite
def _runs_script(draw: st.DrawFn) -> str:
    """Runs of commands of a few kinds (each command of a kind with its digits, 0s among
    them, drawn anew), other commands between them."""
    pool = st.sampled_from(_DIGIT_WORDS) | st.sampled_from(_WORDS) | _word()
    kinds = draw(st.lists(st.tuples(st.sampled_from(_HEADS),
                                    st.lists(pool, min_size=1, max_size=4)),
                          min_size=1, max_size=3))
    digits = draw(st.randoms(use_true_random=False))
    how = draw(st.sampled_from(["some", "any", "none"]))  # which digits change
    commands = []
    for _ in range(draw(st.integers(2, 6))):
        head, words = draw(st.sampled_from(kinds))
        command = " ".join([*head, *words])
        for _ in range(draw(st.integers(1, 14))):
            if how == "none":
                commands.append(command)
            else:
                commands.append("".join(
                    str(digits.randrange(0 if how == "any" else 1, 10))
                    if c.isdigit() and (how == "any" or c != "0") else c for c in command))
        if draw(st.booleans()):
            commands.append(" ".join(draw(st.lists(pool, min_size=1, max_size=3))))
    return draw(st.sampled_from(["; ", "\n", " && ", " | "])).join(commands)


def _every_way(script: str) -> list[object]:
    argv = ["sh", "-c", script]
    out: list[object] = []
    for mark in (*_MARKS, Recorder()):
        found: list[str] = []
        out.append((cs.redact_argv_each(argv, (mark,), found), found,
                    mark.values if isinstance(mark, Recorder) else None))
    locator = command_locator(argv, key=b"k" * 32)
    out.append((locator.locator, locator.display, locator.secrets))
    return out


def _three_ways(script: str) -> tuple[list[object], list[object], list[object]]:
    fast = _every_way(script)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(cs, "RUNS", False)
        by_command = _every_way(script)
        patched.setattr(command_kinds, "ENABLED", False)
        patched.setattr(command_kinds, "SINGLE", False)
        patched.setattr(cs, "_MEMO", False)
        patched.setattr(command_programs, "PLACED_BY_NAME", False)
        patched.setattr(command_programs, "SKIP_INERT", False)
        patched.setattr(cs, "HOLES_ONLY", False)
        slow = _every_way(script)
    return fast, by_command, slow


@settings(max_examples=300, deadline=None)
@given(script=_runs_script())
@example(script="; ".join(f"sshpass -p pw{i:05d} x" for i in range(40)))
@example(script="; ".join(f"mysql -pp{i:06d} db" for i in range(40)))
@example(script="; ".join(f"""curl -d '{{"token": "v{i:06d}"}}' u""" for i in range(40)))
# (a run broken by a command of another kind, one alike but for a word, a 7z)
@example(script="; ".join(f"mysql -pp{i:06d} {'db' if i != 20 else 'dc'}" for i in range(40)))
@example(script="; ".join(f"sshpass -p {'pw' if i != 17 else '7z'}{i:03d} x" for i in range(40)))
@example(script="; ".join(f"sshpass -p pw{i:03d} x{i % 2}" for i in range(40)))
# (two values in one command, its other words rewritten, a value found twice)
@example(script="; ".join(f"curl -H 'Authorization: Bearer t{i}' -u u:p{i} h" for i in range(40)))
@example(script="; ".join(f"sshpass -p pw{i:03d} -P pw{i:03d} x" for i in range(40)))
@example(script="; ".join(f"tool --password p{i:06d} -u u:q{i:06d}" for i in range(40)))
def test_runs_of_one_kind_give_what_each_command_gives(script: str) -> None:
    """Display, keyed identity, values found (in order) and the values recorded (in
    order: the slots) as the command-by-command way and the straightforward way."""
    fast, by_command, slow = _three_ways(script)
    assert fast == by_command
    assert [way[:2] for way in fast[:-1]] == [way[:2] for way in slow[:-1]]  # type: ignore[index]
    assert fast[-1] == slow[-1]


@settings(max_examples=500, deadline=None)
@given(values=st.lists(st.sampled_from(["a", "b", "c", "\0x", "REDACTED", ""]), max_size=12),
       before=st.lists(st.sampled_from(["a", "d", "e"]), max_size=4))
def test_values_recorded_at_once_are_recorded_as_one_by_one(values: list[str],
                                                            before: list[str]) -> None:
    one, many = Recorder(), Recorder()
    for value in before:
        one(value)
        many(value)
    assert many.record_many(values) == list(map(one, values))
    assert many.values == one.values


def test_more_values_than_slots_are_refused_at_once() -> None:
    recorder = Recorder()
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr("fetchledger.identity.recorder._SLOTS", 3)
        recorder.record_many(["a", "b", "a"])
        with pytest.raises(Unrendered):
            recorder.record_many(["c", "d"])


@given(limit=st.integers(1, 200), most=st.integers(1, 200))
def test_the_longest_run_is_found(limit: int, most: int) -> None:
    asked: list[int] = []

    def test(low: int, high: int) -> bool:  # each piece asked about once: linear
        asked.append((low, high))
        return high <= limit  # (the commands 0 to limit - 1 of the run alike)

    assert longest(test, most) == min(limit, most)
    assert all(1 <= low < high <= most + 1 for low, high in asked) and len(asked) <= 20
    assert sum(high - low for low, high in asked) <= 3 * most


# --- linear time ------------------------------------------------------------------------

RUN_SHAPES = {  # n commands of one kind (about 20 characters each)
    "sshpass -p V x": lambda n: "; ".join(f"sshpass -p pw{i:05d} x" for i in range(n)),
    "mysql -pV db": lambda n: "; ".join(f"mysql -pp{i:06d} db" for i in range(n)),
    "curl -d JSON u": lambda n: "; ".join(f"""curl -d '{{"token": "v{i:06d}"}}' u"""
                                          for i in range(n * 2 // 3)),
    "runs of two kinds": lambda n: "; ".join(
        f"mysql -pp{i:06d} db" if i // 50 % 2 else f"sshpass -p pw{i:05d} x" for i in range(n)),
    # the other paths of session 9: echo WORD | READER in one pass, heredocs' ends and
    # readers once
    "echo vN | sudo -S y (one pass)": lambda n: "".join(
        f"echo v{i} | sudo -S y; " for i in range(n)),
    "heredocs to passwd": lambda n: "".join(f"passwd <<E\nv{i}\nE\n" for i in range(n)),
}


def _cpu_ms(script: str) -> float:
    return best_ms(lambda n: command_locator(["sh", "-c", script + f" {n}"], key=b"k" * 32), 3,
                   clock=time.process_time)


@pytest.mark.parametrize("shape", list(RUN_SHAPES))
def test_runs_of_one_kind_are_redacted_in_linear_time(shape: str) -> None:
    """About 100,000 characters of commands of one kind (each path of session 9) in at
    most 250 ms of CPU (35-100 here under load: generous for a loaded 2-core machine);
    ten times the length at most 20 times the CPU (linear gives about 10, a step per
    command as long as the run about 100)."""
    small, big = _cpu_ms(RUN_SHAPES[shape](500)), _cpu_ms(RUN_SHAPES[shape](5000))
    assert big <= 250, f"{shape}: {big:.1f} ms of CPU"
    assert big <= 20 * max(small, 1.0), (shape, small, big)


# --- the scans behind the runs: printers before a pipe, the finder's sort and marks -------

_FED_PIECES = ["echo", "printf", "/bin/echo", " ", " ", "v1", "'v2 x'", '"v3"', "|", " | ",
               "; ", ";", "&&", "\n", "(", ")", "{", "}", "sudo -S y", "docker login "
               "--password-stdin", "passwd", "cat", "-n", "%s", "'a\\nb'", "x", "echo v4 ",
               "printf '%s' v5 ", "ssh h 'echo v6 | sudo -S y'", "(echo v7; echo v8) | passwd",
               "printf 'k\nv9\n' ", "echo 'a;b' ", "'", "aws configure", "echo 'x\n"]


_ECHOED = ["echo v1 | sudo -S y; ", "echo v2 |passwd\n", " echo v3 | x; ", "(echo v4 | passwd)",
           "echo -n v5 | passwd; ", "echo echo | passwd; ", "echo a/echo | passwd\n",
           "echo u:v6 | chpasswd; ", "echo v7 | aws configure; ", "x;echo v8 | passwd; ",
           "echo v9 || passwd; ", "echo v10 >| passwd; ", "echo\tv11\t|\tpasswd\n",
           "V1=v12; ", "echo $V1 | passwd; ", "echo $V2-x | passwd; ", "echo ${V1} | passwd; ",
           "echo $1 | passwd; ", "export V2=v13; ", "echo $V2 | chpasswd\n", "echo $ | passwd; "]


@settings(max_examples=500, deadline=None)
@given(pieces=st.lists(st.sampled_from(_FED_PIECES), max_size=40)
       | st.lists(st.sampled_from(_ECHOED), min_size=8, max_size=24)
       | st.lists(st.sampled_from(_ECHOED[:3]), min_size=8, max_size=24).flatmap(
           lambda units: st.lists(st.sampled_from(_FED_PIECES), max_size=3).map(
               lambda extra: units + extra)))
@example(pieces=["echo v1 ", "|", " sudo -S y", "; "] * 12)
@example(pieces=["echo", " ", "echo", " ", "echo", " v1 ", "|", " passwd"])
@example(pieces=["printf '%s' v5 ", ";", "x", "|", " passwd"])
@example(pieces=["printf 'k\nv9\n' ", "|", " ", "aws configure"])  # (quotes over lines)
@example(pieces=["echo v1 | sudo -S y; "] * 9 + ["echo echo | passwd; "])
@example(pieces=["echo u:v6 | chpasswd; "] * 9 + ["echo v7 | aws configure; "])
@example(pieces=["V1=v12; ", "export V2=v13; "] + ["echo $V1 | passwd; ", "echo $V2 | chpasswd\n",
                                                   "echo $V2-x | passwd; "] * 4)
def test_the_printers_before_a_pipe_are_those_of_its_whole_region(pieces: list[str]) -> None:
    """What is fed to a reader (``echo V | sudo -S``) is found looking at the command
    before each pipe first, and every ``echo WORD |`` of a script of nothing else in one
    pass (``ECHOED``), as when every pipe's region (a few commands back) is scanned whole
    (``fed_secrets.REGION_LAST`` and ``ECHOED`` off), each reader's text asked once."""
    from fetchledger.identity import fed_secrets

    text = "".join(pieces)
    fast = fed_secrets._fed_values.__wrapped__(text)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(fed_secrets, "REGION_LAST", False)
        patched.setattr(fed_secrets, "ECHOED", False)
        slow = fed_secrets._fed_values.__wrapped__(text)
    assert fast == slow


def _reference_spans(finder: object, text: str) -> list[tuple[int, int]]:
    """The finder's sort and choice before session 9 (a key per span, a loop)."""
    found = finder._found(text)  # type: ignore[attr-defined]
    found.sort(key=lambda span: (span[0], -span[1]))
    chosen: list[tuple[int, int]] = []
    for start, stop in found:
        if not chosen or start >= chosen[-1][1]:
            chosen.append((start, stop))
    return chosen


_TEXT_PIECES = ["v1", "v12", "ab", "abcdefgh", "abcdefghij", " ", "-", "é", "\0", "\x03",
                "\U000f0001", "\0\x03\U000f0002\0", "x", "1", "a-b", "\0\x06\0"]


@settings(max_examples=1000, deadline=None)
@given(forms=st.lists(st.sampled_from([*_TEXT_PIECES[:5], "a-b", "b1", "gh", "1x"]),
                      min_size=1, max_size=6),
       pieces=st.lists(st.sampled_from(_TEXT_PIECES), max_size=30),
       ascii_words=st.booleans())
def test_the_finder_chooses_and_marks_as_before(forms: list[str], pieces: list[str],
                                                ascii_words: bool) -> None:
    """Spans sorted by two C-level sorts and taken whole when none overlaps, and marks
    given all at once (``Recorder.record_many``), as the key per span, the loop and a
    mark per value gave them."""
    from fetchledger.identity.finder import Finder

    text = "".join(pieces)
    finder = Finder(forms, ascii_words=ascii_words)
    assert finder.spans(text) == _reference_spans(finder, text)
    one, many = Recorder(), Recorder()
    assert finder.sub(text, one) == finder.sub(text, one, many.record_many)
    assert one.values == many.values


_SQL_PIECES = ["conn", "CONNECT", "Connect", "ect", " ", "\t", "\n", "to", "db", "user", "u",
               "using", "pw", "identified", "IDENTIFIED", "with", "by", "'p'", "/", "@", ";",
               "SQL>", "x", "\"q\"", "ſ", "İ", "ı", "K", "password", "PASSWORD", "(", ")", "set_"]


@settings(max_examples=1000, deadline=None)
@given(pieces=st.lists(st.sampled_from(_SQL_PIECES), max_size=16))
@example(pieces=["CONNECT", " ", "u", "/", "pw"])
@example(pieces=["connect", " ", "to", " ", "db", " ", "user", " ", "u", " ", "using", " ", "pw"])
def test_the_sql_scan_is_skipped_only_where_it_finds_nothing(pieces: list[str]) -> None:
    """``_SQL_NEEDS`` (a word of ``_SQL`` and the blank after it) is looked for first:
    wherever ``_SQL`` finds a password, it finds that."""
    from fetchledger.identity import fed_secrets

    text = "".join(pieces)
    if fed_secrets._SQL.search(text) is not None:
        assert fed_secrets._SQL_NEEDS.search(text) is not None
    found: list[str] = []
    fed_secrets._sql_secrets(text, found)
    assert found == [next(group for group in match.groups() if group is not None)
                     for match in fed_secrets._SQL.finditer(text)
                     if "$" not in next(g for g in match.groups() if g is not None)]
