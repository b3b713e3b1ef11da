"""Run every benchmark script of this folder (``bench_*.py``), one after another."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main() -> int:
    failed = 0
    for script in sorted(Path(__file__).resolve().parent.glob("bench_*.py")):
        print(f"# {script.name}\n", flush=True)
        failed += subprocess.run([sys.executable, str(script)], check=False).returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
