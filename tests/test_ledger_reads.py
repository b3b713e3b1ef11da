"""The read-only Ledger methods the write side uses: texts, pages, recorded_quotes."""

from __future__ import annotations

from pathlib import Path

import pytest

from fetchledger import Document, Ledger, UnknownSource

from cite_sources import REPORT_LINES, report_document, seed
from conftest import table_counts

pytestmark = pytest.mark.both_backends


def test_texts_pages_and_recorded_quotes(ledger_path: Path) -> None:
    with Ledger(ledger_path) as ledger:
        seed(ledger)
        ledger.register(Document(kind="file", locator="/notes/field_notes.txt",
                                 display="/notes/field_notes.txt", text="Second version.",
                                 raw=b"v2"))
        before = table_counts(ledger_path)
        texts = ledger.texts(6)
        assert list(texts) == [2, 1]  # newest first
        assert texts[2] == "Second version." and texts[1].startswith("Field notes")
        pages = ledger.pages(2)
        assert [(p.number, p.label) for p in pages] == [(1, None), (2, None), (3, "iii")]
        assert ledger.text(2)[pages[2].start : pages[2].end] == "\n".join(REPORT_LINES[2:])
        assert ledger.pages(1) == ()
        quotes = ledger.recorded_quotes(2)
        assert quotes and all(q.source_id == 2 and q.version == 1 for q in quotes)
        text = ledger.text(2)
        for quote in quotes:
            assert text[quote.start : quote.end] == quote.text
            page = next(p for p in pages if p.start <= quote.start < p.end)
            assert (quote.page, quote.page_label) == (page.number, page.label)
        everything = ledger.recorded_quotes()
        assert {q.source_id for q in everything} == {1, 2, 3, 4, 5, 6}
        assert [q for q in everything if q.source_id == 2] == quotes
        for call in (ledger.texts, ledger.pages, ledger.recorded_quotes):
            with pytest.raises(UnknownSource):
                call(99)
        assert table_counts(ledger_path) == before  # reading records nothing
    assert report_document().pages[2].label == "iii"
