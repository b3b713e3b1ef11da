"""The registration's fast paths give exactly what the code before them gave.

Each rewrite of a text algorithm for speed is checked against the algorithm it
replaced (``text_reference``: the old bodies, verbatim) on generated text made of
the characters and words those algorithms decide on (terminators, closers, footnote
marks, abbreviations, Unicode digits and spaces, CJK punctuation, bullets, separators,
bibliography words), and on the shared corpus's pages when it is there. The store's
side (index terms, the JSON of a registration, the stored chunks, the time stamp) is
checked against the functions it now avoids calling.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import zlib
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fetchledger import Document
from fetchledger.document import Page
from fetchledger.store import pg_register
from fetchledger.store.pg_bulk import passage_terms, passages_terms
from fetchledger.store.prepare import _STRAY_BREAKS, prepare
from fetchledger.store.protocol import utc_now
from fetchledger.store.windows import CHUNK, chunk_text
from fetchledger.text import passages as fast
from fetchledger.text.normalize import LINE_BREAKS
from text_reference import reference

_ROOT = Path(__file__).resolve().parents[1]
CORPUS = next((f / "shared" / "corpus" for f in _ROOT.parents if (f / "shared").is_dir()),
              _ROOT.parent / "shared" / "corpus")  # beside the checkout (or a worktree's)

_PIECES = [
    # words, abbreviations, initials, numbers
    "water", "Boils", "at", "the", "U.S", "e.g", "Dr", "Fig", "fig", "p", "No", "J", "c",
    "Ph.D", "al", "art", "iv", "XII", "L.E.A.N", "100", "3.5", "1998", "٣", "x2", "é", "Ж",
    "日本語", "ß", "_", "note", "nb", "ISBN", "ISSN", "doi:", "DOI:", "arXiv:", "Retrieved",
    "Archived", "accessed", "Accessed", "http://a.b/c", "www.x.org", "Smith,", "(1998)",
    "doi: 10.1", "DOI:10.5", "ISBN 0-306-40615-2", "ISSN 1234-", "arXiv:2305.", "Retrieved 5",
    "Retrieved March 5", "Archived from the original", "accessed on 4", "Accessed 3",
    # terminators, closers, openers, marks
    ".", "!", "?", "…", "。", "！", "？", ":", ";", ",", '"', "'", "”", "’", "»", ")", "]",
    "」", "』", "）", "“", "‘", "«", "(", "[", "¿", "¡", "[1]", "[12]", "[3, 5]", "[4–6]",
    "[a]", "[note 1]", "[nb 2]", "[12]:3", "¹", "²³", "⁴", "{", "],",
    # spaces and separators (str.isspace and beyond), bullets, navigation
    " ", " ", " ", "  ", "\t", "\x1c", "\x85", "\u2028", "\u200b", "\u3000", "\x00",
    "- ", "* ", "• ", "– ", " | ", " · ", " / ", " » ", "\r", "\x0c",
]
LINE = st.lists(st.sampled_from([p for p in _PIECES if p not in ("\u2028", "\x85", "\r",
                                                                 "\x0c", "\x1c")]),
                max_size=40).map("".join)
TEXT = st.lists(st.one_of(st.sampled_from(_PIECES), st.just("\n")), max_size=80).map("".join)
WIDE = st.text(st.characters(codec="utf-8"), max_size=60)  # anything at all


def spans(passages: list[Any]) -> list[tuple[int, int, int | None, str | None]]:
    return [(p.start, p.end, p.page, p.label) for p in passages]


def quotes(found: list[Any]) -> list[tuple[int, int, int | None, str | None, str]]:
    return [(q.start, q.end, q.page, q.label, q.line) for q in found]


def pages_of(text: str, cuts: list[int]) -> tuple[Page, ...]:
    bounds = sorted({0, *(c % (len(text) + 1) for c in cuts), len(text)})
    return tuple(Page(a, b, n + 1, None if n % 2 else f"p{n}")
                 for n, (a, b) in enumerate(itertools.pairwise(bounds)))


@settings(max_examples=600, deadline=None)
@given(st.one_of(LINE, WIDE))
@example("Dr. J. Smith earned a Ph.D. in the U.S. in 1999. It was 3.5 Million.23 Then.")
@example("take 5 seconds.23 If so.  x" + "y" * 70 + ". Next")
def test_sentences_and_abbreviations_as_before(line: str) -> None:
    assert fast.split_sentences(line) == reference.split_sentences(line)
    for dot in (i for i, ch in enumerate(line) if ch == "."):
        assert fast.is_abbreviation(line, dot) == reference.is_abbreviation(line, dot)
    assert ([m.span(1) for m in fast._GLUED_NUMBER.finditer(line)]
            == [m.span(1) for m in reference._GLUED_NUMBER.finditer(line)])


@settings(max_examples=400, deadline=None)
@given(TEXT, st.lists(st.integers(0, 10_000), max_size=4))
def test_passages_as_before(text: str, cuts: list[int]) -> None:
    text = text.translate(_STRAY_BREAKS)
    assert spans(fast.split_passages(text)) == spans(reference.split_passages(text))
    pages = pages_of(text, cuts)
    assert spans(fast.split_passages(text, pages)) == spans(reference.split_passages(text, pages))


def test_long_sentences_and_words_as_before() -> None:
    words = "word " * 400 + "x" * 150 + ". " + "é" * 90 + ". Next one." + " - " * 3
    text = f"{words}\n- {words}\nshort.\n" + "a." * 700
    assert spans(fast.split_passages(text)) == spans(reference.split_passages(text))


@settings(max_examples=400, deadline=None)
@given(TEXT, st.sampled_from([None, "water boils", "Smith 1998", "note", "日本語", "[1]"]),
       st.sampled_from([None, "Water — Boils", "The title"]), st.integers(1, 5))
def test_quotes_roles_and_headings_as_before(text: str, query: str | None, title: str | None,
                                             k: int) -> None:
    text = text.translate(_STRAY_BREAKS)
    passages = fast.split_passages(text)
    for i in range(len(text) + 1):
        assert fast._after_terminator(text, i) == reference._after_terminator(text, i)
    assert (quotes(fast.select_quotes(text, passages, query, k, title=title))
            == quotes(reference.select_quotes(text, passages, query, k, title=title)))
    assert (quotes(fast.select_quotes(text, passages, query, k, lead_if_no_match=False))
            == quotes(reference.select_quotes(text, passages, query, k,
                                              lead_if_no_match=False)))
    assert fast.passage_roles(text, passages, title) == reference.passage_roles(
        text, passages, title)
    assert fast.heading_flags(text, passages) == reference.heading_flags(text, passages)
    for line in text.split("\n"):
        assert fast._line_role(line) == reference._line_role(line)


@settings(max_examples=300, deadline=None)
@given(st.one_of(TEXT, WIDE))
def test_index_terms_as_before(text: str) -> None:
    passages = fast.split_passages(text.translate(_STRAY_BREAKS))
    folded = text.translate(_STRAY_BREAKS)
    assert passages_terms(folded, [(p.start, p.end) for p in passages]) == [
        " ".join(passage_terms(folded[p.start : p.end])) for p in passages]
    everything = [(a, b) for a in range(0, len(text), 7) for b in (a + 3, len(text))]
    assert list(fast.span_tokens(text, everything)) == [
        fast.tokenize(text[a:b]) for a, b in everything]


@settings(max_examples=300, deadline=None)
@given(st.one_of(TEXT, WIDE))
def test_stray_breaks_are_found_where_translating_changes_the_text(text: str) -> None:
    document = Document(kind="file", locator="/x", display="x", text=text + " x",
                        raw=b"")
    assert prepare(document).version.text == (text + " x").translate(_STRAY_BREAKS)
    assert set(LINE_BREAKS + "\x00").isdisjoint(prepare(document).version.text)


@settings(max_examples=200, deadline=None)
@given(st.one_of(TEXT, WIDE), st.booleans(), st.sampled_from([25_000_000, 5]))
def test_chunks_are_the_texts_own(text: str, same_raw: bool, cap: int) -> None:
    text = text.translate(_STRAY_BREAKS) + "."
    raw = text.encode() if same_raw else b"<p>" + text.encode()
    version = prepare(Document(kind="file", locator="/x", display="x", text=text, raw=raw),
                      max_raw_stored=cap).version
    assert version.chunks == chunk_text(text)
    assert version.raw_compressed == zlib.compress(raw[:cap], 6)


def test_a_text_of_several_chunks_is_chunked() -> None:
    text = "Water boils. " * (CHUNK // 6)
    version = prepare(Document(kind="file", locator="/x", display="x", text=text,
                               raw=text.encode())).version
    assert len(version.chunks) == 3
    assert version.chunks == chunk_text(text)


def test_the_time_stamp_is_the_clocks_second() -> None:
    shape = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
    for _ in range(3):
        before = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        stamp = utc_now()
        after = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        assert shape.fullmatch(stamp) and before <= stamp <= after


@pytest.mark.parametrize("meta", [{}, {"b": 1, "a": "é", "z": [1, {"y": None}]}])
def test_a_registration_is_described_as_before(meta: dict[str, Any]) -> None:
    text = "Water boils at 100 °C. Fig. 3 shows it.\nHeading Here\n- item one, é."
    prepared = prepare(Document(kind="web", locator="https://x.example/", display="x",
                                text=text, raw=text.encode(), meta=meta,
                                aliases=("https://x.example/b", "https://x.example/")))
    registration = prepared.registration()
    described = pg_register._described(registration)
    version = registration.version
    assert described["meta"] == json.dumps(meta, ensure_ascii=False, sort_keys=True)
    assert [p[4] for p in described["passages"]] == [
        " ".join(passage_terms(text[p.start : p.end])) for p in version.passages]
    assert pg_register._JSON(described) == json.dumps(described, ensure_ascii=False)
    assert described["names"] == ["https://x.example/", "https://x.example/b"]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not beside the project")
def test_the_corpus_texts_split_and_quote_as_before() -> None:
    files = sorted(CORPUS.glob("**/*.txt"))[:40] + sorted(CORPUS.glob("**/*.md"))
    assert files
    for path in files:
        text = path.read_text(errors="replace").translate(_STRAY_BREAKS)
        passages = fast.split_passages(text)
        assert spans(passages) == spans(reference.split_passages(text)), path
        assert quotes(fast.select_quotes(text, passages)) == quotes(
            reference.select_quotes(text, passages)), path
        assert quotes(fast.select_quotes(text, passages, "the results")) == quotes(
            reference.select_quotes(text, passages, "the results")), path
        assert fast.heading_flags(text, passages) == reference.heading_flags(text, passages)
        assert passages_terms(text, [(p.start, p.end) for p in passages]) == [
            " ".join(passage_terms(text[p.start : p.end])) for p in passages], path


def test_the_reference_is_the_old_code_not_this() -> None:
    """The oracle differs where it must: its functions are the old bodies."""
    assert reference.split_sentences is not fast.split_sentences
    assert reference._GLUED_NUMBER.pattern != fast._GLUED_NUMBER.pattern
    assert dataclasses.is_dataclass(reference.Passage) and reference.Passage is not fast.Passage
