"""Built-in source adapters: each fetches or reads, extracts, and returns a
:class:`~fetchledger.document.Document`, knowing nothing of storage."""

from __future__ import annotations

from .files import FileAdapter

__all__ = ["FileAdapter"]
