"""Issue 13, session 11 (branch redteam11): held-out variants of "nothing left running".

Real processes, real signals. A command's supervisor (``adapters/supervised.py``) is
itself a process that can die: a kill -9 of it — alone, or with fetchledger — must
leave nothing of the run behind within 2 s either, whatever the command did (left its
group with ``setsid``, forked a deep tree, closed its output early, ignored SIGTERM and
SIGHUP, ``disown``, ``nohup``, ``setsid -f``). "The supervisor" is taken two ways: the
child of fetchledger, and the parent of the command (one process on main, two since
this pass). Against main's code, 22 of the 26 cases run here failed
(systemd-run, skipped where it cannot start a unit, is a Known limit); the last test
is of a refactor (one kill loop for the supervisor and the browser), not a defect.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from procs import GONE_WITHIN, Lifetimes, Run, alive, marked, wait_for

from measured import record_fact

# name -> (the command of `run`, the start of the command line of one of its processes
# that stays running, how many processes of the run are up once it runs)
COMMANDS = {
    "setsid tree": (["--shell", "--", "setsid sleep 501 & sleep 502; wait"], "sleep 502", 4),
    "one command": (["--", "sleep", "503"], "sleep 503", 3),
    "deep tree": (["--shell", "--",
                   "sh -c 'sh -c \"sleep 505 & sleep 506\" & sleep 507' & sleep 508; wait"],
                  "sleep 508", 6),
    "output closed early": (["--shell", "--", "exec >&- 2>&-; setsid sleep 509 & sleep 510; wait"],
                            "sleep 510", 4),
    "ignores TERM and HUP": (["--shell", "--", "trap '' TERM HUP INT; "
                              "setsid sh -c \"trap '' TERM HUP; sleep 511\" & sleep 512; wait"],
                             "sleep 512", 4),
    "disown nohup setsid -f": (["--", "bash", "-c", "sleep 513 & disown; "
                                "nohup sleep 514 >/dev/null 2>&1 & setsid -f sleep 515; sleep 516"],
                               "sleep 516", 5),
}

# what is killed: the supervisor as the child of fetchledger ("outer") or as the parent
# of the command ("inner"); "+fetchledger": fetchledger is SIGKILLed at the same moment
TARGETS = [("outer", "SIGKILL"), ("inner", "SIGKILL"), ("outer+fetchledger", "SIGKILL"),
           ("inner+fetchledger", "SIGKILL")]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _supervisors(mark: str, top: int, needle: str) -> tuple[int, int]:
    """(the supervisor that is fetchledger's child, the supervisor that is the parent of
    the command), found from a process of the command up to ``top`` (fetchledger or the
    MCP server)."""
    [process] = [p for p in marked(mark) if _cmdline(p).startswith(needle)]
    chain = [process]
    while chain[-1] != top:
        chain.append(_parent(chain[-1]))
    outer = chain[-2]
    supervisors = [p for p in chain[:-1]
                   if _cmdline(p) == _cmdline(top) or " -I -S -c " in _cmdline(p)]
    return outer, supervisors[0]


@pytest.mark.parametrize(("target", "how"), TARGETS, ids=[t for t, _ in TARGETS])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_killed_supervisor_leaves_nothing_running(tmp_path: Path, command: str, target: str,
                                                    how: str) -> None:
    """On main, a kill -9 of the supervisor left the command running under PID 1 — its
    group was never killed (the supervisor's end was read as the command's exit) — and
    every process that had left the group with it; fetchledger itself waited on their
    output."""
    args, needle, count = COMMANDS[command]
    run = Run(["run", *args], tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run.started(count, "the command")
    outer, inner = _supervisors(run.mark, run.process.pid, needle)
    watch = Lifetimes(run.mark)
    assert watch.arm() >= count
    delivered = time.monotonic()
    os.kill(outer if target.startswith("outer") else inner, getattr(signal, how))
    if target.endswith("+fetchledger"):
        os.kill(run.process.pid, signal.SIGKILL)
    took = watch.gone_after(delivered, GONE_WITHIN)
    run.process.wait(timeout=10)
    record_fact("lifetime", f"run, {command}: the {target} supervisor, {how}",
                gone_seconds=None if took is None else round(took, 3), left=len(watch.left),
                load=round(os.getloadavg()[0], 1))
    assert took is not None, f"{len(watch.left)} processes outlived the supervisor's kill"


def _mcp_run_command(tmp_path: Path, argv: list[str]) -> Run:
    run = Run(["mcp", "--allow-command", argv[0]], tmp_path, stdin=subprocess.PIPE,
              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    run.call_mcp_tool("run_command", {"argv": argv}, "heldout-lifetimes")
    return run


def _answer(run: Run, seconds: float) -> dict[str, object] | None:
    assert run.process.stdout is not None
    if not select.select([run.process.stdout], [], [], seconds)[0]:
        return None
    line = run.process.stdout.readline()
    return json.loads(line) if line else None


@pytest.mark.parametrize("target", ["outer", "inner"])
def test_a_killed_supervisor_under_the_mcp_server_leaves_nothing_and_the_server_answers(
        tmp_path: Path, target: str) -> None:
    """The MCP server outlives a supervisor it started: the command and what it left
    (here in another session) are gone within 2 s, and the tool call is answered."""
    run = _mcp_run_command(tmp_path, ["bash", "-c", "setsid sleep 521 & sleep 522; wait"])
    try:
        run.started(5, "run_command")
        outer, inner = _supervisors(run.mark, run.process.pid, "sleep 522")
        below = [p for p in marked(run.mark)
                 if p not in (run.process.pid, outer) and _is_below(p, outer)] + [outer]
        os.kill(outer if target == "outer" else inner, signal.SIGKILL)
        took = wait_for(lambda: not any(alive(p) for p in below), GONE_WITHIN)
        left = [_cmdline(p) for p in below if alive(p)]
        for pid in below:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        assert took is not None, f"left running: {left}"
        answer = _answer(run, 10.0)
        assert answer is not None and answer.get("id") == 2, answer
        assert alive(run.process.pid)  # the server itself goes on
    finally:
        run.process.kill()
        run.process.wait(timeout=10)
        for pid in marked(run.mark):
            os.kill(pid, signal.SIGKILL)


def _is_below(pid: int, ancestor: int) -> bool:
    while pid > 1:
        try:
            pid = _parent(pid)
        except (OSError, IndexError, ValueError):
            return False
        if pid == ancestor:
            return True
    return False


def _systemd_runs() -> bool:
    if shutil.which("systemd-run") is None:
        return False
    probe = subprocess.run(["systemd-run", "--user", "--scope", "true"],
                           check=False, capture_output=True, timeout=10)
    return probe.returncode == 0


@pytest.mark.skipif(not _systemd_runs(), reason="systemd-run cannot start a unit here "
                    "(no systemd): a process handed to it is outside any tree we can see")
def test_systemd_run_is_a_known_limit(tmp_path: Path) -> None:
    """A process handed to systemd (``systemd-run``) belongs to systemd's tree, not to the
    run's: it is a Known limit (docs/reliability.md), checked here where systemd runs."""
    run = Run(["run", "--", "systemd-run", "--user", "sleep", "530"], tmp_path,
              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run.process.wait(timeout=30)
    assert wait_for(lambda: not marked(run.mark), GONE_WITHIN) is not None


# The loop that ends everything below a subreaper is one function, shared by the
# supervisor and the browser's render process (`adapters/chromium.py`, whose own copy it
# replaced): a subreaper calling it leaves no descendant, in its group or another session.
SUBREAPER = """
import ctypes, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
subprocess.Popen(["sh", "-c", "setsid sleep 541 & sleep 542 & sh -c 'sleep 543' & wait"])
time.sleep(0.5)
from fetchledger.adapters.supervised import kill_descendants
from pathlib import Path
kill_descendants()
print(Path(f"/proc/{__import__('os').getpid()}/task/{__import__('os').getpid()}/children")
      .read_text().split())
"""


def test_the_shared_loop_kills_every_descendant_of_a_subreaper(tmp_path: Path) -> None:
    mark = __import__("uuid").uuid4().hex
    env = {**os.environ, "FETCHLEDGER_TEST_MARK": mark}
    process = subprocess.Popen([sys.executable, "-c", SUBREAPER], env=env,
                               stdout=subprocess.PIPE, text=True)
    try:
        assert wait_for(lambda: len(marked(mark)) >= 5, 20.0) is not None
        out, _ = process.communicate(timeout=30)
        assert out.strip() == "[]", out
        assert marked(mark) == []
    finally:
        for pid in marked(mark):
            os.kill(pid, signal.SIGKILL)
