"""Looking at processes from tests (Linux /proc): are children reaped, is a pid gone, is
every process of a run gone within a bound of its death (issue 13, nothing left running)?"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from measured import record_fact


def children_of(pid: int) -> list[int]:
    """Child processes of ``pid``, zombies included (a zombie is an unreaped child)."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines()
                          if ":\t" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(pid):
            found.append(int(status.parent.name))
    return found


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def wait_gone(pid: int, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return False


def dies_with_killed_parent(parent_script: str, env: dict[str, str] | None = None) -> bool:
    """Run ``parent_script`` (Python that starts a child and prints its pid), SIGKILL the
    parent once the child runs, and tell whether the child is gone within 3 s (one that
    is not is killed here)."""
    parent = subprocess.Popen([sys.executable, "-c", parent_script], stdout=subprocess.PIPE,
                              text=True, env=env)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    time.sleep(0.1)
    assert alive(child)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    parent.stdout.close()
    gone = wait_gone(child, 3.0)
    if not gone:
        os.kill(child, signal.SIGKILL)
    return gone


# --- nothing left running: a run's processes, found by a mark in their environment ---------


def marked(mark: str) -> list[int]:
    """Live processes whose environment holds ``FETCHLEDGER_TEST_MARK=mark`` (every
    process one run started; zombies count as gone)."""
    needle = f"FETCHLEDGER_TEST_MARK={mark}".encode()
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if needle in environ.read_bytes().split(b"\0") and alive(int(environ.parent.name)):
                found.append(int(environ.parent.name))
        except (OSError, ValueError):
            continue
    return found


class Lifetimes:
    """When each process of a run ended, seen as it happens.

    ``arm()`` takes the run's processes (by their mark) and opens a pidfd on each
    before the signal is sent; ``gone_after(delivered, bound)`` then waits on those
    pidfds (the kernel says when each process exits: no scan of /proc per poll,
    whose length under a load of 10 on 2 cores made the old polling miss a 2 s bound
    that the processes had kept; ``delivered`` is taken just before the kill, so the
    figure is an upper bound) and, once they are gone, scans /proc again for any
    process of the run started since (a worker starting as the signal came), waiting
    on those too. It answers the seconds from ``delivered`` (the moment the signal was
    sent) to the end of the last one, or None when one was still running ``bound``
    seconds after it; those still running are SIGKILLed."""

    def __init__(self, mark: str) -> None:
        self.mark = mark
        self.fds: dict[int, int] = {}
        self.left: list[int] = []  # still running at the end (then SIGKILLed)

    def arm(self) -> int:
        for pid in marked(self.mark):
            self._watch(pid)
        return len(self.fds)

    def _watch(self, pid: int) -> None:
        if pid in self.fds:
            return
        with contextlib.suppress(ProcessLookupError):  # gone already
            self.fds[pid] = os.pidfd_open(pid)

    def gone_after(self, delivered: float, bound: float) -> float | None:
        last = delivered
        ended: set[int] = set()
        try:
            while True:
                waiting = {fd: pid for pid, fd in self.fds.items() if pid not in ended}
                poller = select.poll()
                for fd in waiting:
                    poller.register(fd, select.POLLIN)
                while waiting:
                    left = delivered + bound - time.monotonic()
                    ready = poller.poll(max(0.0, left) * 1000) if left > 0 else []
                    now = time.monotonic()
                    if not ready:
                        break
                    for fd, _ in ready:
                        ended.add(waiting.pop(fd))
                        poller.unregister(fd)
                        last = max(last, now)
                if waiting:
                    return None
                started_since = [pid for pid in marked(self.mark) if pid not in ended]
                if not started_since:
                    return last - delivered
                if time.monotonic() > delivered + bound:
                    return None
                for pid in started_since:
                    self._watch(pid)
        finally:
            self.left = marked(self.mark)
            for pid in self.left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            for fd in self.fds.values():
                os.close(fd)
            self.fds.clear()


SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP", "SIGKILL"]
GONE_WITHIN = 2.0


def wait_for(condition: object, seconds: float) -> float | None:
    """Seconds until ``condition()`` holds, or None if it did not within ``seconds``."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if condition():  # type: ignore[operator]
            return time.monotonic() - started
        time.sleep(0.02)
    return None


class Run:
    """``python -m fetchledger ARGS`` with a marked environment."""

    def __init__(self, args: list[str], cwd: Path, **popen: object) -> None:
        self.mark = uuid.uuid4().hex
        env = {**os.environ, "FETCHLEDGER_TEST_MARK": self.mark,
               "FETCHLEDGER_LEDGER": str(cwd / "ledger.db")}
        self.process = subprocess.Popen([sys.executable, "-m", "fetchledger", *args], cwd=cwd,
                                        env=env, **popen)  # type: ignore[call-overload]

    def started(self, count: int, what: str) -> None:
        """Wait until ``count`` processes of this run are up (fetchledger included)."""
        assert wait_for(lambda: len(marked(self.mark)) >= count, 20.0) is not None, \
            f"{what} did not start"
        time.sleep(0.1)

    def call_mcp_tool(self, name: str, arguments: dict[str, object], client: str) -> None:
        """On a run of ``mcp`` with piped stdin/stdout: initialize, then send one
        ``tools/call`` (id 2) and return without waiting for its answer."""
        assert self.process.stdin is not None and self.process.stdout is not None
        for message in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": client, "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": name, "arguments": arguments}},
        ):
            self.process.stdin.write((json.dumps(message) + "\n").encode())
            self.process.stdin.flush()
            if message.get("id") == 1:
                assert json.loads(self.process.stdout.readline())["id"] == 1

    def kill_and_check(self, how: str, what: str = "") -> None:
        """Send ``how`` (a signal, or ``stdin``: close it) and check that every process of
        the run is gone within GONE_WITHIN seconds of that moment, each one's end seen
        through its pidfd as it happens (see :class:`procs.Lifetimes`)."""
        watch = Lifetimes(self.mark)
        assert watch.arm() >= 1
        delivered = time.monotonic()  # just before: the kill may run them all before we resume
        if how == "stdin":
            assert self.process.stdin is not None
            self.process.stdin.close()
        else:
            os.kill(self.process.pid, getattr(signal, how))
        took = watch.gone_after(delivered, GONE_WITHIN)
        self.process.wait(timeout=5)
        record_fact("lifetime", f"{what or 'fetchledger'}: {how}",
                    gone_seconds=None if took is None else round(took, 3), left=len(watch.left),
                    load=round(os.getloadavg()[0], 1))
        assert took is not None, f"after {how}, {len(watch.left)} processes were still running"
