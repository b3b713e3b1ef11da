"""``refresh``: retrieve sources again and see whether their quotes still stand.

- **Web pages** are fetched again at their URL, conditionally when the latest
  version's response carried validators: ``If-None-Match`` with its ETag,
  ``If-Modified-Since`` with its Last-Modified. A 304 Not Modified costs only
  headers: the version is kept, the source's last retrieval time moves and an
  ``ok`` attempt says "not modified". Any other answer is registered as a
  fetch's would be: changed content is a new version of the same id.
- **Files** are read again at their path.
- **Not refreshed** (skipped, reason ``not_refreshable``): commands (running a
  command again is not a retrieval to repeat behind a user's back), non-GET
  HTTP requests (their bodies and secret headers were never stored) and URLs
  that carried secrets (the ledger holds only their redaction marks).

A failed retrieval is recorded as an attempt, as ``fetch`` records it; the
source keeps its versions. Every outcome lists the recorded quotes that the
latest version no longer holds verbatim.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..adapters.browser import unavailable_reason
from ..adapters.files import FileAdapter
from ..adapters.protocol import FileInput, WebInput
from ..adapters.stored import BROWSER
from ..adapters.web import WebAdapter
from ..document import Document, StoredRaw
from ..errors import BadInput, RetrievalFailed
from ..identity import Identity
from ..identity.secrets import REDACTED
from ..models import Failure, Refreshed, Source
from ..store.prepare import Failed, prepare
from .drift import ReplayLedger, settled

__all__ = ["not_refreshable", "refresh"]


def not_refreshable(source: Source, extractor: str) -> str | None:
    """Why ``refresh`` does not retrieve this source again (None: it does); ``extractor``
    made its latest version."""
    if source.kind == "command":
        what = "piped text" if source.meta.get("piped") else "a command"
        return f"{what} is not run again by refresh (run it yourself for a new version)"
    if source.kind == "http":
        return ("a request other than GET is not sent again by refresh (its body and "
                "secret headers were never stored)")
    if source.kind == "web" and REDACTED in source.locator:
        return "its URL carried secrets, which the ledger never stores"
    if extractor == BROWSER and (reason := unavailable_reason()) is not None:
        return f"it was rendered in a browser, and {reason}"
    return None


def refresh(ledger: ReplayLedger, source_ids: Iterable[int], web: Callable[[], WebAdapter],
            on_outcome: Callable[[Refreshed], None] | None = None) -> list[Refreshed]:
    """Retrieve each source again (``web()`` gives the ledger's web adapter, made on first
    need); one outcome per source, in order."""
    outcomes = []
    for source_id in source_ids:
        outcomes.append(_one(ledger, source_id, web))
        if on_outcome is not None:
            on_outcome(outcomes[-1])
    return outcomes


def _one(ledger: ReplayLedger, source_id: int, web: Callable[[], WebAdapter]) -> Refreshed:
    source = ledger.source(source_id)
    stored = ledger.stored(source_id)
    why = not_refreshable(source, stored.extractor)
    if why is not None:
        return settled(ledger, source_id, changed=False, skipped="not_refreshable",
                       note=f"skipped: {why}")
    identity = Identity(stored.kind, stored.locator, stored.display)
    kept = f"version {source.version}"
    try:
        document = _retrieve_again(ledger, stored, identity, web)
        if document is None:
            ledger.record_unchanged(source_id, f"not modified (HTTP 304): {kept} kept")
            return settled(ledger, source_id, changed=False,
                           note=f"unchanged (HTTP 304 Not Modified): {kept}")
        prepared = prepare(document, k=0, max_raw_stored=ledger.limits.max_raw_stored)
    except (RetrievalFailed, BadInput) as error:
        failure = error if isinstance(error, RetrievalFailed) else RetrievalFailed(
            error.message, locator=identity.display, hint=error.hint)
        ledger.record([Failed(identity.kind, identity.display, failure)])
        return settled(ledger, source_id, changed=False,
                       note=f"{kept} kept: the retrieval failed ({failure.status})",
                       error=Failure.from_error(identity.display, failure))
    made = ledger.record([prepared])[0]
    assert made is not None
    if made.new_version:
        note = f"changed: version {made.source.version} (was {source.version})"
    else:
        note = f"unchanged: {kept}"
    return settled(ledger, source_id, changed=made.new_version, note=note)


def _retrieve_again(ledger: ReplayLedger, stored: StoredRaw, identity: Identity,
                    web: Callable[[], WebAdapter]) -> Document | None:
    """The source's new document, None when the server says it is not modified. A page
    that was rendered is rendered again (else the shell's text would stand for it)."""
    if stored.kind == "file":
        return FileAdapter(ledger.limits).load(FileInput(identity.locator), identity)
    validators = [(header, str(stored.meta[field])) for field, header in
                  (("etag", "If-None-Match"), ("last_modified", "If-Modified-Since"))
                  if stored.meta.get(field)]
    render = "always" if stored.extractor == BROWSER else "auto"
    return web().revalidate(WebInput(identity.display, render=render), identity, validators)
