"""The one child-process runtime: every process fetchledger starts is started,
tied to fetchledger's life, spoken to and ended here.

Users: the PDF sandbox (:mod:`.sandbox`: one parse of untrusted bytes under
resource limits, JSON frames back), the batch workers
(:mod:`fetchledger.batch.worker`: long-lived extraction processes, pickle
frames both ways) and the command adapter (:mod:`.command`: a user's command
in its own process group).

- **Start.** :func:`fork_child` forks this process (cheap, for a single-threaded
  parent) and runs a function in the child; :func:`interpreter_argv` is the
  command line of a fresh interpreter that imports *this* fetchledger (not one
  the working folder may shadow) and runs ``module:function`` there.
- **Tie.** A child asks the kernel to SIGKILL it when its parent dies
  (:func:`die_with_parent`: ``prctl(PR_SET_PDEATHSIG)``, then a check that the
  parent did not die first; elsewhere a watchdog thread). A child that leads a
  process group (a command, whose own children the kernel would leave running)
  is also tied to the *reaper*: one small helper per fetchledger process, in a
  session of its own, that SIGKILLs every group still tied when fetchledger's
  end of a pipe closes — however fetchledger died, SIGKILL included. Every live
  child is in one registry: :func:`kill_children` stops them all at once,
  process groups included (for a signal handler, or when a client goes away).
- **Speak.** Frames are length-prefixed messages (an 8-byte big-endian length,
  then the body) in one of two codecs: :data:`JSON` for what an untrusted
  parse sends back (data only: a hostile child cannot make the parent run
  code), :data:`PICKLE` between fetchledger's own processes.
- **End.** :class:`Child` kills (the whole group when the child leads one) and
  reaps, so no zombie and no orphan stays behind.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import logging
import os
import signal
import struct
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "JSON",
    "PICKLE",
    "Child",
    "Codec",
    "FrameDecoder",
    "children_die_on_interrupt",
    "claim_stdout",
    "die_with_parent",
    "encode_frame",
    "fork_child",
    "fork_is_safe",
    "interpreter_argv",
    "is_alive",
    "kill_children",
    "limit_resources",
    "live_children",
    "quiet",
    "read_frame",
    "read_frame_async",
    "start_reaper",
    "write_frame",
]


def _import_resource() -> Any:
    try:
        import resource
    except ImportError:  # not POSIX
        return None
    return resource


_RESOURCE = _import_resource()  # imported before any fork, so children find it loaded
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_HEADER = struct.Struct(">Q")
# The fresh interpreter imports this very fetchledger: the package root goes first on
# sys.path (in place of the working folder, which could shadow it).
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
_BOOT = ("import sys; sys.path[0] = sys.argv[3]; "
         "from fetchledger.adapters.children import _interpreter_main; _interpreter_main()")


# --- frames ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Codec:
    """How a frame's body is written and read."""

    name: str
    dumps: Callable[[Any], bytes]
    loads: Callable[[bytes], Any]


JSON = Codec(
    "json",
    lambda value: json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"),
    lambda body: json.loads(body.decode("utf-8", "surrogatepass")))


def _pickle_dumps(value: Any) -> bytes:
    import pickle  # only where pickle frames are spoken (the batch processes)

    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def _pickle_loads(body: bytes) -> Any:
    import pickle

    return pickle.loads(body)


PICKLE = Codec("pickle", _pickle_dumps, _pickle_loads)


def encode_frame(value: Any, codec: Codec) -> bytes:
    body = codec.dumps(value)
    return _HEADER.pack(len(body)) + body


def write_frame(fd: int, value: Any, codec: Codec) -> None:
    """Write one frame to a file descriptor, whole (a blocking write)."""
    data = memoryview(encode_frame(value, codec))
    while data:
        data = data[os.write(fd, data):]


def read_frame(stream: IO[bytes], codec: Codec) -> Any:
    """The next frame of a blocking stream; EOFError when it ends (or ends mid-frame)."""
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        raise EOFError("the stream ended")
    (size,) = _HEADER.unpack(head)
    body = stream.read(size)
    if len(body) < size:
        raise EOFError("the stream ended inside a frame")
    return codec.loads(body)


async def read_frame_async(stream: asyncio.StreamReader, codec: Codec) -> Any:
    """The next frame of an asyncio stream; asyncio.IncompleteReadError when it ends."""
    (size,) = _HEADER.unpack(await stream.readexactly(_HEADER.size))
    return codec.loads(await stream.readexactly(size))


class FrameDecoder:
    """Frames out of bytes that arrive in pieces (a child that dies mid-frame leaves
    the cut frame unread)."""

    def __init__(self, codec: Codec) -> None:
        self.codec = codec
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> list[Any]:
        self._buffer += chunk
        frames, offset = [], 0
        while offset + _HEADER.size <= len(self._buffer):
            (size,) = _HEADER.unpack_from(self._buffer, offset)
            end = offset + _HEADER.size + size
            if end > len(self._buffer):
                break
            frames.append(self.codec.loads(bytes(self._buffer[offset + _HEADER.size : end])))
            offset = end
        del self._buffer[:offset]
        return frames


# --- the registry of live children ------------------------------------------------------


# No lock: one dict operation is atomic under the GIL, and a signal handler that takes
# a lock the interrupted code holds would wait for ever.
_LIVE: dict[int, Child] = {}


@dataclass(frozen=True)
class Child:
    """A child process this one started; ``group``: it leads its own process group
    (which :meth:`kill` then kills whole); ``process``: the Popen that started it,
    when one did (it then does the waiting)."""

    pid: int
    group: bool = False
    process: subprocess.Popen[bytes] | None = field(default=None, compare=False)
    # a supervisor (:mod:`.supervised`): our end of its lifeline; a byte written there
    # makes it kill everything below it and exit, which is how it is killed
    lifeline: int | None = field(default=None, compare=False)

    @classmethod
    def of(cls, process: subprocess.Popen[bytes], *, group: bool = False) -> Child:
        """A child started by ``subprocess.Popen``, tracked until reaped."""
        return cls(process.pid, group, process).track()

    def track(self) -> Child:
        """Enter it in the registry of live children (until :meth:`reaped`); a group
        leader's group is tied to the reaper, so it dies with this process."""
        _LIVE[self.pid] = self
        if self.group:
            _tell_reaper(f"+{self.pid}")
        return self

    def reaped(self) -> None:
        """It has been waited for: out of the registry (and its group untied)."""
        if _LIVE.pop(self.pid, None) is not None and self.group:
            _tell_reaper(f"-{self.pid}")

    def kill(self) -> None:
        """SIGKILL it, with its whole process group when it leads one (what is left of a
        group outlives its reaped leader, and Linux gives no new process the id of a
        group still in use); a lone child its Popen has reaped is left alone (its pid
        may be another process's by then)."""
        if self.lifeline is not None:
            if self.process is None or self.process.returncode is None:
                with contextlib.suppress(OSError):  # gone already: nothing to end
                    os.write(self.lifeline, b"k")
            return
        if self.group:
            with contextlib.suppress(ProcessLookupError, PermissionError, AttributeError):
                os.killpg(self.pid, signal.SIGKILL)
                return
        if self.process is not None and self.process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    def _force(self) -> None:
        """Kill it past its grace: a supervisor that has not ended by itself is SIGKILLed
        (its command's group is tied to the reaper all the same)."""
        if self.lifeline is None:
            self.kill()
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)

    def reap(self, grace: float = 1.0) -> int:
        """Wait for it to exit; one still running after ``grace`` seconds is killed.
        Returns its exit code, or minus the signal that ended it (as Popen does)."""
        try:
            if self.process is not None:
                try:
                    return self.process.wait(timeout=grace)
                except subprocess.TimeoutExpired:
                    self._force()
                    return self.process.wait()
            pause, deadline = 0.0002, time.monotonic() + grace
            while time.monotonic() < deadline:
                done, status = os.waitpid(self.pid, os.WNOHANG)
                if done:
                    return os.waitstatus_to_exitcode(status)
                time.sleep(pause)
                pause = min(pause * 2, 0.02)
            self._force()
            return os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        finally:
            self.reaped()


def live_children() -> list[Child]:
    """Every child started and not yet reaped."""
    return list(_LIVE.values())


def kill_children() -> None:
    """SIGKILL every live child (process groups whole). Safe in a signal handler."""
    for child in live_children():
        child.kill()


_INTERRUPT_GRACE = 1.0  # seconds an interrupted process has to unwind by itself


def _exit_after(seconds: float, status: int) -> None:
    time.sleep(seconds)
    logging.shutdown()
    os._exit(status)


@contextlib.contextmanager
def children_die_on_interrupt() -> Iterator[None]:
    """While inside, Ctrl-C (SIGINT) SIGKILLs every live child at once and then raises
    KeyboardInterrupt as usual: unwinding never waits for a child (a batch worker still
    starting, a command a tool call waits on in a thread), and if it has not ended the
    process within a second (a thread blocked on stdin holds an event loop's shutdown
    for ever) the process exits with 130 all the same; every write is one transaction,
    so nothing half-written stays. Other deaths need no handler: the parent-death
    signal and the reaper see them. Main thread only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupted(signum: int, frame: object) -> None:
        kill_children()
        threading.Thread(target=_exit_after, args=(_INTERRUPT_GRACE, 130), daemon=True).start()
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


# --- the reaper: process groups die with this process ---------------------------------------

# A stdlib-only interpreter (started with -I -S: no site, no fetchledger, ~30 ms).
# It forks once so that it is no child of fetchledger's (nothing waits for it), leaves
# for a session of its own (a signal to fetchledger's process group, from a terminal
# or from `timeout`, does not reach it), and ignores the signals that end sessions.
# It reads "+PGID" / "-PGID" lines on stdin; at end of file -- fetchledger's end of
# the pipe closed, however it died -- it SIGKILLs every group still tied, and exits.
_REAPER = """
import os, signal
if os.fork():
    os._exit(0)
os.setsid()
for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGTSTP", "SIGTTIN", "SIGTTOU"):
    signal.signal(getattr(signal, name), signal.SIG_IGN)
groups, pending = set(), b""
while True:
    try:
        chunk = os.read(0, 4096)
    except InterruptedError:
        continue
    if not chunk:
        break
    *lines, pending = (pending + chunk).split(b"\\n")
    for line in lines:
        (groups.add if line[:1] == b"+" else groups.discard)(int(line[1:]))
for group in groups:
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
"""
_REAPER_LOCK = threading.Lock()
_REAPER_PIPES: dict[int, int] = {}  # the process a reaper serves -> our end of its pipe


def start_reaper() -> None:
    """Start this process's reaper now, before the first process group it must tie
    (started on first use otherwise, its ~30 ms would leave that group untied for as
    long if fetchledger were killed then)."""
    with _REAPER_LOCK:
        _reaper_pipe()


def _tell_reaper(line: str) -> None:
    """Send one line to this process's reaper (started on first use). Best effort: a
    reaper that cannot start leaves the parent-death signal and kill_children."""
    with _REAPER_LOCK:
        fd = _reaper_pipe()
        if fd is not None:
            with contextlib.suppress(OSError):
                os.write(fd, f"{line}\n".encode())


def _reaper_pipe() -> int | None:
    fd = _REAPER_PIPES.get(os.getpid())
    if fd is not None:
        return fd
    read_fd, write_fd = os.pipe()  # close-on-exec: no command inherits our end
    try:
        starter = subprocess.Popen([sys.executable, "-I", "-S", "-c", _REAPER], stdin=read_fd,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        starter.wait()  # it forks the reaper and exits at once
    except OSError:
        os.close(write_fd)
        return None
    finally:
        os.close(read_fd)
    _REAPER_PIPES[os.getpid()] = write_fd
    return write_fd


def _leave_reaper() -> None:
    """In a forked child: close the parent's end of its reaper's pipe (the reaper must
    see it close when the parent dies, and the child has no groups of its own)."""
    for fd in _REAPER_PIPES.values():
        with contextlib.suppress(OSError):
            os.close(fd)
    _REAPER_PIPES.clear()


# --- the child side ------------------------------------------------------------------------


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


def die_with_parent(parent_pid: int) -> None:
    """Make this process die when process ``parent_pid`` (its parent) does: kill -9 of
    the parent leaves no orphan. Also fit for a ``preexec_fn``."""
    libc = _libc()
    if libc is not None:
        with contextlib.suppress(Exception):
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent_pid:  # it died before the request took hold
            os._exit(1)
    else:
        threading.Thread(target=_watch, args=(parent_pid,), daemon=True).start()


def _watch(pid: int) -> None:
    while is_alive(pid):
        time.sleep(0.5)
    os._exit(1)


def is_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def claim_stdout() -> IO[bytes]:
    """Standard output as this child's frame channel (call it before :func:`quiet`)."""
    return os.fdopen(os.dup(1), "wb")


def quiet(*, stderr: bool) -> None:
    """Silence library logging and fd 1, where a stray print (of Python or C code)
    would corrupt frames or reach the user's terminal; with ``stderr`` also warnings
    and fd 2."""
    logging.disable(logging.CRITICAL)
    _to_devnull(1)
    if stderr:
        warnings.simplefilter("ignore")
        _to_devnull(2)
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115  (lives until exit)
    sys.stdout = sys.stderr


def _to_devnull(fd: int) -> None:
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)


def limit_resources(*, cpu_seconds: int, extra_memory: int) -> None:
    """Cap this process's CPU seconds and address space (``extra_memory`` bytes over
    what it uses now), and turn off core dumps."""
    resource = _RESOURCE
    if resource is None:  # not POSIX: only the parent's wall-clock deadline applies
        return
    _lower(resource, "RLIMIT_CPU", cpu_seconds)
    _lower(resource, "RLIMIT_CORE", 0)
    in_use = _address_space_in_use()
    if in_use is not None:
        _lower(resource, "RLIMIT_AS", in_use + extra_memory)


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


# --- starting children ---------------------------------------------------------------------


def fork_is_safe() -> bool:
    """True where a bare fork() is both available and safe: Linux, one thread (forking a
    threaded process can deadlock the child)."""
    return sys.platform.startswith("linux") and threading.active_count() == 1


def fork_child(body: Callable[[], int]) -> Child:
    """Fork; the child dies with this process, takes Ctrl-C's default action, runs
    ``body`` and exits with the status it returns (70 if it raises). The returned
    child is tracked until reaped."""
    _libc()  # loaded in the parent, once: the child must not load libraries
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child ends in os._exit, coverage cannot see it
        status = 70
        try:
            _LIVE.clear()  # the parent's other children are not this one's
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            _leave_reaper()
            die_with_parent(parent)
            status = body()
        finally:
            os._exit(status)
    return Child(pid).track()


def interpreter_argv(entry: str, *args: str) -> list[str]:
    """The command line of a fresh interpreter that dies with this process and runs
    ``entry`` (``"module:function"``) with ``args`` (strings); the function's return
    value is the exit status. The entry stands in the command line, so ``ps`` shows
    what each child is."""
    return [sys.executable, "-c", _BOOT, entry, str(os.getpid()), _PACKAGE_ROOT, *args]


def _interpreter_main() -> None:
    """The body of :func:`interpreter_argv`'s interpreter."""
    entry, parent, args = sys.argv[1], sys.argv[2], sys.argv[4:]
    die_with_parent(int(parent))
    module, _, function = entry.partition(":")
    status = getattr(importlib.import_module(module), function)(*args)
    sys.exit(status if isinstance(status, int) else 0)
