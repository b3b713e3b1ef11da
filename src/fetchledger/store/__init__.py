"""Storage: the store protocol (:mod:`.protocol`) and its backends.

:func:`open_store` is the one way to open a ledger's store from where it lives.
"""

from __future__ import annotations

from pathlib import Path

from .protocol import Store
from .sqlite import SQLiteStore

__all__ = ["Store", "open_store"]


def open_store(location: Path, *, busy_timeout: float = 60.0) -> Store:
    """Open (creating and migrating as needed) the store of the ledger at ``location``."""
    return SQLiteStore(location, busy_timeout=busy_timeout)
