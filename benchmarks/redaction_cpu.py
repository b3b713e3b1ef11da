"""Redaction CPU of 100,000-character command lines, this tree beside a baseline.

Every shape of ``tests/test_hardening_leaks.py`` (``_distinct_shapes``: thousands of
distinct secrets) and the fed-secret scripts of ``tests/test_fed_secrets.py`` (with
``--all``, the other 100k shapes and the runs of ``tests/test_template_runs.py`` too) is
identified as one
``run`` identifies it (``command_locator``: display, keyed identity, values to
scrub), CPU time, best of ``--repeat`` runs on a fresh argv each, by this tree and by
the identity modules of ``--baseline`` (a git ref, default ``main``, loaded from git
into a temporary package), alternately in one process. Each figure is also given in
calibration terms: divided by this machine's speed, ``shlex.join`` of the 6,250-word
``--token=V`` argv over 1.12 ms (where the test's bounds were set), measured in the
same run, so figures of machines of different speed compare.

    python benchmarks/redaction_cpu.py [--baseline REF] [--repeat N] [--rounds N]
                                       [--all] [--shape TEXT]

Branch secretcpu5 (14:38 UTC, load 8.9-9.7, calibrated, main -> branch): nested
sh -c "sh -c '...'" 57.1 -> 50.4, 57.2 -> 51.3 (docs/reliability.md, secretcpu5).
Session 11 (14:21 UTC, load 3.7, calibrated, main -> branch): fed expect 62.3 -> 50.6, fed
heredocs 67.0 -> 56.4, fed echo | sudo -S 63.7 -> 59.5, fed V_N 68.9 -> 63.6, fed connect 80.4 ->
76.3 (docs/reliability.md, session 11). Session 9 (08:52 UTC, load 14.5-17: relative figures),
CPU ms, main -> branch: sshpass -p V 90.7 -> 71.4, mysql -pV 79.1 -> 64.0, JSON bodies
60.5 -> 49.0, curl -H 'Authorization: Bearer V' 61.4 -> 48.8, fed echo vN | sudo -S
144 -> 79.7, fed V_N=vN; echo $V_N | passwd 159 -> 91.6, fed heredocs 89.5 -> 74.7, fed
connect(...) 135 -> 119, fed expect 77.1 -> 73.0; nested sh -c, export TOKEN=V, -u u:V
unchanged within noise.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import ROOT, table

sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

CALIBRATION_MS = 1.12  # shlex.join of the 6,250 --token=V words (the tests' bound)
_FILES = ["__init__.py", "errors.py", "hints.py", "document.py"]
_FRESH = itertools.count()


def _baseline_locator(ref: str, folder: Path) -> Callable[..., object]:
    """``command_locator`` of ``ref``'s identity modules, as package ``flbaseline``."""
    package = folder / "flbaseline"
    listed = subprocess.run(["git", "ls-tree", "--name-only", f"{ref}:src/fetchledger/identity"],
                            cwd=ROOT, check=True, capture_output=True, text=True).stdout.split()
    (package / "identity").mkdir(parents=True)
    for name in [*_FILES[1:], *(f"identity/{n}" for n in listed if n.endswith(".py"))]:
        text = subprocess.run(["git", "show", f"{ref}:src/fetchledger/{name}"], cwd=ROOT,
                              check=True, capture_output=True, text=True).stdout
        (package / name).write_text(text)
    (package / "__init__.py").write_text("")
    sys.path.insert(0, str(folder))
    return importlib.import_module("flbaseline.identity.commands").command_locator  # type: ignore[no-any-return]


def _cpu_ms(locate: Callable[..., object], argv: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        n = next(_FRESH)
        fresh = [*argv[:-1], argv[-1] + f" {n}"]
        started = time.process_time()
        locate(fresh, key=b"k" * 32)
        best = min(best, time.process_time() - started)
    return best * 1000


def _speed(argv: list[str]) -> float:
    best = float("inf")
    for _ in range(10):
        started = time.process_time()
        shlex.join(argv)
        best = min(best, time.process_time() - started)
    return best * 1000 / CALIBRATION_MS


def _fed_shapes() -> dict[str, list[str]]:
    """Session 9: the scripts of thousands of distinct secrets fed on stdin, typed to a
    prompt or passed to a call (``tests/test_fed_secrets.py``'s linear-time shapes that
    find secrets, about 100,000 characters each), as ``sh -c`` scripts."""
    import test_fed_secrets

    chosen = ["echo vN | sudo -S y", "heredocs to passwd", "expect send vN",
              "connect('h','u','vN')", "V_N=vN; echo $V_N | passwd"]
    return {f"sh -c, fed: {name}": ["sh", "-c", test_fed_secrets.FED_SHAPES[name](5000)]
            for name in chosen}


def _run_shapes() -> dict[str, list[str]]:
    """Session 9: runs of commands of one kind (``tests/test_template_runs.py``)."""
    import test_template_runs

    return {f"sh -c, runs: {name}": ["sh", "-c", make(5000)]
            for name, make in test_template_runs.RUN_SHAPES.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--all", action="store_true", help="also the other 100k shapes")
    parser.add_argument("--shape", default="", help="only shapes whose name holds this")
    args = parser.parse_args()
    os.environ.setdefault("FETCHLEDGER_HARDENING", "0")
    import test_hardening_leaks as shapes_module
    from fetchledger.identity.commands import command_locator

    shapes = dict(shapes_module._distinct_shapes(100_000))
    shapes.update(_fed_shapes())
    if args.all:
        shapes.update(shapes_module.SHAPES)
        shapes.update(_run_shapes())
    shapes = {name: argv for name, argv in shapes.items() if args.shape in name}
    calibration = shapes_module._distinct_shapes(100_000)["--token=V options"]
    with tempfile.TemporaryDirectory() as folder:
        old = _baseline_locator(args.baseline, Path(folder))
        rows = []
        speeds = []
        for name, argv in shapes.items():
            before, after, speed = float("inf"), float("inf"), float("inf")
            for round_ in range(args.rounds):  # alternately, each first in turn
                speed = min(speed, _speed(calibration))
                for locate in (old, command_locator)[::1 if round_ % 2 else -1]:
                    ms = _cpu_ms(locate, argv, args.repeat)
                    if locate is old:
                        before = min(before, ms)
                    else:
                        after = min(after, ms)
            speeds.append(speed)
            rows.append([name, before, after, speed])
    # each shape calibrated by the speed measured beside it (the least of its rounds, as
    # its figures are the least of theirs); the run's least speed is given too
    print(f"load {os.getloadavg()[0]:.1f}; speed = shlex.join of the 6,250 --token=V words "
          f"/ {CALIBRATION_MS} ms, beside each shape: {min(speeds):.2f}-{max(speeds):.2f}")
    print(table(["100k shape", f"{args.baseline} CPU ms", "tree CPU ms", "speed",
                 f"{args.baseline} calibrated", "tree calibrated", "<= 50"],
                [[name, round(before, 1), round(after, 1), round(speed, 2),
                  round(before / speed, 1), round(after / speed, 1),
                  "yes" if after / speed <= 50 else "NO"]
                 for name, before, after, speed in rows]))


if __name__ == "__main__":
    main()
