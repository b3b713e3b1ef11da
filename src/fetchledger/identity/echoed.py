"""A whole fetched Document scrubbed of the secrets its request carried (DESIGN §8):
a response that echoes a request's credential (a page printing the request's headers,
an API returning the token it was given) keeps none of it in its text, raw bytes,
title, site, author or metadata, with page offsets moved to the new text."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .finder import Finder
from .finder import finder as cached_finder
from .secrets import REDACTED, ordered_secrets, plain_mark, scrub_bytes

if TYPE_CHECKING:
    from ..document import Document, Page

__all__ = ["scrub_secrets"]


def scrub_secrets(document: Document, secrets: Sequence[str]) -> Document:
    """Replace every secret the request carried by ``REDACTED`` wherever the response
    echoed it (text, raw bytes, metadata), keeping page offsets right."""
    forms = ordered_secrets(secrets)
    if not forms:
        return document
    finder = cached_finder(forms)
    fields = (document.text, document.title, document.site, document.author)
    raw = scrub_bytes(document.raw, forms)
    if raw == document.raw and not any(finder.spans(v or "") for v in fields) \
            and not _meta_has(document.meta, finder):
        return document
    text, pages = _redact_text(document.text, finder, document.pages)

    def clean(value: str | None) -> str | None:
        return finder.sub(value, plain_mark) if value else value

    return replace(document, text=text, raw=raw, pages=pages, title=clean(document.title),
                   site=clean(document.site), author=clean(document.author),
                   meta=_meta_scrubbed(document.meta, finder),
                   warnings=(*document.warnings,
                             "the response echoed a secret of the request; it was redacted"))


def _meta_has(data: Any, finder: Finder) -> bool:
    if isinstance(data, str):
        return bool(finder.spans(data))
    if isinstance(data, dict):
        return any(_meta_has(k, finder) or _meta_has(v, finder) for k, v in data.items())
    if isinstance(data, (list, tuple)):
        return any(_meta_has(v, finder) for v in data)
    return False


def _meta_scrubbed(data: Any, finder: Finder) -> Any:
    if isinstance(data, str):
        return finder.sub(data, plain_mark)
    if isinstance(data, dict):
        return {_meta_scrubbed(k, finder): _meta_scrubbed(v, finder) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_meta_scrubbed(v, finder) for v in data]
    return data


def _redact_text(text: str, finder: Finder, pages: tuple[Page, ...]
                 ) -> tuple[str, tuple[Page, ...]]:
    parts: list[str] = []
    ends: list[int] = []  # the end of each replaced span in the old text...
    shifts: list[int] = []  # ...and the total shift of offsets from there on
    last = shift = 0
    for start, stop in finder.spans(text):
        parts.extend((text[last:start], REDACTED))
        last = stop
        shift += len(REDACTED) - (stop - start)
        ends.append(stop)
        shifts.append(shift)
    parts.append(text[last:])

    def moved(offset: int) -> int:
        index = bisect.bisect_right(ends, offset)
        return offset + (shifts[index - 1] if index else 0)

    return "".join(parts), tuple(replace(p, start=moved(p.start), end=moved(p.end))
                                 for p in pages)
