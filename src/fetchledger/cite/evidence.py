"""What the ledger holds for the sources a draft cites, read once and kept.

``render`` and ``check`` only read the ledger, through this view: sources,
stored texts of every version, pages, the quotes handed out, and the figures
each text holds. Nothing here writes, fetches or registers.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import UnknownSource
from ..models import Quote, Source
from ..text.passages import query_terms, split_passages
from ..text.verbatim import find_verbatim, nearest_passage, strip_emphasis
from .figures import SourceFigures, source_figures

if TYPE_CHECKING:
    from ..document import Page
    from ..ledger import Ledger
    from .citations import Citations

__all__ = [
    "SourceView",
    "Support",
    "find_quotation",
    "holds_verbatim",
    "quotation_fragments",
    "supports",
]

# An elision or an editorial insertion inside a quotation: each side is checked alone.
_ELISION = re.compile(
    r"\s*(?:\[\s*(?:…|\.\.\.)\s*\]|\(\s*(?:…|\.\.\.)\s*\)|…|\.\.\.+|\[[^\]]*\])\s*")
_TRAILING = ".,;:!?"


@dataclass
class Support:
    """A quote of a cited source and the draft lines whose sentences draw on it."""

    quote: Quote
    handed_out: bool
    lines: list[int] = field(default_factory=list)
    terms: frozenset[str] | None = field(default=None, repr=False)


def quotation_fragments(quotation: str) -> list[str]:
    """The verbatim pieces of a draft quotation: split at elisions (``…``, ``[...]``)
    and editorial insertions (``[the water]``), emphasis removed, spaces collapsed."""
    pieces = _ELISION.split(strip_emphasis(quotation))
    fragments = [" ".join(p.split()) for p in pieces]
    return [f for f in fragments if any(c.isalnum() for c in f)]


class SourceView:
    """Read-only, cached access to the cited sources of one ledger."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self._sources: dict[int, Source | None] = {}
        self._texts: dict[int, dict[int, str]] = {}
        self._figures: dict[int, SourceFigures] = {}
        self._pages: dict[tuple[int, int], tuple[Page, ...]] = {}
        self._quotes: dict[int, list[Quote]] = {}

    def source(self, source_id: int) -> Source | None:
        if source_id not in self._sources:
            try:
                self._sources[source_id] = self.ledger.source(source_id)
            except UnknownSource:
                self._sources[source_id] = None
        return self._sources[source_id]

    def texts(self, source_id: int) -> dict[int, str]:
        """``{version: stored text}``, newest first."""
        if source_id not in self._texts:
            self._texts[source_id] = self.ledger.texts(source_id)
        return self._texts[source_id]

    def figures(self, source_id: int) -> SourceFigures:
        if source_id not in self._figures:
            merged = [source_figures(text) for text in self.texts(source_id).values()]
            self._figures[source_id] = SourceFigures(
                frozenset().union(*(f.numbers for f in merged)),
                frozenset().union(*(f.dates for f in merged)))
        return self._figures[source_id]

    def page_at(self, source_id: int, version: int, offset: int) -> tuple[int | None, str | None]:
        key = (source_id, version)
        if key not in self._pages:
            self._pages[key] = self.ledger.pages(source_id, version)
        pages = self._pages[key]
        index = bisect.bisect_right([p.start for p in pages], offset) - 1
        if index >= 0 and offset < max(pages[index].end, pages[index].start + 1):
            return pages[index].number, pages[index].label
        return None, None

    def recorded_quotes(self, source_id: int) -> list[Quote]:
        if source_id not in self._quotes:
            self._quotes[source_id] = self.ledger.recorded_quotes(source_id)
        return self._quotes[source_id]

    def nearest(self, source_id: int, quotation: str) -> str | None:
        """The real passage of the latest version that reads most like ``quotation``."""
        texts = self.texts(source_id)
        text = next(iter(texts.values()))
        needle = " ".join(quotation_fragments(quotation)) or quotation
        passage = nearest_passage(text, split_passages(text), needle)
        return text[passage.start : passage.end] if passage else None


def find_quotation(view: SourceView, source_id: int, quotation: str) -> Quote | None:
    """Where a draft quotation is verbatim in source ``source_id`` (every fragment in
    one version, latest first), else None. Only whitespace, typographic quotes and
    dashes, and markdown emphasis may differ, and sentence punctuation just inside
    the closing quotation mark may be the writer's."""
    fragments = quotation_fragments(quotation)
    if not fragments:
        return None
    for version, text in view.texts(source_id).items():
        spans = [_find_fragment(text, fragment) for fragment in fragments]
        if all(spans):
            start = min(s[0] for s in spans if s)
            end = max(s[1] for s in spans if s)
            first = spans[0]
            assert first is not None
            page, label = view.page_at(source_id, version, first[0])
            if "\n" in text[start:end]:  # fragments on different lines: quote the first
                start, end = first
            return Quote(source_id, version, start, end, page, label, text[start:end])
    return None


def holds_verbatim(view: SourceView, source_id: int, quotation: str) -> bool:
    """Is the whole quotation (emphasis removed), brackets and all, verbatim in some
    version of the source? No elision or insertion is forgiven here."""
    words = " ".join(strip_emphasis(quotation).split())
    return any(_find_fragment(text, words) for text in view.texts(source_id).values())


def _find_fragment(text: str, fragment: str) -> tuple[int, int] | None:
    span = find_verbatim(text, fragment)
    if span is None and fragment[-1] in _TRAILING:
        trimmed = fragment.rstrip(_TRAILING).rstrip()
        if trimmed:
            span = find_verbatim(text, trimmed)
    return span


def supports(view: SourceView, citations: Citations) -> dict[int, list[Support]]:
    """For each cited (known) id: the quotes handed out for it, then any verbatim
    quotation of the draft that was never handed out, each with the draft lines
    whose sentences draw on it (most shared content words, at least two)."""
    result: dict[int, list[Support]] = {}
    for source_id in citations.cited_ids():
        if view.source(source_id) is None:
            continue
        entries: dict[tuple[int, int, int], Support] = {}
        for quote in view.recorded_quotes(source_id):
            entries.setdefault((quote.version, quote.start, quote.end),
                               Support(quote, handed_out=True))
        result[source_id] = list(entries.values())
    for sentence in citations.sentences:
        line = citations.draft.position(sentence.offset)[0]
        for quotation in sentence.quotations:
            for source_id in quotation.ids:
                if source_id not in result:
                    continue
                quoted = find_quotation(view, source_id, quotation.text)
                if quoted is None:
                    continue
                found = _support_for(result[source_id], quoted)
                if line not in found.lines:
                    found.lines.append(line)
        terms = set(query_terms(sentence.claim))
        for source_id in sentence.ids:
            if source_id not in result or not terms:
                continue
            best: Support | None = None
            best_overlap = 1
            for support in result[source_id]:
                if support.terms is None:
                    support.terms = frozenset(query_terms(support.quote.text))
                overlap = len(terms.intersection(support.terms))
                if overlap > best_overlap:
                    best, best_overlap = support, overlap
            if best is not None and line not in best.lines:
                best.lines.append(line)
    return result


def _support_for(supports_of_source: list[Support], located: Quote) -> Support:
    for support in supports_of_source:
        q = support.quote
        if q.version == located.version and q.start <= located.start \
                and located.end <= q.end:
            return support
    support = Support(located, handed_out=False)
    supports_of_source.append(support)
    return support
