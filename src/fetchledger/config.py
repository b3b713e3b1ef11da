"""Defaults and limits (DESIGN §8), and where the ledger file lives (DESIGN §4)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ENV_ALLOW_PRIVATE",
    "ENV_LEDGER",
    "LEDGER_DIR",
    "LEDGER_FILE",
    "MAX_CONCURRENCY",
    "MAX_ID",
    "MAX_PER_HOST",
    "MAX_SECONDS",
    "MAX_SNIPPETS",
    "MIN_SECONDS",
    "Limits",
    "allow_private_from_env",
    "check_count",
    "check_seconds",
    "is_database_url",
    "is_file_there",
    "names_ledger_file",
    "resolve_ledger_path",
    "seconds_message",
]

ENV_LEDGER = "FETCHLEDGER_LEDGER"
ENV_ALLOW_PRIVATE = "FETCHLEDGER_ALLOW_PRIVATE"
LEDGER_DIR = ".fetchledger"
LEDGER_FILE = "ledger.db"

# The largest value each numeric option takes (documented in README "Limits"); past
# it, or not a finite number, is bad input (exit 2).
MAX_SNIPPETS = 1_000  # snippets handed out by one call (-k, --snippets)
MAX_SECONDS = 86_400.0  # any timeout: one day
# ... and at least ten milliseconds: less cannot start a command or open a connection
# (`--timeout 1e-300` was accepted and timed out at once, recorded as a failure)
MIN_SECONDS = 0.01
MAX_CONCURRENCY = 1_024  # batch requests in flight
MAX_PER_HOST = 256  # batch requests in flight per host
MAX_ID = 2**63 - 1  # a source id (the largest SQLite INTEGER)


def check_count(value: int, what: str, maximum: int) -> int:
    """``value`` when it is a whole number from 1 to ``maximum``; InvalidArgument else."""
    from .errors import InvalidArgument

    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise InvalidArgument(f"{what} must be a whole number from 1 to {maximum:,}, "
                              f"not {value!r}")
    return value


def check_seconds(value: float, what: str, maximum: float = MAX_SECONDS) -> float:
    """``value`` when it is a number of seconds from :data:`MIN_SECONDS` to ``maximum``
    (``inf`` and ``nan`` are not); InvalidArgument else."""
    from .errors import InvalidArgument

    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not MIN_SECONDS <= value <= maximum:
        raise InvalidArgument(seconds_message(what, value, maximum))
    return float(value)


def seconds_message(what: str, value: object, maximum: float = MAX_SECONDS) -> str:
    """The one message of a timeout out of bounds."""
    return (f"{what} must be a number of seconds from {MIN_SECONDS:g} to {maximum:,.0f}, "
            f"not {value!r}")


@dataclass(frozen=True)
class Limits:
    """Every cap and timeout fetchledger applies; all configurable."""

    connect_timeout: float = 10.0  # seconds
    total_timeout: float = 30.0  # one wall-clock deadline across redirects and body
    max_redirects: int = 10
    max_body_bytes: int = 25_000_000  # as received on the wire
    max_decoded_bytes: int = 50_000_000  # after content decoding
    max_file_bytes: int = 200_000_000
    max_pdf_pages: int = 2_000
    pdf_timeout: float = 120.0  # wall clock for extracting one PDF (in a child process)
    pdf_memory: int = 1 << 30  # address space the PDF extraction may add (bytes)
    pdf_engine: str = "auto"  # PDF text: "auto" (PDFium, pypdf per page), "pdfium", "pypdf"
    command_timeout: float = 60.0
    max_command_output: int = 10_000_000
    max_raw_stored: int = 25_000_000  # raw bytes kept per version (compressed)
    batch_concurrency: int = 32
    batch_per_host: int = 4
    batch_renderers: int = 2  # pages rendered in Chromium at once by a batch
    render_timeout: float = 30.0  # one wall-clock deadline for a whole browser render
    render_settle: float = 10.0  # after the load event, how long to wait for network quiet
    max_dom_bytes: int = 20_000_000  # the rendered DOM, serialized (UTF-8)
    max_render_traffic: int = 100_000_000  # bytes a rendered page may pull through the proxy
    ledger_busy_timeout: float = 60.0  # seconds a writer waits for another one


def is_database_url(value: str | os.PathLike[str]) -> bool:
    """True for a PostgreSQL ledger: a libpq URI ``postgresql://`` or ``postgres://``."""
    return isinstance(value, str) and value.lower().startswith(("postgresql://", "postgres://"))


def resolve_ledger_path(
    explicit: str | os.PathLike[str] | None = None,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Path | str:
    """``explicit``, else ``$FETCHLEDGER_LEDGER``, else the nearest
    ``.fetchledger/ledger.db`` walking up from ``cwd`` (as git finds ``.git``),
    else a new ``./.fetchledger/ledger.db``. A PostgreSQL URL (see
    :func:`is_database_url`) is returned as given, a str; anything else is a file."""
    env = os.environ if env is None else env
    if explicit is not None and not os.fspath(explicit).strip():
        from .errors import InvalidArgument  # an empty --ledger is not "no --ledger"

        raise InvalidArgument("the ledger path is empty",
                              hint="name a ledger file or a PostgreSQL URL, or leave the "
                                   "ledger option out to use the nearest one")
    cwd = (cwd or Path.cwd()).absolute()
    for given in (explicit, env.get(ENV_LEDGER)):
        if given and is_database_url(given):
            return str(given)
        if given:
            return _absolute(Path(given).expanduser(), cwd)
    for folder in (cwd, *cwd.parents):
        candidate = folder / LEDGER_DIR / LEDGER_FILE
        if candidate.is_file():
            return candidate
    return cwd / LEDGER_DIR / LEDGER_FILE


def ledger_files(location: Path | str) -> frozenset[Path]:
    """The files an SQLite ledger lives in (the database, its write-ahead log and its
    index, a rollback journal), links followed; none for a PostgreSQL ledger. No output
    may replace one of them."""
    if not isinstance(location, Path):
        return frozenset()
    base = location.resolve()
    return frozenset({base, *(base.with_name(base.name + suffix)
                               for suffix in ("-wal", "-shm", "-journal"))})


def names_ledger_file(target: Path, location: Path | str) -> bool:
    """True when ``target`` (links followed) is one of :func:`ledger_files`; False for a
    name that cannot be resolved (a loop of links, too long): it names none of them."""
    try:
        return target.resolve() in ledger_files(location)
    except (OSError, RuntimeError, ValueError):
        return False


def is_file_there(path: Path) -> bool:
    """``path.is_file()``, False for a name the file system refuses (too long, a NUL)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _absolute(path: Path, cwd: Path) -> Path:
    return path if path.is_absolute() else cwd / path


def allow_private_from_env(env: Mapping[str, str] | None = None) -> bool:
    """True when ``FETCHLEDGER_ALLOW_PRIVATE`` is set to a true value."""
    value = (os.environ if env is None else env).get(ENV_ALLOW_PRIVATE, "")
    return value.strip().lower() in {"1", "true", "yes", "on"}
