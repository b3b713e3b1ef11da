"""A user's command under a supervisor: nothing it starts outlives fetchledger.

A command's process group dies with fetchledger (the reaper of
:mod:`.children`), but a process may leave its group: ``setsid``, a daemon's
double fork, ``nohup … &`` that outlives its shell. Such a process was left
running, reparented to PID 1, after any death of fetchledger — and after a
normal end of the run too. So the command runs under a supervisor:

- a fork of fetchledger (where forking is safe: one thread) or else a small
  stdlib-only interpreter (``-I -S``), in a session of its own, that is a
  *child subreaper* (``PR_SET_CHILD_SUBREAPER``): every process below it,
  whatever group or session it moves to, stays its descendant when its own
  parent exits;
- it starts the command (its stdout/stderr are the command's, its stdin
  ``/dev/null``, in a process group of its own, signal dispositions reset),
  writes ``pid N`` — or ``error ERRNO MESSAGE`` when it cannot start — and
  later ``exit CODE`` on a status pipe, and gives up its own copies of the
  output pipes so that they close when the command's processes do;
- its standard input is a *lifeline*: when fetchledger's end closes (the run
  finished, or fetchledger died, SIGKILL included) or a byte arrives on it (a
  kill), it SIGKILLs every descendant until none is left and exits;
- it is two processes (issue 13, session 11): an outer supervisor, fetchledger's
  child, forks the inner one, which starts the command. Both are subreapers and
  both read the lifeline; the outer ends everything when the inner ends, and the
  inner when the outer's pipe closes. So a kill -9 of either supervisor leaves
  nothing either: the inner's orphans go to the outer, and the outer's death is
  seen by the inner (one supervisor alone, killed, had let the command and
  whatever left its group run on under PID 1).

The command's group is still tied to the reaper as before, so even a killed
supervisor leaves no group behind.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from .children import Child, _libc, fork_is_safe, start_reaper

__all__ = ["Supervised", "SupervisorUnavailable", "kill_descendants"]

# The supervisor's body: builtin modules only (os, signal, select, time), so that a
# fresh ``-I -S`` interpreter runs it without importing anything heavy, and a forked
# fetchledger runs the same code. ``main(status, argv, subreaper)``.
_SUPERVISOR = r"""
import os, select, signal, time

def say(status, line):
    try:
        os.write(status, (line + "\n").encode("utf-8", "backslashreplace"))
    except OSError:
        pass

def children(pid):
    found = []
    for task in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/children" % (pid, task), "rb") as handle:
            found.extend(int(child) for child in handle.read().split())
    return found

def scanned(root):
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/" + name + "/stat", "rb") as handle:
                    parents[int(name)] = int(handle.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    found, frontier = [], [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in found:
                found.append(pid)
                frontier.append(pid)
    return found

def descendants():
    me = os.getpid()
    try:
        found, frontier = [], children(me)
        while frontier:
            pid = frontier.pop()
            found.append(pid)
            try:
                frontier.extend(children(pid))
            except OSError:
                pass
        return found
    except OSError:  # no /proc/PID/task/TID/children here: scan every process
        return scanned(me)

def kill_all():
    # SIGKILL every process below this one until none is left, reaping them (as a
    # subreaper, the orphans are ours)
    for _ in range(100):
        pids = descendants()
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        deadline = time.monotonic() + 0.2
        while time.monotonic() < deadline:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                time.sleep(0.002)

ENDING = []

def end(*_):
    if ENDING:
        return
    ENDING.append(True)
    kill_all()
    os._exit(0)

def outer(inner, lifeline):
    # the outer supervisor: a subreaper above the inner one, so that a kill of the inner
    # (SIGKILL included) hands everything below it to us, and we end it all
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)  # our copies of the output and of the status pipe go
    os.dup2(null, 2)
    os.close(lifeline)
    try:
        watched = [os.pidfd_open(inner)]
    except (AttributeError, OSError):
        watched = []
    while True:
        # fetchledger's lifeline (a byte or its end), or the inner supervisor's end
        if select.select([0] + watched, [], [], 1.0 if watched else 0.01)[0]:
            end()
        try:
            if os.waitpid(inner, os.WNOHANG)[0]:
                end()
        except ChildProcessError:
            end()

def main(status, argv, subreaper):
    for name in ("SIGTERM", "SIGINT", "SIGHUP"):
        signal.signal(getattr(signal, name), end)
    subreaper()
    # two supervisors, each ending everything when the other dies: a kill -9 of either
    # leaves nothing (the inner's orphans go to the outer, a subreaper; the inner sees
    # the outer's end on a pipe of its own)
    watch, lifeline = os.pipe()
    try:
        inner = os.fork()
    except OSError:  # one supervisor: it still ends with fetchledger
        os.close(watch)
        os.close(lifeline)
        inner, watch = 0, None
    if inner:
        os.close(status)
        outer(inner, watch)
    if watch is not None:
        os.close(lifeline)
        subreaper()  # not inherited by a fork
    try:
        pid = os.posix_spawnp(
            argv[0], argv, os.environ, setsid=True,
            file_actions=[(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                          (os.POSIX_SPAWN_CLOSE, status)]
                         + ([(os.POSIX_SPAWN_CLOSE, watch)] if watch is not None else []),
            setsigdef=[signal.SIGPIPE, signal.SIGXFSZ, signal.SIGTERM, signal.SIGINT,
                       signal.SIGHUP])
    except OSError as exc:
        say(status, "error %d %s" % (exc.errno or 0, exc.strerror or exc))
        os._exit(0)
    say(status, "pid %d" % pid)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)  # our copies of the output: they close when the command's do
    os.dup2(null, 2)
    try:
        watched = [os.pidfd_open(pid)]
    except (AttributeError, OSError):
        watched = []
    lifelines = [0] + ([watch] if watch is not None else [])
    running = True
    while True:
        # the lifelines: a byte (a kill) or an end of file (fetchledger done or dead, the
        # outer supervisor dead)
        ready = select.select(lifelines + (watched if running else []), [], [],
                              1.0 if watched or not running else 0.01)[0]
        if set(ready) & set(lifelines):
            end()
        while True:  # the command, and orphans adopted as a subreaper
            try:
                got, code = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if got == 0:
                break
            if got == pid:
                running = False
                say(status, "exit %d" % os.waitstatus_to_exitcode(code))
"""
_CODE = compile(_SUPERVISOR, "<fetchledger supervisor>", "exec")
_SHARED: dict[str, object] = {"__name__": "fetchledger_supervisor"}
exec(_CODE, _SHARED)  # our own constant code: defines its functions, runs nothing


def kill_descendants() -> None:
    """SIGKILL every process below this one until none is left, reaping them — the
    supervisor's own loop, for any other subreaper of ours (the browser's render
    process)."""
    _SHARED["kill_all"]()  # type: ignore[operator]
_BOOT = ("import sys\n" + _SUPERVISOR + "\ndef subreaper():\n    try:\n        import ctypes\n"
         "        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)\n    except Exception:\n        pass\n"
         "main(int(sys.argv[1]), sys.argv[2:], subreaper)\n")
_PR_SET_CHILD_SUBREAPER = 36


class SupervisorUnavailable(Exception):
    """The supervisor cannot run here (not Linux, no interpreter): run the command as a
    plain process group."""


@dataclass
class _Pipes:
    status: tuple[int, int]
    lifeline: tuple[int, int]
    out: tuple[int, int]
    err: tuple[int, int] | None

    @classmethod
    def open(cls, merge_stderr: bool) -> _Pipes:
        return cls(os.pipe(), os.pipe(), os.pipe(), None if merge_stderr else os.pipe())

    def child_ends(self) -> list[int]:
        return [self.status[1], self.lifeline[0], self.out[1],
                *([self.err[1]] if self.err else [])]

    def close(self, fds: list[int]) -> None:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)


class Supervised:
    """A command running under its supervisor (see the module)."""

    def __init__(self, guard: Child, pipes: _Pipes, pid: int) -> None:
        self.guard, self.pid = guard, pid
        self.status, self.lifeline = pipes.status[0], pipes.lifeline[1]
        self.stdout: IO[bytes] | None = os.fdopen(pipes.out[0], "rb", buffering=0)
        self.stderr: IO[bytes] | None = (os.fdopen(pipes.err[0], "rb", buffering=0)
                                         if pipes.err else None)
        self.returncode: int | None = None
        self._pending = b""
        self._group = Child(pid, group=True).track()  # tied to the reaper as before

    @classmethod
    def start(cls, argv: Sequence[str], *, cwd: str, merge_stderr: bool,
              started_by: float) -> Supervised:
        """Start ``argv`` under a supervisor: forked from this process when that is safe
        (one thread), else a fresh interpreter. OSError as ``subprocess.Popen`` would
        raise it when the command cannot start (not found, not executable, no such
        working folder); SupervisorUnavailable when no supervisor can run here."""
        if not sys.platform.startswith("linux") or not hasattr(os, "posix_spawnp"):
            raise SupervisorUnavailable
        start_reaper()
        pipes = _Pipes.open(merge_stderr)
        parent_ends = [pipes.status[0], pipes.lifeline[1], pipes.out[0],
                       *([pipes.err[0]] if pipes.err else [])]
        try:
            guard = (_forked(argv, cwd, pipes) if fork_is_safe()
                     else _interpreter(argv, cwd, pipes))
        except BaseException:
            pipes.close(parent_ends)
            raise
        finally:
            pipes.close(pipes.child_ends())
        first, rest = _read_line(pipes.status[0], max(started_by, time.monotonic() + 10))
        if first is None or first.startswith("error "):
            pipes.close(parent_ends)  # the lifeline closed: the supervisor ends
            guard.reap(grace=2.0)
            if first is None:
                raise SupervisorUnavailable
            number, _, message = first.removeprefix("error ").partition(" ")
            code = int(number) if number.isdigit() else errno.EIO
            raise OSError(code, message or os.strerror(code))
        os.set_blocking(pipes.status[0], False)
        running = cls(guard, pipes, int(first.removeprefix("pid ")))
        running._take(rest)
        return running

    def poll(self) -> int | None:
        """The command's exit code once it has exited (minus a signal), else None."""
        if self.returncode is None:
            try:
                chunk: bytes | None = os.read(self.status, 4096)
            except BlockingIOError:
                chunk = None
            except OSError:
                chunk = b""
            if chunk:
                self._take(chunk)
            elif chunk == b"":  # the supervisors are gone (killed): the command with them
                self.returncode = -signal.SIGKILL
                self._group.kill()  # were both killed at once, its group still dies
        return self.returncode

    def _take(self, chunk: bytes) -> None:
        *lines, self._pending = (self._pending + chunk).split(b"\n")
        for line in lines:
            if line.startswith(b"exit "):
                self.returncode = int(line[5:])

    def wait(self, timeout: float) -> int:
        """The exit code; subprocess.TimeoutExpired if it has not exited in time."""
        deadline = time.monotonic() + timeout
        while self.poll() is None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired("command", timeout)
            select.select([self.status], [], [], min(left, 0.1))
        assert self.returncode is not None
        return self.returncode

    def kill(self) -> None:
        """Kill the command's group now, and have the supervisor end every other process
        below it."""
        if self.returncode is None:
            self._group.kill()
        self.guard.kill()

    def finish(self) -> None:
        """The run is over: whatever the command left running is killed, the supervisor
        ends, every pipe is closed (nothing is left behind however it ended)."""
        self.guard.kill()  # a byte on the lifeline: the supervisor ends everything below
        try:
            self.guard.reap(grace=2.0)
        finally:
            self._group.reaped()
            for stream in (self.stdout, self.stderr):
                if stream is not None:
                    stream.close()
            for fd in (self.lifeline, self.status):
                with contextlib.suppress(OSError):
                    os.close(fd)


def _forked(argv: Sequence[str], cwd: str, pipes: _Pipes) -> Child:
    """The supervisor as a fork of this (single-threaded) process: no interpreter to
    start, the supervisor's code already compiled."""
    libc = _libc()  # loaded in the parent: the child loads no library
    status = pipes.status[1]
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child ends in os._exit
        try:
            for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(number, signal.SIG_DFL)  # not fetchledger's handlers
            os.setsid()
            os.dup2(pipes.lifeline[0], 0)
            os.dup2(pipes.out[1], 1)
            os.dup2(pipes.err[1] if pipes.err else pipes.out[1], 2)
            high = os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 4096
            os.closerange(3, status)
            os.closerange(status + 1, max(high, status + 2))
            try:
                os.chdir(cwd)
            except OSError as exc:
                os.write(status, f"error {exc.errno or 0} {exc.strerror}\n".encode())
                os._exit(0)
            namespace: dict[str, object] = {"__name__": "fetchledger_supervisor"}
            exec(_CODE, namespace)  # our own constant code

            def subreaper() -> None:
                if libc is not None:
                    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)

            namespace["main"](status, list(argv), subreaper)  # type: ignore[operator]
        finally:
            os._exit(70)
    return Child(pid, lifeline=pipes.lifeline[1]).track()


def _interpreter(argv: Sequence[str], cwd: str, pipes: _Pipes) -> Child:
    """The supervisor as a fresh stdlib-only interpreter (where forking this process is
    not safe: threads)."""
    if not sys.executable:
        raise SupervisorUnavailable
    try:
        process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _BOOT, str(pipes.status[1]), *argv],
            cwd=cwd, stdin=pipes.lifeline[0], stdout=pipes.out[1],
            stderr=pipes.err[1] if pipes.err else pipes.out[1],
            pass_fds=(pipes.status[1],), start_new_session=True)
    except FileNotFoundError as exc:
        if exc.filename == sys.executable and os.path.isdir(cwd):
            raise SupervisorUnavailable from exc
        raise  # the working folder: as Popen of the command itself would say
    return Child(process.pid, process=process, lifeline=pipes.lifeline[1]).track()


def _read_line(fd: int, deadline: float) -> tuple[str | None, bytes]:
    """The supervisor's first line (None if it ends first, or past ``deadline``) and what
    came after it in the same read."""
    data = b""
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            return None, b""
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return None, b""
        chunk = os.read(fd, 4096)
        if not chunk:
            return None, b""
        data += chunk
    first, _, rest = data.partition(b"\n")
    return first.decode("utf-8", "replace"), rest
