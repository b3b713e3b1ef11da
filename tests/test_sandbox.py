"""The limited child process that parses untrusted files, in both of its forms:
a fork of this process and a fresh interpreter."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from fetchledger.adapters.sandbox import ChildFailed, ChildLimits, fork_is_safe, run_in_child
from procs import children_of

TESTS = Path(__file__).resolve().parent
ROOMY = ChildLimits(timeout=20.0, memory=256 << 20, max_output=1 << 20)


@pytest.fixture(params=[True, False], ids=["fork", "spawn"])
def use_fork(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    # a fresh interpreter finds the test jobs through PYTHONPATH
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [
        str(TESTS), os.environ.get("PYTHONPATH", "")])))
    return bool(request.param)


def run(job: str, limits: ChildLimits = ROOMY, use_fork: bool = True, **params: object):
    return run_in_child(f"sandbox_jobs:{job}", b"payload bytes", dict(params), limits,
                        use_fork=use_fork)


def test_frames_come_back_from_a_separate_process(use_fork: bool) -> None:
    frames = run("echo", use_fork=use_fork, answer=42)
    assert frames == [{"t": "echo", "size": 13, "params": {"answer": 42},
                       "pid": frames[0]["pid"]}]
    assert frames[0]["pid"] != os.getpid()


def test_a_hanging_child_is_killed_at_the_deadline(use_fork: bool) -> None:
    limits = ChildLimits(timeout=0.5, memory=256 << 20, max_output=1 << 20)
    started = time.monotonic()
    with pytest.raises(ChildFailed) as caught:
        run("spin", limits, use_fork)
    assert caught.value.reason == "timeout"
    assert time.monotonic() - started < 3.0
    assert children_of(os.getpid()) == []


def test_a_busy_child_is_killed_at_the_deadline(use_fork: bool) -> None:
    limits = ChildLimits(timeout=0.5, memory=256 << 20, max_output=1 << 20)
    with pytest.raises(ChildFailed) as caught:
        run("burn", limits, use_fork)
    assert caught.value.reason == "timeout"


def test_memory_is_capped(use_fork: bool) -> None:
    limits = ChildLimits(timeout=20.0, memory=64 << 20, max_output=1 << 20)
    with pytest.raises(ChildFailed) as caught:
        run("hog", limits, use_fork, mib=512)
    assert caught.value.reason == "memory"
    assert "64 MiB" in caught.value.detail
    assert run("hog", limits, use_fork, mib=16) == [{"t": "allocated", "mib": 16}]


def test_output_is_capped(use_fork: bool) -> None:
    limits = ChildLimits(timeout=20.0, memory=256 << 20, max_output=50_000)
    with pytest.raises(ChildFailed) as caught:
        run("chatter", limits, use_fork, frames=500)
    assert caught.value.reason == "output"


def test_an_exception_or_a_killed_child_is_a_crash(use_fork: bool) -> None:
    with pytest.raises(ChildFailed, match="ValueError: the parser gave up") as caught:
        run("fail", use_fork=use_fork)
    assert caught.value.reason == "crashed"
    with pytest.raises(ChildFailed, match="SIGKILL"):
        run("die", use_fork=use_fork)


def test_stray_output_of_the_child_reaches_neither_stdout_nor_stderr(
    use_fork: bool, capfd: pytest.CaptureFixture[str]
) -> None:
    assert run("noisy", use_fork=use_fork) == [{"t": "done"}]
    out, err = capfd.readouterr()
    assert "stray" not in out + err and "library warning" not in err


def test_fork_is_used_only_while_no_other_thread_runs() -> None:
    assert fork_is_safe() is (threading.active_count() == 1)
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait)
    worker.start()
    try:
        assert fork_is_safe() is False
    finally:
        stop.set()
        worker.join()
