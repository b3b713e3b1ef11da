"""Hardening figures: bombs, giant inputs and fuzzing, measured (``make hardening``).

Runs the hardening tests at full size (FETCHLEDGER_HARDENING=1: 1 GiB bombs, a
50 MB one-line file, a 48 MB one-paragraph page, a 2,000-page PDF, 2,000 fuzz
examples per property), each giant case in a child process whose peak RSS and
wall time the tests record, then prints them beside two baselines measured in
the same run:

- an idle interpreter that imported fetchledger (what every child starts from);
- plain httpx (``iter_bytes()``, its own decoders) reading 1 GiB ``gzip, gzip``
  bombs, in a child limited to 4 GiB of address space.

Issue 13's classes run too (secrets, identity, lifetimes, forged output, clean
errors): redaction time of 100,000-character command lines beside ``shlex`` and
the URL search before the fix, how long after each signal (the browser's render
included) the last process of a killed fetchledger was gone, with the load
average, per class the variants tried and how they ended, and per secret form
(sessions 4-8) the cases caught and the look-alikes left as written, counted by
running the redaction rules on them.

    python benchmarks/hardening.py [--figures FILE] [--skip-tests]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import ROOT, table

TESTS = ["tests/test_hardening_giants.py", "tests/test_hardening_fuzz.py",
         "tests/test_hardening_faults.py", "tests/web/test_hardening_bombs.py",
         "tests/web/test_hardening_addresses.py", "tests/test_injection.py",
         "tests/test_faults.py", "tests/test_processes.py", "tests/web/test_net_client.py",
         "tests/test_pdf.py",
         # issue 13: leaks, leftovers, forged lines and wrong identities
         "tests/test_hardening_leaks.py", "tests/test_secret_rules.py",
         "tests/web/test_secret_echoes.py", "tests/web/test_identity_keyed.py",
         "tests/test_identity_upgrade.py", "tests/test_lifetimes.py",
         "tests/test_forged_output.py", "tests/test_clean_errors.py",
         "tests/test_leak_variants.py",  # issue 13, second red-team pass
         # issue 13, third pass: the browser killed mid-render, the MCP guide's warning
         "tests/web/test_browser_lifetimes.py", "tests/test_readme.py",
         "tests/test_secret_nesting.py",  # issue 13, third pass: nested and unquoted secrets
         # secrets known by their shape: token formats and webhook URLs
         "tests/test_secret_shapes.py", "tests/web/test_secret_shapes_echo.py",
         # sessions 6-8: options, glued passwords, URL values by name and shape, secrets
         # fed on stdin, typed to prompts, in SQL, by place and in code
         "tests/test_redteam_variants.py", "tests/test_fed_secrets.py",
         "tests/test_heldout_secrets.py",  # session 9: held-out variants of the secrets
         # session 11: held-out output, identity, lifetimes, odd inputs (clean errors)
         "tests/test_heldout_output.py", "tests/web/test_heldout_identity.py",
         "tests/test_heldout_lifetimes.py", "tests/test_heldout_errors.py"]

# Issue 13's classes, by the test files that try their variants (the table of results).
ISSUE_13_CLASSES = {
    "URL identity (one resource one id, idempotent normalization, zone ids, punycode)":
        ["tests/web/test_identity_keyed.py", "tests/web/test_locators_web.py",
         "tests/test_identity_upgrade.py", "tests/web/test_heldout_identity.py"],
    "forged output (every field, every output path)":
        ["tests/test_forged_output.py", "tests/test_injection.py",
         "tests/test_heldout_output.py"],
    "clean errors (numbers, --json, read-only verbs, outputs, odd inputs)":
        ["tests/test_clean_errors.py", "tests/test_heldout_errors.py"],
    "nothing left running (every death, every child, the browser)":
        ["tests/test_lifetimes.py", "tests/web/test_browser_lifetimes.py",
         "tests/test_heldout_lifetimes.py"],
    "secrets (names, echoes, shell forms, shapes, fed on stdin, linear time)":
        ["tests/test_secret_rules.py", "tests/web/test_secret_echoes.py",
         "tests/test_hardening_leaks.py", "tests/test_leak_variants.py",
         "tests/test_secret_nesting.py", "tests/test_secret_shapes.py",
         "tests/web/test_secret_shapes_echo.py", "tests/test_redteam_variants.py",
         "tests/test_fed_secrets.py", "tests/test_heldout_secrets.py"],
    "the MCP guide names commands that escape the root": ["tests/test_readme.py"],
}

HTTPX_BASELINE = """
import json, resource, sys, httpx
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
decoded = 0
try:
    with httpx.stream("GET", sys.argv[1]) as response:
        for piece in response.iter_bytes():
            decoded += len(piece)
    outcome = "read it all"
except MemoryError:
    outcome = "MemoryError"
print(json.dumps({"outcome": outcome, "decoded": decoded}))
"""

IDLE = """
import json
import fetchledger, fetchledger.net, fetchledger.adapters.extract, fetchledger.adapters.web
print(json.dumps({"ok": True}))
"""


def run_tests(figures: Path, report: Path) -> int:
    env = {**os.environ, "FETCHLEDGER_HARDENING": "1",
           "FETCHLEDGER_HARDENING_FIGURES": str(figures)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--timeout", "900", f"--junitxml={report}", *TESTS], cwd=ROOT,
                          env=env, check=False)
    return done.returncode


def class_results(report: Path) -> list[list[object]]:
    """Per issue-13 class: the test cases (variants) run, passed, failed and skipped."""
    from xml.etree import ElementTree

    if not report.is_file():
        return []
    counts: dict[str, list[int]] = {}
    for case in ElementTree.parse(report).iter("testcase"):
        module = (case.get("classname") or "").split(".")
        path = "tests/" + "/".join(module[module.index("tests") + 1:] if "tests" in module
                                   else module) + ".py"
        for name, files in ISSUE_13_CLASSES.items():
            if path in files:
                tally = counts.setdefault(name, [0, 0, 0, 0])
                tally[0] += 1
                outcome = ("failed" if case.find("failure") is not None
                           or case.find("error") is not None else
                           "skipped" if case.find("skipped") is not None else "passed")
                tally[{"passed": 1, "failed": 2, "skipped": 3}[outcome]] += 1
    return [[name, *counts[name]] for name in ISSUE_13_CLASSES if name in counts]


def baselines() -> list[list[object]]:
    sys.path.insert(0, str(ROOT / "tests"))
    from measured import run_measured
    from web.bombs import GIB, gib_bomb
    from web.webserver import LoopbackServer, Reply

    idle = run_measured(IDLE)
    rows: list[list[object]] = [["baseline: idle interpreter, fetchledger imported", "-",
                                 idle.peak_mib, idle.seconds]]
    server = LoopbackServer().start()
    try:
        # httpx's gzip decoder reads one member only, so the multi-member bomb of the
        # tests is no bomb to it; one member of 1 GiB, gzipped again, is.
        for name in ("gzip, gzip (one member)", "gzip, gzip"):
            body = gib_bomb(name)
            server.replies["mutable"] = Reply(200, {"Content-Type": "text/html",
                                                    "Content-Encoding": "gzip, gzip"}, body)
            plain = run_measured(HTTPX_BASELINE, server.url("/mutable"))
            result = plain.result()
            rows.append([f"baseline: plain httpx, bomb {name} ({result['outcome']}: "
                         f"{result['decoded']:,} of {GIB:,} bytes)", "-", plain.peak_mib,
                         plain.seconds])
    finally:
        server.stop()
    return rows



def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--figures", type=Path, help="JSON lines written by the tests")
    parser.add_argument("--skip-tests", action="store_true",
                        help="only print the figures already in --figures")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        figures = args.figures or Path(folder) / "figures.jsonl"
        report = figures.with_suffix(".junit.xml")
        failed = 0
        if not args.skip_tests:
            figures.unlink(missing_ok=True)
            failed = run_tests(figures, report)
        records = [json.loads(line) for line in figures.read_text().splitlines() if line]
        classes = class_results(report)
    measured = [r for r in records if "peak_mib" in r]
    rows: list[list[object]] = [[r["case"], r.get("status", "-"), r["peak_mib"],
                                 r["seconds"]] for r in measured]
    print("\nBombs and giant inputs (each in a child process; peak RSS includes its "
          "children):\n")
    print(table(["case", "status", "peak RSS (MiB)", "seconds"], baselines() + rows))
    fuzz = [[r["case"].removeprefix("fuzz "), r["examples"]] for r in records
            if "examples" in r]
    if fuzz:
        print("\nFuzzing (hypothesis examples run per property):\n")
        print(table(["property", "examples"], fuzz))
    _issue_13_tables(records)
    _secret_classes()
    if classes:
        print(f"\nIssue 13's classes: the variants tried (test cases) and how they ended "
              f"(load average {os.getloadavg()[0]:.1f} at the end):\n")
        print(table(["class", "variants", "passed", "failed", "skipped"], classes))
    if failed:
        print(f"\nFAILED: the hardening tests exited {failed}", file=sys.stderr)
    return 1 if failed else 0


def _secret_classes() -> None:
    """Per secret form of issue 13 (sessions 4-9): the cases the redaction rules catch
    and the look-alikes they leave as written, counted by running them now
    (``tests/secret_classes.py``: the same tables the tests hold to all)."""
    sys.path.insert(0, str(ROOT / "tests"))
    import secret_classes

    print("\nIssue 13's secret forms: cases caught (the secret in neither display nor "
          "identity, two values two identities) and look-alikes left as written:\n")
    print(table(["class", "caught / cases", "look-alikes untouched"],
                secret_classes.measure()))


def _issue_13_tables(records: list[dict[str, object]]) -> None:
    redaction = [r for r in records if r.get("table") == "redaction"]
    if redaction:
        print("\nRedaction of a 100,000-character command line as one run identifies it "
              "(best of 5; target 50 ms; floor: shlex alone):\n")
        print(table(["shape", "wall ms", "CPU ms", "floor ms", "within 50 ms (CPU)"],
                    [[r["case"], "-" if r["ms"] is None else r["ms"],
                      "-" if r.get("cpu_ms") is None else r["cpu_ms"],
                      "-" if r["floor_ms"] is None else r["floor_ms"],
                      "yes" if float(r.get("cpu_ms") or r["ms"]) <= 50  # type: ignore[arg-type]
                      else "NO"] for r in redaction]))
    lifetime = [r for r in records if r.get("table") == "lifetime"]
    if lifetime:
        print("\nNothing left running: seconds from the signal until no process of the run "
              "was left (target 2 s):\n")
        print(table(["what was killed, how", "gone after (s)", "left", "load average"],
                    [[r["case"], "NOT within 2 s" if r["gone_seconds"] is None
                      else r["gone_seconds"], r["left"], r.get("load", "-")]
                     for r in lifetime]))


if __name__ == "__main__":
    sys.exit(main())
