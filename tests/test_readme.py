"""The README's examples run as written (from examples/, on a fresh ledger): the Python
example, and the quick start's command-line session with the venv's `fetchledger`."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_python_example_runs(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Python API", 1)[1]
    (code,) = re.findall(r"```python\n(.*?)```", section.split("\n## ", 1)[0], re.S)
    code = code.replace('Ledger("evidence.db")', f'Ledger({str(tmp_path / "e.db")!r})')
    env = {k: v for k, v in os.environ.items() if k != "FETCHLEDGER_ALLOW_PRIVATE"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT / "examples", env=env,
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "blocked_address 3" in done.stdout
    assert "['Retrieval', 'Failure']" in done.stdout
    assert "True []" in done.stdout


def _transcript(section: str) -> list[tuple[str, list[str]]]:
    """The ``$ command`` lines of the first code block of ``section`` and the lines
    shown after each (``[exit N]`` for a non-zero exit)."""
    block = re.search(r"```\n(.*?)```", section, re.S)
    assert block is not None
    steps: list[tuple[str, list[str]]] = []
    for line in block.group(1).splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif line.strip():
            steps[-1][1].append(line)
    return steps


def test_readme_command_line_example_runs_from_examples(tmp_path: Path) -> None:
    """After `make demo`, the quick start's commands run as shown from examples/, with
    the virtual environment's `fetchledger` (the one `. .venv/bin/activate` puts on
    PATH) and a fresh ledger."""
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert ". .venv/bin/activate" in quick and ".venv/bin/fetchledger" in quick
    assert "cd examples" in quick
    section = readme.split("## Command line", 1)[1].split("\n## ", 1)[0]
    steps = _transcript(section)
    assert len(steps) >= 4 and steps[0][0].startswith("fetchledger read ")
    script = Path(sys.executable).with_name("fetchledger")
    env = {k: v for k, v in os.environ.items() if k != "FETCHLEDGER_ALLOW_PRIVATE"}
    env["FETCHLEDGER_LEDGER"] = str(tmp_path / "readme.db")
    for command, shown in steps:
        argv = shlex.split(command)
        assert argv[0] == "fetchledger"
        done = subprocess.run([str(script), *argv[1:]], cwd=ROOT / "examples", env=env,
                              capture_output=True, text=True, check=False, timeout=120)
        printed = done.stdout.splitlines() + done.stderr.splitlines()
        if done.returncode:
            printed.append(f"[exit {done.returncode}]")
        assert printed == shown, f"$ {command}"


# Commands that, once allowed with --allow-command, start a shell or other programs, read or
# write outside --root (issue 13): docs/mcp.md names each one under its warning.
ESCAPING_COMMANDS = [
    "python3", "node", "perl", "sh", "bash", "awk", "sed", "make",  # interpreters
    "env CMD", "xargs CMD", "find -exec", "timeout", "nice", "nohup", "sudo", "ssh",
    "git -c alias.x=", "core.pager", "npm", "docker", "busybox", "strace", "flock",
    "setsid", "stdbuf", "script -c", "fetchledger",  # commands that run commands
    "cat", "grep -r", "sqlite3", "curl file:///",  # read any path
    "tee", "dd", "curl -o", "sort -o", "find -fprint", "tar -x", "git clone",  # write any path
]


def test_the_mcp_guide_names_every_command_that_escapes_the_root() -> None:
    text = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    warning = text[text.index("**Warning — an allowed command is everything"):]
    warning = warning[:warning.index("\n\n**Network.**")]
    missing = [name for name in ESCAPING_COMMANDS if name not in warning]
    assert not missing, f"docs/mcp.md's warning does not name {missing}"
