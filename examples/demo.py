"""An offline end-to-end run of fetchledger: `make demo`.

Reads the project's own example sources into a fresh ledger in a temporary
folder, searches and confirms quotes, shows failures, and checks along the
way that every snippet handed out is verbatim in the stored text.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "sources"
SNIPPET = re.compile(r'^\[(\d+)\] "(.*)"( \(p\. [^)]+\))?$')


def run(env: dict[str, str], *args: str, expect: int = 0) -> str:
    """Run one fetchledger command, print it like a terminal session, return stdout."""
    print(f"$ fetchledger {shlex.join(args)}")
    done = subprocess.run([sys.executable, "-m", "fetchledger", *args], env=env,
                          capture_output=True, text=True, check=False)
    if done.stdout:
        print(done.stdout.rstrip())
    if done.stderr:
        print(done.stderr.rstrip())
    print(f"(exit {done.returncode})\n")
    if done.returncode != expect:
        sys.exit(f"demo failed: expected exit {expect}, got {done.returncode}")
    return done.stdout


def check_verbatim(env: dict[str, str], output: str) -> int:
    """Every snippet in JSON output must be text[start:end] of its source."""
    checked = 0
    for item in json.loads(output):
        if "error" in item:
            continue
        text = subprocess.run(
            [sys.executable, "-m", "fetchledger", "show", str(item["source"]["id"]), "--text"],
            env=env, capture_output=True, text=True, check=True).stdout
        for snippet in item["snippets"]:
            assert text[snippet["start"]:snippet["end"]] == snippet["quote"], snippet
            assert "\n" not in snippet["quote"]
            checked += 1
    return checked


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="fetchledger-demo-") as tmp:
        env = {**os.environ, "FETCHLEDGER_LEDGER": str(Path(tmp) / "ledger.db")}
        os.chdir(HERE)
        print(f"# a fresh ledger at {env['FETCHLEDGER_LEDGER']}\n")
        out = run(env, "read", "sources/boiling-point.md", "sources/pressure-cooker.html",
                  "sources/field-notes.txt")
        assert all(SNIPPET.match(line) or line.startswith("[") for line in out.splitlines())
        out = run(env, "--json", "read", "sources/boiling-point.md", "-q", "Everest altitude")
        checked = check_verbatim(env, out)
        run(env, "quotes", "temperature", "at", "high", "altitude")
        run(env, "quote", "2", "water boils at roughly 120 °C")
        run(env, "quote", "1", "water boils at about 60 °C", expect=1)
        run(env, "read", "sources/no-such-file.pdf", expect=2)
        run(env, "list")
        run(env, "show", "3")
        print(f"# demo ok: {checked} snippets checked verbatim against the stored text")


if __name__ == "__main__":
    main()
