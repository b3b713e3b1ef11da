"""Run every benchmark script in this folder (``make bench``), one after another.

Each script prints its own table with its baseline measured in the same run,
and skips cleanly when the corpus it needs is absent.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    scripts = sorted(p for p in HERE.glob("*.py") if not p.name.startswith("_")
                     and p.name != Path(__file__).name)
    failed = []
    for script in scripts:
        print(f"\n## {script.stem}\n", flush=True)
        done = subprocess.run([sys.executable, str(script)], check=False)
        if done.returncode:
            failed.append(script.name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
