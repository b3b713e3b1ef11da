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

from collections.abc import Sequence

from ..errors import InvalidArgument
from .drift import ReplayLedger, drifted
from .reextract import reextract
from .refresh import refresh

__all__ = ["ReplayLedger", "chosen_sources", "drifted", "reextract", "refresh"]


def chosen_sources(source_ids: Sequence[int], every: bool) -> list[int] | None:
    """The sources ``refresh``/``reextract`` were asked for: ``None`` for all of them;
    InvalidArgument unless exactly one of ids or all was given."""
    if every and source_ids:
        raise InvalidArgument("give source ids or all, not both")
    if not every and not source_ids:
        raise InvalidArgument("name the sources: their ids, or all")
    return None if every else list(source_ids)
