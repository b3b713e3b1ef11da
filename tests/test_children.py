"""The one child-process runtime: frames, the registry of live children, reaping,
process groups, and children that die with their parent."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from fetchledger.adapters import children
from fetchledger.adapters.children import (
    JSON,
    PICKLE,
    Child,
    FrameDecoder,
    encode_frame,
    fork_child,
    interpreter_argv,
    kill_children,
    live_children,
)
from procs import children_of, dies_with_killed_parent, wait_gone

TESTS = Path(__file__).resolve().parent


@pytest.mark.parametrize("codec", [JSON, PICKLE], ids=["json", "pickle"])
def test_frames_survive_any_cut_of_the_byte_stream(codec: children.Codec) -> None:
    values = [{"t": "page", "text": "é\u2029" * 50}, {"t": "x"}, {"n": list(range(300))}]
    stream = b"".join(encode_frame(v, codec) for v in values)
    for piece in (1, 7, 64, len(stream)):
        decoder = FrameDecoder(codec)
        got = []
        for at in range(0, len(stream), piece):
            got.extend(decoder.feed(stream[at : at + piece]))
        assert got == values
    cut = FrameDecoder(codec)
    assert cut.feed(stream[:-3]) == values[:2]  # a child that died mid-frame


def test_a_forked_child_is_tracked_until_reaped_and_gives_its_status() -> None:
    child = fork_child(lambda: 7)
    assert child in live_children()
    assert child.reap() == 7
    assert child not in live_children()


def test_reap_kills_a_child_that_outlives_its_grace() -> None:
    child = fork_child(lambda: time.sleep(60) or 0)
    started = time.monotonic()
    assert child.reap(grace=0.2) == -signal.SIGKILL
    assert time.monotonic() - started < 5


def test_kill_children_ends_every_live_child_and_its_process_group() -> None:
    # a group leader with a grandchild in its group, and a plain forked child
    leader = subprocess.Popen(["sh", "-c", "sleep 60 & wait"], start_new_session=True)
    group = Child.of(leader, group=True)
    plain = fork_child(lambda: time.sleep(60) or 0)
    time.sleep(0.2)
    grandchildren = children_of(leader.pid)
    assert grandchildren
    kill_children()
    assert group.reap(grace=2) == -signal.SIGKILL
    assert plain.reap(grace=2) == -signal.SIGKILL
    assert all(wait_gone(pid, 2.0) for pid in grandchildren)
    assert live_children() == []


PARENT_OF_AN_INTERPRETER = """
import subprocess
from fetchledger.adapters.children import interpreter_argv
child = subprocess.Popen(interpreter_argv("sandbox_jobs:sleep_a_minute"))
print(child.pid, flush=True)
child.wait()
"""


def test_a_fresh_interpreter_runs_its_entry_and_dies_with_its_parent() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [
        str(TESTS), os.environ.get("PYTHONPATH", "")]))}
    argv = interpreter_argv("sandbox_jobs:exit_with", "5")
    assert "sandbox_jobs:exit_with" in argv  # ps shows what each child is
    assert subprocess.run(argv, env=env, check=False).returncode == 5
    assert dies_with_killed_parent(PARENT_OF_AN_INTERPRETER, env), \
        "the interpreter outlived its parent"
