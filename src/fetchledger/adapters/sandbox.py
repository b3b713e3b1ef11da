"""Run a parser over untrusted bytes in a child process with hard limits.

A hostile file (a PDF whose forms fan out into millions of drawing calls, a
decompression bomb, a table-overflowing LZW stream) must not hang or exhaust
the process that owns the ledger. :func:`run_in_child` runs ``entry`` (a
``module:function`` taking ``(payload, params, emit)``) in a child process
that limits itself (address space, CPU seconds, no core files), streams its
results back as JSON frames, and is killed when the wall-clock deadline
passes or its output grows past a cap.

The child is a plain fork of this process when that is safe and cheap
(Linux, and no other thread alive), else a fresh interpreter that reads the
job from its stdin; both come from the one child-process runtime
(:mod:`.children`). Either way the parent only ever sees frames, a clean
exit, or a :class:`ChildFailed`.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from .children import (
    JSON,
    Child,
    FrameDecoder,
    claim_stdout,
    fork_child,
    fork_is_safe,
    interpreter_argv,
    limit_resources,
    quiet,
    read_frame,
    start_reaper,
    write_frame,
)

__all__ = ["ChildFailed", "ChildLimits", "Emit", "fork_is_safe", "run_in_child"]

Emit = Callable[[dict[str, Any]], None]
Failure = Literal["timeout", "memory", "output", "crashed"]

_END = {"t": "__end__"}
_OOM = "__oom__"
_CRASH = "__crash__"
_SPAWNED_ENTRY = "fetchledger.adapters.sandbox:spawned_child"


@dataclass(frozen=True)
class ChildLimits:
    """What the child may use: wall-clock seconds, extra address space, output bytes."""

    timeout: float
    memory: int  # bytes of address space on top of what the child starts with
    max_output: int  # bytes of frames the parent accepts before it kills the child

    @property
    def cpu_seconds(self) -> int:
        return int(self.timeout) + 2  # a backstop to the wall clock


class ChildFailed(Exception):
    """The child did not finish: ``reason`` says why (timeout, memory, output, crashed)."""

    def __init__(self, reason: Failure, detail: str) -> None:
        super().__init__(detail)
        self.reason: Failure = reason
        self.detail = detail


def run_in_child(
    entry: str,
    payload: bytes,
    params: dict[str, Any],
    limits: ChildLimits,
    *,
    use_fork: bool | None = None,
) -> list[dict[str, Any]]:
    """Run ``entry(payload, params, emit)`` in a limited child; return what it emitted.

    Raises :class:`ChildFailed` when the child runs past ``limits.timeout``,
    runs out of memory, emits more than ``limits.max_output`` bytes, raises,
    or dies.
    """
    if use_fork is None:
        use_fork = fork_is_safe()
    deadline = time.monotonic() + limits.timeout
    if use_fork:
        return _run_forked(entry, payload, params, limits, deadline)
    return _run_spawned(entry, payload, params, limits, deadline)


# --- the child side ------------------------------------------------------------


def _child_main(entry: str, payload: bytes, params: dict[str, Any], fd: int) -> int:
    """Run ``entry`` and report; returns the child's exit status."""

    def emit(frame: dict[str, Any]) -> None:
        write_frame(fd, frame, JSON)

    try:
        module_name, _, function_name = entry.partition(":")
        function = getattr(importlib.import_module(module_name), function_name)
        function(payload, params, emit)
        emit(_END)
        return 0
    except MemoryError:
        with contextlib.suppress(BaseException):
            emit({"t": _OOM})
        return 3
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            emit({"t": _CRASH, "error": f"{type(exc).__name__}: {exc}"[:500]})
        return 4


def _limited(limits: ChildLimits) -> None:
    quiet(stderr=True)
    limit_resources(cpu_seconds=limits.cpu_seconds, extra_memory=limits.memory)


def spawned_child() -> int:
    """The fresh interpreter's side: read the job from stdin, run it, frames to stdout."""
    stdin = sys.stdin.buffer
    job = read_frame(stdin, JSON)
    payload = stdin.read(int(job["size"]))
    out = claim_stdout()
    limits = ChildLimits(**job["limits"])
    _limited(limits)
    return _child_main(job["entry"], payload, job["params"], out.fileno())


# --- the parent side -------------------------------------------------------------


def _run_forked(
    entry: str, payload: bytes, params: dict[str, Any], limits: ChildLimits, deadline: float
) -> list[dict[str, Any]]:
    read_fd, write_fd = os.pipe()

    def body() -> int:
        os.close(read_fd)
        _limited(limits)
        return _child_main(entry, payload, params, write_fd)

    child = fork_child(body)
    os.close(write_fd)
    try:
        frames = _read_frames(read_fd, deadline, limits, child.kill)
    except BaseException:  # a limit, or Ctrl-C in this process: the child goes too
        child.kill()
        raise
    finally:
        os.close(read_fd)
        code = child.reap()
    return _finish(frames, -code if code < 0 else None, limits)


def _run_spawned(
    entry: str, payload: bytes, params: dict[str, Any], limits: ChildLimits, deadline: float
) -> list[dict[str, Any]]:
    job = {"entry": entry, "params": params, "size": len(payload),
           "limits": {"timeout": limits.timeout, "memory": limits.memory,
                      "max_output": limits.max_output}}
    start_reaper()
    process = subprocess.Popen(
        interpreter_argv(_SPAWNED_ENTRY), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, start_new_session=True)
    child = Child.of(process, group=True)
    assert process.stdin is not None and process.stdout is not None

    def feed() -> None:
        assert process.stdin is not None
        with contextlib.suppress(OSError):
            write_frame(process.stdin.fileno(), job, JSON)
            process.stdin.write(payload)
        with contextlib.suppress(OSError):
            process.stdin.close()

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        frames = _read_frames(process.stdout.fileno(), deadline, limits, child.kill)
    except BaseException:
        child.kill()
        raise
    finally:
        code = child.reap()
        process.stdout.close()
        feeder.join(timeout=1.0)
    return _finish(frames, -code if code < 0 else None, limits)


def _read_frames(
    fd: int, deadline: float, limits: ChildLimits, kill: Callable[[], None]
) -> list[dict[str, Any]]:
    """Read frames until EOF; kill the child at the deadline or past the output cap."""
    decoder = FrameDecoder(JSON)
    frames: list[dict[str, Any]] = []
    total = 0
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(remaining):
                kill()
                raise ChildFailed("timeout", f"it ran past its time limit of {limits.timeout:g} s")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return frames
            total += len(chunk)
            if total > limits.max_output:
                kill()
                raise ChildFailed("output", f"its output passed the cap of {limits.max_output:,}"
                                  " bytes")
            frames.extend(decoder.feed(chunk))


def _finish(
    frames: list[dict[str, Any]], killed_by: int | None, limits: ChildLimits
) -> list[dict[str, Any]]:
    """The frames of a child that ended cleanly; ChildFailed for every other ending."""
    last = frames[-1]["t"] if frames else None
    if last == _END["t"]:
        return frames[:-1]
    if last == _OOM:
        raise ChildFailed("memory", f"it ran out of its memory limit of "
                          f"{limits.memory / 2**20:,.0f} MiB")
    if last == _CRASH:
        raise ChildFailed("crashed", str(frames[-1].get("error", "unknown error")))
    if killed_by == getattr(signal, "SIGXCPU", None):
        raise ChildFailed("timeout", f"it ran past its CPU time limit of "
                          f"{limits.cpu_seconds} s")
    if killed_by is not None:
        name = signal.Signals(killed_by).name if killed_by in signal.valid_signals() else killed_by
        raise ChildFailed("crashed", f"it was killed by {name} (perhaps out of memory)")
    raise ChildFailed("crashed", "it exited without finishing")
