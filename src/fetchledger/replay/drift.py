"""Which recorded quotes a source's latest version no longer holds, and the record of
what ``refresh``/``reextract`` did to one source."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from ..config import Limits
from ..document import StoredRaw
from ..models import Failure, Quote, Refreshed, Retrieval, Source
from ..store.prepare import Failed, Prepared
from ..text.verbatim import find_verbatim

__all__ = ["ReplayLedger", "drifted", "settled"]


class ReplayLedger(Protocol):
    """What refresh and reextract need of the ledger (:class:`fetchledger.Ledger` is
    one): its limits and identity key, the sources with their stored bytes and recorded
    quotes, and the ledger's write path."""

    limits: Limits

    @property
    def identity_key(self) -> bytes: ...

    def source(self, source_id: int) -> Source: ...

    def text(self, source_id: int, version: int | None = None) -> str: ...

    def stored(self, source_id: int, version: int | None = None) -> StoredRaw: ...

    def recorded_quotes(self, source_id: int | None = None) -> list[Quote]: ...

    def record(self, results: Sequence[Prepared | Failed]) -> list[Retrieval | None]: ...

    def record_unchanged(self, source_id: int, message: str) -> None: ...


def drifted(quotes: Iterable[Quote], text: str) -> tuple[Quote, ...]:
    """The quotes that are not verbatim in ``text``, as ``check`` reads verbatim: only
    whitespace, typographic quotes and dashes may differ, never a word or a digit."""
    return tuple(q for q in quotes if find_verbatim(text, q.text) is None)


def settled(ledger: ReplayLedger, source_id: int, *, changed: bool, note: str,
            skipped: str | None = None, error: Failure | None = None) -> Refreshed:
    """The outcome for one source: as of its latest version, with every recorded quote
    looked for in that version's text."""
    source = ledger.source(source_id)
    quotes = ledger.recorded_quotes(source_id)
    lost = drifted(quotes, ledger.text(source_id)) if quotes else ()
    return Refreshed(source, changed, lost, len(quotes), note, skipped, error)
