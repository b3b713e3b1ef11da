"""The README's Python example runs as written (from examples/, on a fresh ledger)."""

from __future__ import annotations

import os
import re
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
