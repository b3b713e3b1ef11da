"""Hardening cases run in a child process, measured: peak RSS, wall and CPU time.

``run_measured(code, *args)`` runs ``python -c code args`` and reaps it with
``os.wait4``, whose resource usage is that child's own (and its reaped
children's, e.g. the PDF sandbox): ``ru_maxrss`` is its peak resident set.
The child prints one JSON line last on stdout (``result()`` reads it).

``HEAVY`` is true under ``make hardening`` (``FETCHLEDGER_HARDENING=1``):
heavy cases run at full size there and at a light size in ``make test``.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

HEAVY = os.environ.get("FETCHLEDGER_HARDENING", "") == "1"
FIGURES = os.environ.get("FETCHLEDGER_HARDENING_FIGURES")  # a JSON-lines file to append to
_FRESH = itertools.count()


def best_ms(work: Callable[[int], object], repeat: int, *,
            clock: Callable[[], float] = time.perf_counter) -> float:
    """The best time of ``work(n)`` over ``repeat`` runs, each with an ``n`` never used
    before (a new input: no cache helps), by ``clock`` (wall time; CPU time,
    ``time.process_time``, on a shared machine), in milliseconds."""
    best = float("inf")
    for _ in range(repeat):
        n = next(_FRESH)
        started = clock()
        work(n)
        best = min(best, clock() - started)
    return best * 1000


@dataclass(frozen=True)
class Measured:
    returncode: int
    stdout: str
    stderr: str
    peak_mib: float
    seconds: float
    # user + system time of the child and its reaped children: the cases bound this,
    # not wall time, which a loaded machine (several test runs on 2 cores) stretches
    cpu_seconds: float

    def result(self) -> dict[str, Any]:
        lines = [line for line in self.stdout.splitlines() if line.startswith("{")]
        assert lines, f"no result from the child (exit {self.returncode}): {self.stderr[-2000:]}"
        return dict(json.loads(lines[-1]))


# The child reports its own high-water mark (VmHWM, counted from its exec) plus the
# peak of its own children (the PDF sandbox): ru_maxrss from wait4 would also count
# the pages of this (large) test process that the child held between fork and exec.
_PRELUDE = """
import atexit as _atexit, resource as _resource, sys as _sys
def _report_peak():
    with open("/proc/self/status") as status:
        own = next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
    kids = _resource.getrusage(_resource.RUSAGE_CHILDREN).ru_maxrss
    _sys.stderr.write(f"\\nMEASURED-PEAK-KIB {own} {kids}\\n")
_atexit.register(_report_peak)
"""
_PEAK = re.compile(r"^MEASURED-PEAK-KIB (\d+) (\d+)$", re.MULTILINE)


def run_measured(code: str, *args: str, timeout: float = 300.0,
                 env: dict[str, str] | None = None) -> Measured:
    """Run ``code`` in a fresh interpreter; its peak RSS (its own plus its children's
    peak, an upper bound of what it held at once), wall and CPU time."""
    started = time.monotonic()
    child = subprocess.Popen([sys.executable, "-c", _PRELUDE + code, *args],
                             stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env)
    out: dict[str, bytes] = {}

    def drain(name: str, stream: Any) -> None:
        out[name] = stream.read()

    readers = [threading.Thread(target=drain, args=(n, s), daemon=True)
               for n, s in (("out", child.stdout), ("err", child.stderr))]
    for reader in readers:
        reader.start()
    killer = threading.Timer(timeout, child.kill)
    killer.start()
    try:
        _, status, usage = os.wait4(child.pid, 0)
    finally:
        killer.cancel()
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    for reader in readers:
        reader.join()
    stderr = out.get("err", b"").decode("utf-8", "replace")
    reported = _PEAK.search(stderr)
    peak_kib = (int(reported.group(1)) + int(reported.group(2)) if reported
                else usage.ru_maxrss)  # killed before it could say: the coarser figure
    return Measured(child.returncode, out.get("out", b"").decode("utf-8", "replace"),
                    _PEAK.sub("", stderr).strip(), peak_kib / 1024,
                    time.monotonic() - started, usage.ru_utime + usage.ru_stime)


def record_figure(case: str, measured: Measured, **facts: Any) -> None:
    """Append a measured figure for docs/reliability.md (``make hardening`` collects them)."""
    if not FIGURES:
        return
    with open(FIGURES, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"case": case, "peak_mib": round(measured.peak_mib, 1),
                                 "seconds": round(measured.seconds, 2),
                                 "cpu_seconds": round(measured.cpu_seconds, 2), **facts}) + "\n")


def record_fact(table: str, case: str, **facts: Any) -> None:
    """Append a measured fact to one of ``make hardening``'s tables (``table`` names it:
    ``redaction``, ``lifetime``...)."""
    if not FIGURES:
        return
    with open(FIGURES, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"table": table, "case": case, **facts}) + "\n")


IDLE = """
import json, resource
import fetchledger, fetchledger.net, fetchledger.adapters.extract, fetchledger.adapters.web
print(json.dumps({"ok": True}))
"""


def idle_peak_mib() -> float:
    """Peak RSS of an interpreter that only imported fetchledger (the baseline)."""
    return run_measured(IDLE).peak_mib
