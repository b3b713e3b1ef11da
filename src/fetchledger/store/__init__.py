"""Storage: the store protocol (:mod:`.protocol`) and its backends.

:func:`open_store` is the one way to open a ledger's store from where it lives:
a PostgreSQL URL (``postgresql://`` or ``postgres://``) opens
:class:`~.postgres.PostgresStore`, anything else is an SQLite file.
"""

from __future__ import annotations

from pathlib import Path

from ..config import is_database_url
from ..errors import LedgerUnavailable
from ..identity.secrets import shown_database_url
from .protocol import Store
from .sqlite import SQLiteStore

__all__ = ["Store", "open_store", "shown_location"]


def open_store(location: Path | str, *, busy_timeout: float = 60.0,
               read_only: bool = False) -> Store:
    """Open (creating and migrating as needed) the store of the ledger at ``location``;
    ``read_only``: an existing ledger, for reading only (NoLedger when there is none:
    nothing is created, migrated or locked)."""
    if isinstance(location, str) and is_database_url(location):
        try:
            from .postgres import PostgresStore
        except ModuleNotFoundError as exc:  # psycopg is an optional dependency
            if exc.name != "psycopg":
                raise
            raise LedgerUnavailable(
                f"{shown_database_url(location)} is a PostgreSQL ledger and psycopg is "
                f"not installed ({exc})", path=shown_database_url(location),
                hint="pip install 'fetchledger[postgres]'") from exc
        return PostgresStore(location, busy_timeout=busy_timeout, read_only=read_only)
    return SQLiteStore(Path(location), busy_timeout=busy_timeout, read_only=read_only)


def shown_location(location: Path | str) -> str:
    """Where a ledger lives, as it may be printed (a URL without its password)."""
    if isinstance(location, str) and is_database_url(location):
        return shown_database_url(location)
    return str(location)
