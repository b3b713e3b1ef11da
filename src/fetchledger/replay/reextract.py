"""``reextract``: run today's extraction again on the stored raw bytes, no network.

For each source, the latest version's raw bytes go through the extraction a
retrieval of them would use today (:func:`~fetchledger.adapters.stored.document_from_stored`).
A text that differs becomes a new version of the same id, recording the new
extractor and version, the version it was made from (``reextracted_from``)
and when (``reextracted_at``); its ``retrieved_at`` stays that of the bytes.
It records no attempt (nothing was retrieved) and never moves the source's
last retrieval time. A version whose raw bytes were capped is skipped
(``raw_capped``): the text of a part of a page is not the text of the page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from ..adapters.stored import document_from_stored
from ..errors import RawCapped, RetrievalFailed
from ..models import Failure, Refreshed
from ..store.prepare import prepare
from ..store.protocol import utc_now
from .drift import ReplayLedger, settled

__all__ = ["reextract"]


def reextract(ledger: ReplayLedger, source_ids: Iterable[int],
              on_outcome: Callable[[Refreshed], None] | None = None) -> list[Refreshed]:
    """Re-extract each source's latest version; one outcome per source, in order."""
    outcomes = []
    for source_id in source_ids:
        outcomes.append(_one(ledger, source_id))
        if on_outcome is not None:
            on_outcome(outcomes[-1])
    return outcomes


def _one(ledger: ReplayLedger, source_id: int) -> Refreshed:
    stored = ledger.stored(source_id)
    try:
        document = document_from_stored(stored, limits=ledger.limits, key=ledger.identity_key)
        prepared = prepare(document, k=0, max_raw_stored=ledger.limits.max_raw_stored,
                           retrieved_at=stored.retrieved_at)
    except RawCapped as capped:
        return settled(ledger, source_id, changed=False, skipped=capped.status,
                       note=f"skipped: {capped.message}")
    except RetrievalFailed as error:
        return settled(ledger, source_id, changed=False,
                       note=f"version {stored.version} kept: its stored bytes could not be "
                            f"extracted again ({error.status})",
                       error=Failure.from_error(stored.display, error))
    version = prepared.version
    if version.text_sha256 == stored.text_sha256:
        return settled(ledger, source_id, changed=False,
                       note=f"unchanged: version {stored.version}")
    meta = {**version.meta, "reextracted_from": stored.version, "reextracted_at": utc_now()}
    made = ledger.record([replace(prepared, version=replace(version, meta=meta),
                                  retrieved=False)])[0]
    assert made is not None
    return settled(ledger, source_id, changed=True,
                   note=f"new text: version {made.source.version} from the bytes of version "
                        f"{stored.version} ({version.extractor} {version.extractor_version}; "
                        f"was {stored.extractor} {stored.extractor_version})")
