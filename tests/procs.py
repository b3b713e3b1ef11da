"""Looking at processes from tests (Linux /proc): are children reaped, is a pid gone?"""

from __future__ import annotations

import time
from pathlib import Path


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
    import os
    import signal
    import subprocess
    import sys

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
