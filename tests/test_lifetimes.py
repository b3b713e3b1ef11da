"""Issue 13, nothing left running: any death of fetchledger leaves no process behind.

Real processes, real signals. Every process a run starts — fetchledger, the
command and its own children, the PDF sandbox, batch workers, the reaper —
inherits a marker in its environment; after SIGTERM, SIGINT, SIGHUP or
SIGKILL of fetchledger (or, for the MCP server, the client closing stdin)
none may be left within 2 s.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from pdfgen import fanout_pdf
from procs import GONE_WITHIN, SIGNALS, Run, marked, wait_for


@pytest.mark.parametrize("how", SIGNALS)
@pytest.mark.parametrize("shell", [False, True], ids=["command", "shell-with-children"])
def test_run_leaves_no_command_behind(tmp_path: Path, how: str, shell: bool) -> None:
    command = ["--shell", "--", "sleep 301 & sleep 302; wait"] if shell else ["--", "sleep", "303"]
    run = Run(["run", *command], tmp_path, stdout=subprocess.DEVNULL,
              stderr=subprocess.DEVNULL)
    run.started(4 if shell else 2, "the command")
    run.kill_and_check(how, "run --shell (sh and 2 children)" if shell else "run (1 command)")


def _mcp(tmp_path: Path) -> Run:
    run = Run(["mcp", "--allow-command", "sleep"], tmp_path, stdin=subprocess.PIPE,
              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert run.process.stdin is not None and run.process.stdout is not None

    def send(message: dict[str, object]) -> None:
        assert run.process.stdin is not None
        run.process.stdin.write((json.dumps(message) + "\n").encode())
        run.process.stdin.flush()

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "lifetimes", "version": "1"}}})
    assert json.loads(run.process.stdout.readline())["id"] == 1
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
          "params": {"name": "run_command", "arguments": {"argv": ["sleep", "304"]}}})
    return run


@pytest.mark.parametrize("how", ["stdin", *SIGNALS])
def test_the_mcp_server_leaves_nothing_behind_mid_run_command(tmp_path: Path, how: str) -> None:
    run = _mcp(tmp_path)
    run.started(2, "run_command")
    run.kill_and_check(how, "mcp, mid run_command")
    assert run.process.returncode is not None


@pytest.fixture
def stalled_server() -> Iterator[str]:
    """A loopback port that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held: list[socket.socket] = []
    listener.settimeout(0.05)
    import threading

    stop = threading.Event()

    def hold() -> None:
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    listener.close()


@pytest.mark.parametrize("how", SIGNALS)  # SIGINT and SIGHUP: issue 13's second pass
def test_batch_workers_die_with_the_batch(tmp_path: Path, stalled_server: str, how: str) -> None:
    urls = tmp_path / "urls.txt"
    urls.write_text("".join(f"{stalled_server}/page/{n}\n" for n in range(8)))
    run = Run(["batch", "--allow-private", "--no-robots", str(urls)], tmp_path,
              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run.started(2, "the batch workers")
    run.kill_and_check(how, "batch (workers, 8 stalled fetches)")


SANDBOXED = """
import sys
from fetchledger.adapters.sandbox import ChildLimits, run_in_child
run_in_child("sandbox_jobs:spin", b"", {}, ChildLimits(300, 1 << 30, 1 << 20),
             use_fork=sys.argv[1] == "fork")
"""


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
@pytest.mark.parametrize("use_fork", [True, False], ids=["forked", "interpreter"])
def test_the_pdf_sandbox_dies_with_its_parent(tmp_path: Path, how: str, use_fork: bool) -> None:
    mark = uuid.uuid4().hex
    tests = str(Path(__file__).parent)
    env = {**os.environ, "FETCHLEDGER_TEST_MARK": mark,
           "PYTHONPATH": os.pathsep.join(filter(None, [tests, os.environ.get("PYTHONPATH")]))}
    parent = subprocess.Popen([sys.executable, "-c", SANDBOXED, "fork" if use_fork else "spawn"],
                              env=env)
    run = Run.__new__(Run)
    run.mark, run.process = mark, parent
    run.started(2, "the sandbox child")
    run.kill_and_check(how, f"PDF sandbox ({'forked' if use_fork else 'interpreter'})")


@pytest.mark.parametrize("how", SIGNALS)
def test_read_of_a_slow_pdf_leaves_no_sandbox(tmp_path: Path, how: str) -> None:
    pdf = tmp_path / "fanout.pdf"
    pdf.write_bytes(fanout_pdf(8, leaf_ops=200))  # seconds of work in the sandbox
    run = Run(["read", str(pdf)], tmp_path, stdout=subprocess.DEVNULL,
              stderr=subprocess.DEVNULL)
    run.started(2, "the PDF sandbox")
    run.kill_and_check(how, "read of a slow PDF")


# --- issue 13, second pass: commands that ignore signals, the MCP server mid-read of a
# slow PDF (and every signal above for batch, read and the MCP server) ----------------


@pytest.mark.parametrize("how", SIGNALS)
def test_a_command_that_ignores_signals_is_still_gone(tmp_path: Path, how: str) -> None:
    """`trap '' TERM INT HUP`: the command and its child ignore what fetchledger passes
    on, so only the reaper's SIGKILL of the group ends them."""
    run = Run(["run", "--shell", "--", "trap '' TERM INT HUP; sleep 306 & sleep 307; wait"],
              tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run.started(4, "the command")
    run.kill_and_check(how, "run --shell, a command ignoring TERM/INT/HUP")


@pytest.mark.parametrize("how", ["stdin", "SIGTERM", "SIGKILL"])
def test_the_mcp_server_leaves_no_sandbox_mid_read_file(tmp_path: Path, how: str) -> None:
    pdf = tmp_path / "fanout.pdf"
    pdf.write_bytes(fanout_pdf(8, leaf_ops=200))
    run = Run(["mcp", "--root", str(tmp_path)], tmp_path, stdin=subprocess.PIPE,
              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    run.call_mcp_tool("read_file", {"path": str(pdf)}, "lifetimes")
    run.started(2, "the PDF sandbox")
    run.kill_and_check(how, "mcp, mid read_file of a slow PDF")


# --- issue 13, fourth pass: processes that leave the command's process group or session ---

# A daemon's double fork: the first child leaves for a session of its own and forks the
# one that stays; both parents exit at once, so the last one is nobody's child but PID 1's.
DAEMON = ("import os, time\n"
          "if os.fork(): os._exit(0)\n"
          "os.setsid()\n"
          "if os.fork(): os._exit(0)\n"
          "os.closerange(0, 3)\n"
          "time.sleep(308)\n")
LEAVERS = {
    "setsid": ["--shell", "--", "setsid sleep 309 & sleep 310; wait"],
    "double-fork": ["--shell", "--",
                    f"{shlex.quote(sys.executable)} -c {shlex.quote(DAEMON)}; sleep 311"],
    # job control: each background job leads a process group of its own
    "job-control": ["--", "bash", "-c", "set -m; sleep 316 & sleep 317 & wait"],
}


@pytest.mark.parametrize("how", SIGNALS)
@pytest.mark.parametrize("leaver", sorted(LEAVERS))
def test_a_process_that_left_the_group_dies_with_fetchledger(tmp_path: Path, how: str,
                                                             leaver: str) -> None:
    """`setsid` and a daemon's double fork put a process beyond the command's process
    group (and session): killing the group missed it, and it ran on under PID 1."""
    run = Run(["run", *LEAVERS[leaver]], tmp_path, stdout=subprocess.DEVNULL,
              stderr=subprocess.DEVNULL)
    run.started(4, "the command")
    run.kill_and_check(how, f"run, a process that left the group ({leaver})")


@pytest.mark.parametrize("script", [
    "sleep 312 >/dev/null 2>&1 & echo started",
    "setsid sleep 313 >/dev/null 2>&1 & echo started",
    "nohup sleep 314 >/dev/null 2>&1 & echo started",
    f"{shlex.quote(sys.executable)} -c {shlex.quote(DAEMON)}; echo started",
    "set -m; sleep 318 >/dev/null 2>&1 & echo started",
], ids=["background", "setsid", "nohup", "double-fork", "job-control"])
def test_a_run_that_ended_leaves_nothing_running(tmp_path: Path, script: str) -> None:
    """A command that exits leaving a background process, in its group or not, holding
    its output or not: once `run` has returned, nothing it started is left running."""
    run = Run(["run", "--shell", "--", script], tmp_path, stdout=subprocess.PIPE,
              stderr=subprocess.DEVNULL)
    out, _ = run.process.communicate(timeout=30)
    assert run.process.returncode == 0 and b'"started"' in out
    took = wait_for(lambda: not marked(run.mark), GONE_WITHIN)  # the reaper exits too
    left = [Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:80]
            for pid in marked(run.mark)]
    for pid in marked(run.mark):
        os.kill(pid, 9)
    assert took is not None, f"{len(left)} processes outlived the run: {left}"


@pytest.mark.parametrize("how", ["stdin", "SIGTERM", "SIGKILL"])
def test_the_mcp_server_leaves_no_setsid_child_mid_run_command(tmp_path: Path, how: str) -> None:
    run = Run(["mcp", "--allow-command", "setsid"], tmp_path, stdin=subprocess.PIPE,
              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    run.call_mcp_tool("run_command", {"argv": ["setsid", "-f", "sleep", "315"]}, "lifetimes")
    run.started(3, "run_command")
    run.kill_and_check(how, "mcp, mid run_command of a process that left the group")
