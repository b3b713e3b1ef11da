"""Keeping evidence checkable after the web moves: a *client* of the Ledger, as batch is.

- :mod:`.reextract`: today's extraction on the stored raw bytes (no network); a
  text that changes becomes a new version of the same id.
- :mod:`.refresh`: sources retrieved again, conditionally (ETag,
  Last-Modified): an unchanged page costs a 304 and keeps its version.
- Both report, per source, the recorded quotes that its latest version no longer
  holds verbatim (:mod:`.drift`).

Everything here writes through the Ledger's own write path
(:meth:`fetchledger.Ledger.record`, :meth:`~fetchledger.Ledger.record_unchanged`);
the narrow :class:`~.drift.ReplayLedger` protocol says what it needs.
"""

from __future__ import annotations

from .drift import ReplayLedger, drifted
from .reextract import reextract
from .refresh import refresh

__all__ = ["ReplayLedger", "drifted", "reextract", "refresh"]
