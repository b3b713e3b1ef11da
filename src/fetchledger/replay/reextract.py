"""``reextract``: run today's extraction again on the stored raw bytes, no network.

For each source, the latest version's raw bytes go through the extraction a
retrieval of them would use today (:func:`~fetchledger.adapters.stored.document_from_stored`).
A text that differs becomes a new version of the same id, recording the new
extractor and version, the version it was made from (``reextracted_from``)
and when (``reextracted_at``); its ``retrieved_at`` stays that of the bytes.
It records no attempt (nothing was retrieved) and never moves the source's
last retrieval time. A version whose raw bytes were capped is skipped
(``raw_capped``): the text of a part of a page is not the text of the page.

Extraction is CPU-bound (trafilatura: tens of milliseconds a page), so many
sources are extracted in batch's worker processes
(:class:`~fetchledger.batch.worker.WorkerPool`, one per usable core) while
this process reads the stored bytes, writes the new versions and looks for
drift, in source order; a few are extracted here, where starting workers
would cost more than it saves.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import replace

from ..batch.worker import WorkerDied, WorkerPool, WorkFailure, prepare_again, usable_cores
from ..config import Limits
from ..document import StoredRaw
from ..models import Failure, Refreshed
from ..store.prepare import Prepared
from ..store.protocol import utc_now
from .drift import ReplayLedger, settled

__all__ = ["PER_WORKER", "reextract"]

# Sources per worker below which extracting in this process is faster: a worker is an
# interpreter that imports trafilatura (about a second) before its first page.
PER_WORKER = 16

Extracted = Prepared | WorkFailure


def reextract(ledger: ReplayLedger, source_ids: Iterable[int],
              on_outcome: Callable[[Refreshed], None] | None = None, *,
              workers: int | None = None) -> list[Refreshed]:
    """Re-extract each source's latest version; one outcome per source, in order.
    ``workers``: extraction processes (default: one per usable core, fewer for few
    sources; 1 extracts in this process)."""
    ids = list(source_ids)
    size = min(usable_cores() if workers is None else workers, len(ids) // PER_WORKER)
    outcomes: list[Refreshed] = []

    def settle(source_id: int, stored: StoredRaw, extracted: Extracted) -> None:
        outcomes.append(_settle(ledger, source_id, stored, extracted))
        if on_outcome is not None:
            on_outcome(outcomes[-1])

    if size < 2 or _loop_running():  # asyncio.run cannot nest: a caller's loop extracts here
        for source_id in ids:
            stored = ledger.stored(source_id)
            settle(source_id, stored, prepare_again(stored, ledger.identity_key, ledger.limits))
    else:
        asyncio.run(_in_workers(ledger, ids, size, settle))
    return outcomes


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def _in_workers(ledger: ReplayLedger, ids: list[int], size: int,
                      settle: Callable[[int, StoredRaw, Extracted], None]) -> None:
    """Extract in ``size`` workers, at most two sources a worker in flight (bounding the
    bytes held), settling each in source order as soon as its turn comes."""
    pool = WorkerPool(size)
    await pool.start()
    pending: deque[tuple[int, StoredRaw, asyncio.Task[Extracted]]] = deque()
    queue = iter(ids)
    try:
        while True:
            while len(pending) < 2 * size and (source_id := next(queue, None)) is not None:
                stored = ledger.stored(source_id)
                pending.append((source_id, stored, asyncio.create_task(
                    _extract(pool, stored, ledger.identity_key, ledger.limits))))
            if not pending:
                return
            source_id, stored, task = pending.popleft()
            settle(source_id, stored, await task)
    finally:
        for *_, task in pending:
            task.cancel()
        await pool.close()


async def _extract(pool: WorkerPool, stored: StoredRaw, key: bytes,
                   limits: Limits) -> Extracted:
    """One source's extraction in a worker; a worker that dies on it is replaced and
    tried once more, and bytes that kill two are ``corrupt``."""
    for _ in range(2):
        try:
            result: Extracted = await pool.call("prepare_again", stored, key, limits)
            return result
        except WorkerDied:
            continue
    return WorkFailure("corrupt", "the extraction process died reading these bytes")


def _settle(ledger: ReplayLedger, source_id: int, stored: StoredRaw,
            extracted: Extracted) -> Refreshed:
    """Record what today's extraction made of a source's stored bytes, and its drift."""
    if isinstance(extracted, WorkFailure):
        error = extracted.error(stored.display)
        if extracted.status == "raw_capped":
            return settled(ledger, source_id, changed=False, skipped=extracted.status,
                           note=f"skipped: {extracted.message}")
        return settled(ledger, source_id, changed=False,
                       note=f"version {stored.version} kept: its stored bytes could not be "
                            f"extracted again ({error.status})",
                       error=Failure.from_error(stored.display, error))
    version = extracted.version
    if version.text_sha256 == stored.text_sha256:
        return settled(ledger, source_id, changed=False,
                       note=f"unchanged: version {stored.version}")
    meta = {**version.meta, "reextracted_from": stored.version, "reextracted_at": utc_now()}
    made = ledger.record([replace(extracted, version=replace(version, meta=meta),
                                  retrieved=False)])[0]
    assert made is not None
    return settled(ledger, source_id, changed=True,
                   note=f"new text: version {made.source.version} from the bytes of version "
                        f"{stored.version} ({version.extractor} {version.extractor_version}; "
                        f"was {stored.extractor} {stored.extractor_version})")
