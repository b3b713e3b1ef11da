"""Run a parser over untrusted bytes in a child process with hard limits.

A hostile file (a PDF whose forms fan out into millions of drawing calls, a
decompression bomb, a table-overflowing LZW stream) must not hang or exhaust
the process that owns the ledger. :func:`run_in_child` runs ``entry`` (a
``module:function`` taking ``(payload, params, emit)``) in a child process
that limits itself (address space, CPU seconds, no core files), streams its
results back as length-prefixed JSON frames, and is killed when the
wall-clock deadline passes or its output grows past a cap.

The child is a plain ``fork()`` of this process when that is safe and cheap
(Linux, and no other thread alive: forking a threaded process can deadlock
the child), else a fresh interpreter (``python -m fetchledger.adapters.sandbox``)
that reads the payload from its stdin. Either way the parent only ever sees
frames, a clean exit, or a :class:`ChildFailed`.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import logging
import os
import selectors
import signal
import struct
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal


def _import_resource() -> Any:
    try:
        import resource
    except ImportError:  # not POSIX
        return None
    return resource


_RESOURCE = _import_resource()  # imported before any fork, so children find it loaded

__all__ = ["ChildFailed", "ChildLimits", "Emit", "fork_is_safe", "run_in_child"]

Emit = Callable[[dict[str, Any]], None]
Failure = Literal["timeout", "memory", "output", "crashed"]

_HEADER = struct.Struct(">I")
_END = {"t": "__end__"}
_OOM = "__oom__"
_CRASH = "__crash__"


@dataclass(frozen=True)
class ChildLimits:
    """What the child may use: wall-clock seconds, extra address space, output bytes."""

    timeout: float
    memory: int  # bytes of address space on top of what the child starts with
    max_output: int  # bytes of frames the parent accepts before it kills the child


class ChildFailed(Exception):
    """The child did not finish: ``reason`` says why (timeout, memory, output, crashed)."""

    def __init__(self, reason: Failure, detail: str) -> None:
        super().__init__(detail)
        self.reason: Failure = reason
        self.detail = detail


def fork_is_safe() -> bool:
    """True where a bare fork() is both available and safe: Linux, one thread."""
    return sys.platform.startswith("linux") and threading.active_count() == 1


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
    if use_fork:
        _libc()  # warm what the child needs, once per process
    deadline = time.monotonic() + limits.timeout
    if use_fork:
        return _run_forked(entry, payload, params, limits, deadline)
    return _run_spawned(entry, payload, params, limits, deadline)


# --- the child side ------------------------------------------------------------


def _limit_self(limits: ChildLimits) -> None:
    """Cap this process's address space and CPU time, and turn off core dumps."""
    resource = _RESOURCE
    if resource is None:  # not POSIX: only the parent's wall-clock deadline applies
        return
    _lower(resource, "RLIMIT_CPU", int(limits.timeout) + 2)  # a backstop to the wall clock
    _lower(resource, "RLIMIT_CORE", 0)
    in_use = _address_space_in_use()
    if in_use is not None:
        _lower(resource, "RLIMIT_AS", in_use + limits.memory)


def _lower(resource: Any, name: str, value: int) -> None:
    """Lower a soft limit to ``value`` (never above a hard limit already in place)."""
    with contextlib.suppress(ValueError, OSError, AttributeError):
        which = getattr(resource, name)
        _, hard = resource.getrlimit(which)
        soft = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (soft, hard))


def _address_space_in_use() -> int | None:
    try:
        with open("/proc/self/statm", "rb") as handle:
            pages = int(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")


@functools.lru_cache(maxsize=1)
def _libc() -> Any:
    """The C library (loaded once in the parent, so a forked child finds it ready)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True)
    except (ImportError, OSError):
        return None


def _die_with_parent() -> None:
    """Ask Linux to kill this child if the parent dies (kill -9 leaves no orphan)."""
    libc = _libc()
    if libc is not None:
        with contextlib.suppress(Exception):
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _quiet() -> None:
    """Silence prints, library logging and warnings: the child's only channel is its
    frames."""
    warnings.simplefilter("ignore")
    logging.disable(logging.CRITICAL)
    with contextlib.suppress(OSError):  # stray prints cannot reach the caller's terminal
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.close(devnull)
        sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115  (lives until exit)


def _writer(fd: int) -> Emit:
    def emit(frame: dict[str, Any]) -> None:
        body = json.dumps(frame, ensure_ascii=False).encode("utf-8", "surrogatepass")
        data = memoryview(_HEADER.pack(len(body)) + body)
        while data:
            written = os.write(fd, data)
            data = data[written:]

    return emit


def _child_main(entry: str, payload: bytes, params: dict[str, Any], fd: int) -> int:
    """Run ``entry`` and report; returns the exit status for ``os._exit``."""
    emit = _writer(fd)
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


def _forked_child(
    entry: str, payload: bytes, params: dict[str, Any], limits: ChildLimits, fd: int
) -> None:
    """The body of a forked child. It never returns: it ends in ``os._exit``."""
    status = 70
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        _die_with_parent()
        _quiet()
        _limit_self(limits)
        status = _child_main(entry, payload, params, fd)
    finally:
        os._exit(status)


def _spawned_child() -> int:
    """``python -m fetchledger.adapters.sandbox``: read the job from stdin, run it."""
    _die_with_parent()
    stdin = sys.stdin.buffer
    header = json.loads(stdin.readline())
    payload = stdin.read(int(header["size"]))
    out = os.dup(1)  # the frames go here; _quiet() points fd 1 at /dev/null
    _quiet()
    limits = ChildLimits(**header["limits"])
    _limit_self(limits)
    return _child_main(header["entry"], payload, header["params"], out)


# --- the parent side -------------------------------------------------------------


def _run_forked(
    entry: str, payload: bytes, params: dict[str, Any], limits: ChildLimits, deadline: float
) -> list[dict[str, Any]]:
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child ends in os._exit, coverage cannot see it
        os.close(read_fd)
        _forked_child(entry, payload, params, limits, write_fd)
    os.close(write_fd)

    def kill() -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    try:
        frames = _read_frames(read_fd, deadline, limits, kill)
    except BaseException:  # a limit, or Ctrl-C in this process: the child goes too
        kill()
        raise
    finally:
        os.close(read_fd)
        status = _reap(pid, kill)
    return _finish(frames, _signal_of(status), limits)


def _reap(pid: int, kill: Callable[[], None]) -> int:
    """Wait for the child; one that lingers a second after closing its pipe is killed."""
    pause, deadline = 0.0002, time.monotonic() + 1.0
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(pause)
        pause = min(pause * 2, 0.02)
    kill()
    return os.waitpid(pid, 0)[1]


def _signal_of(status: int) -> int | None:
    return os.WTERMSIG(status) if os.WIFSIGNALED(status) else None


def _run_spawned(
    entry: str, payload: bytes, params: dict[str, Any], limits: ChildLimits, deadline: float
) -> list[dict[str, Any]]:
    header = json.dumps({
        "entry": entry, "params": params, "size": len(payload),
        "limits": {"timeout": limits.timeout, "memory": limits.memory,
                   "max_output": limits.max_output},
    }).encode() + b"\n"
    # The child imports fetchledger from wherever this process did (a source tree
    # on sys.path works as well as an installed package).
    package_root = str(Path(__file__).resolve().parents[2])
    pythonpath = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
    process = subprocess.Popen(
        [sys.executable, "-m", "fetchledger.adapters.sandbox"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        start_new_session=True, env={**os.environ, "PYTHONPATH": pythonpath},
    )
    assert process.stdin is not None and process.stdout is not None

    def feed() -> None:
        assert process.stdin is not None
        with contextlib.suppress(OSError):
            process.stdin.write(header)
            process.stdin.write(payload)
        with contextlib.suppress(OSError):
            process.stdin.close()

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        frames = _read_frames(process.stdout.fileno(), deadline, limits, process.kill)
    except BaseException:
        process.kill()
        raise
    finally:
        if process.poll() is None:
            try:
                process.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        process.stdout.close()
        feeder.join(timeout=1.0)
    code = process.returncode
    return _finish(frames, -code if code < 0 else None, limits)


def _read_frames(
    fd: int, deadline: float, limits: ChildLimits, kill: Callable[[], None]
) -> list[dict[str, Any]]:
    """Read frames until EOF; kill the child at the deadline or past the output cap."""
    buffer = bytearray()
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
                break
            total += len(chunk)
            if total > limits.max_output:
                kill()
                raise ChildFailed("output", f"its output passed the cap of {limits.max_output:,}"
                                  " bytes")
            buffer += chunk
    return _decode_frames(bytes(buffer))


def _decode_frames(data: bytes) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    offset = 0
    while offset + _HEADER.size <= len(data):
        (size,) = _HEADER.unpack_from(data, offset)
        body = data[offset + _HEADER.size : offset + _HEADER.size + size]
        if len(body) < size:
            break  # cut short: the child died mid-frame
        frames.append(json.loads(body.decode("utf-8", "surrogatepass")))
        offset += _HEADER.size + size
    return frames


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
                          f"{int(limits.timeout) + 2} s")
    if killed_by is not None:
        name = signal.Signals(killed_by).name if killed_by in signal.valid_signals() else killed_by
        raise ChildFailed("crashed", f"it was killed by {name} (perhaps out of memory)")
    raise ChildFailed("crashed", "it exited without finishing")


if __name__ == "__main__":
    sys.exit(_spawned_child())
