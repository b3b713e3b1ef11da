"""A ledger-wide search does bounded work per query: what it costs must not grow
with the words of its candidates (structural checks; timings live in benchmarks/)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fetchledger import Document, Ledger
from fetchledger import ledger as ledger_module
from fetchledger.store.search import postgres_search
from fetchledger.store.windows import CHUNK
from fetchledger.text import passages
from fetchledger.text.passages import Passage, query_terms, rank_candidates, term_tokens, tokenize

# Every ending Snowball's English stemmer rewrites, and its exceptional words.
_ENDINGS = """s es ies ied sses us ss ed edly ing ingly eed eedly y ying ational tional enci
    anci abli entli izer ization ation ator alism aliti alli fulness ousli ousness iveness
    iviti biliti bli ogi fulli lessli li alize icate iciti ical ful ness ative al ance ence
    er ic able ible ant ement ment ent ism ate iti ous ive ize ion e l ll at bl iz""".split()
_EXCEPTIONS = """skis skies dying lying tying vying fying idly gently ugly early only singly
    sky news howe atlas cosmos bias andes inning outing canning herring earring proceed
    exceed succeed aed ued oed""".split()
_ROOTS = """a e o u y ya ye gener commun arsen past univers later emerg organ hop rat cr tr
    d l t v f gas bo sing plan relat condit valen hesit digit conform radic differ ion""".split()


def english_like_words() -> list[str]:
    return sorted({root + ending for root in _ROOTS for ending in ["", *_ENDINGS]}
                  | set(_EXCEPTIONS))


def _same_terms(text: str, terms: list[str]) -> None:
    full, cheap = tokenize(text), term_tokens(text, terms)
    assert len(cheap) == len(full)
    wanted = set(terms)
    assert [t if t in wanted else "" for t in cheap] == [t if t in wanted else "" for t in full]


def test_term_tokens_finds_every_term_tokenize_finds() -> None:
    words = english_like_words()
    text = " ".join(words)
    terms = sorted(set(tokenize(text)))
    for start in range(0, len(terms), 7):  # the query terms: every stem, a few at a time
        _same_terms(text, terms[start : start + 7])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="aeiouybcdlnrstgz'é1 ", min_size=1, max_size=12),
                min_size=1, max_size=30), st.data())
def test_term_tokens_agrees_with_tokenize_on_any_words(words: list[str],
                                                       data: st.DataObject) -> None:
    text = " ".join(words)
    stems = sorted(set(tokenize(text))) or ["x"]
    terms = data.draw(st.lists(st.sampled_from(stems), min_size=1, max_size=4))
    _same_terms(text, terms)


def test_ranking_candidates_stems_only_words_that_may_be_terms(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """100 candidates of 20 distinct words each: the scorer stems the words that may
    stem to a query term, not all 2,000 (stemming every word was most of a search)."""
    rng = random.Random(7)
    letters = "bcdfghjklmnpqrstvwxz"

    def word() -> str:
        return "".join(rng.choice(letters) + rng.choice("aeiou") for _ in range(3))

    texts = [" ".join(["glacier", *(word() for _ in range(19))]) + "." for _ in range(100)]
    candidates = [(text, Passage(0, len(text))) for text in texts]
    stemmed: list[str] = []
    real = passages._stem

    def counting(w: str) -> str:
        stemmed.append(w)
        return real(w)

    monkeypatch.setattr(passages, "_stem", counting)
    ranked = rank_candidates(candidates, "glacier melting", collection=1_000_000,
                             holding={"glacier": 100, "melting": 50})
    assert len(ranked) == 100
    may_match = sum(1 for text in texts for w in text.rstrip(".").split()
                    if w[:2] in ("gl", "me"))
    assert len(stemmed) <= may_match + len(query_terms("glacier melting")) * 2
    assert len(stemmed) < 300


def long_text(lines: int = 8_000) -> str:
    """About 4 MB of text whose 120 passages holding "glacier" all lie in its first
    200 kB: a search finds 100 candidates in one long source."""
    rng = random.Random(11)
    vocabulary = ["".join(rng.choice("bcdfglmnprstv") + rng.choice("aeiou") for _ in range(3))
                  for _ in range(400)]
    out = []
    for n in range(lines):
        words = [rng.choice(vocabulary) for _ in range(80)]
        if n < 400 and n % 3 == 0:
            words[5] = "glacier"
        out.append(" ".join(words).capitalize() + ".")
    return "\n".join(out)


def _read_so_far() -> int:
    """Bytes this process has read from files (page cache included) so far."""
    line = next(line for line in Path("/proc/self/io").read_text().splitlines()
                if line.startswith("rchar:"))
    return int(line.split()[1])


def _long_source(location: Path | str) -> str:
    text = long_text()
    assert len(text) > 20 * CHUNK
    with Ledger(location) as ledger:
        ledger.register(Document(kind="file", locator="/notes/long.txt", display="long.txt",
                                 text=text, raw=b""))
        ledger.register(Document(kind="file", locator="/notes/short.txt", display="short.txt",
                                 text="A glacier is a river of ice.", raw=b""))
    return text


def test_a_search_reads_a_bounded_part_of_a_long_source(tmp_path: Path) -> None:
    """100 candidates in a 4 MB text: the search reads their windows from the chunks
    that hold them, not the whole text once per candidate (it read 100 x 4 MB)."""
    location = tmp_path / "ledger.db"
    text = _long_source(location)
    with Ledger(location, read_only=True) as ledger:
        ledger._store.db.execute("PRAGMA cache_size = 16")  # type: ignore[attr-defined]
        ledger.quotes("glacier")  # imports and first reads happen before the count
        before = _read_so_far()
        found = ledger.quotes("glacier")
        read = _read_so_far() - before
    snippets = [s for r in found for s in r.snippets]
    assert len(snippets) == 3 and all("glacier" in s.quote.lower() for s in snippets)
    assert all(text[s.start : s.end] == s.quote for r in found if r.source.id == 1
               for s in r.snippets)
    assert read < 2_000_000, f"one search read {read:,} bytes of a {len(text):,}-byte ledger"


@pytest.mark.postgres
def test_a_postgres_search_reads_no_long_text_whole(pg_ledger_url: str) -> None:
    """The same on PostgreSQL, counted by the server: the search detoasts no long text
    (the version's TOAST blocks), and reads a bounded number of chunk blocks."""
    import psycopg

    text = _long_source(pg_ledger_url)
    with psycopg.connect(pg_ledger_url) as db, db.transaction():
        def toast_blocks(table: str) -> int:
            row = db.execute("SELECT pg_stat_get_xact_blocks_fetched(reltoastrelid) "
                             "FROM pg_class WHERE oid = %s::regclass", (table,)).fetchone()
            return int(row[0]) if row else 0

        before = {table: toast_blocks(table) for table in ("version", "text_chunk")}
        found = postgres_search(lambda sql, params: db.execute(sql, params).fetchall(),
                                ["glacier"], 100, 40)
        fetched = {table: toast_blocks(table) - before[table] for table in before}
    assert len(found.hits) == 100
    assert all(text[hit.context_start : hit.end + 40] == hit.context
               for hit in found.hits if hit.source_id == 1)
    assert fetched["version"] == 0
    assert fetched["text_chunk"] < 200


def test_a_read_only_search_records_its_quotes_through_one_writer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``quotes`` only reads the ledger and records what it hands out through a writer
    opened for that; one writer for all the sources of its answer, not one each."""
    location = tmp_path / "ledger.db"
    with Ledger(location) as ledger:
        for n in range(3):
            ledger.register(Document(kind="file", locator=f"/notes/{n}.txt",
                                     display=f"{n}.txt", text=f"Glacier {n} melts.", raw=b""))
    opened: list[object] = []
    real = ledger_module.open_store

    def counting(*args: object, **kwargs: object) -> object:
        opened.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    with Ledger(location, read_only=True) as ledger:
        monkeypatch.setattr(ledger_module, "open_store", counting)
        found = ledger.quotes("glacier", k=3)
    assert sorted(r.source.id for r in found) == [1, 2, 3]
    assert not any(r.warnings for r in found)
    assert len(opened) == 1
    with Ledger(location) as ledger:
        assert len(ledger.recorded_quotes()) == 3
