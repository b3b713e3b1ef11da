"""Shared helpers of the benchmark scripts: corpus location and table printing."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# ``shared/`` stands beside the project's checkout (for a worktree, further up).
SHARED = next((folder / "shared" for folder in ROOT.parents if (folder / "shared").is_dir()),
              ROOT.parent / "shared")
CORPUS = SHARED / "corpus"


def corpus_or_skip(*parts: str) -> Path:
    """The corpus path, or exit 0 with a note when the corpus is absent."""
    path = CORPUS.joinpath(*parts)
    if not path.exists():
        print(f"skipped: {path} is absent (the corpus lives beside the project)")
        sys.exit(0)
    return path


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub-style markdown table."""
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"
             for row in cells]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if value < 100 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def median_ms(seconds: Sequence[float]) -> float:
    return statistics.median(seconds) * 1000


def percentile_ms(seconds: Sequence[float], q: float) -> float:
    ordered = sorted(seconds)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


PG_DEFAULT = "postgresql://postgres@127.0.0.1:5432"


def add_pg_option(parser: Any) -> None:
    parser.add_argument("--pg", default=os.environ.get("FETCHLEDGER_TEST_PG", PG_DEFAULT),
                        metavar="URL", help="PostgreSQL server for the side-by-side runs "
                        "(default: $FETCHLEDGER_TEST_PG, else %(default)s); '' skips them")


@contextmanager
def pg_ledger(server: str) -> Iterator[str]:
    """A new, empty PostgreSQL database on ``server`` (a ledger URL), dropped after."""
    import psycopg

    name = f"flbench_{uuid.uuid4().hex[:10]}"
    admin = server.rstrip("/") + "/postgres"
    with psycopg.connect(admin, autocommit=True) as db:
        db.execute(f"CREATE DATABASE {name}")
    try:
        yield f"{server.rstrip('/')}/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as db:
            db.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def git_source(ref: str, folder: Path) -> Path | None:
    """``src/`` of commit ``ref`` unpacked into ``folder`` (None without git or the ref):
    a baseline's code, run beside this tree's with ``PYTHONPATH``."""
    try:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "src"],
                                 capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder / "src"
