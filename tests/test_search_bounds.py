"""A ledger-wide search does bounded work per query: what it costs must not grow
with the words of its candidates (structural checks; timings live in benchmarks/)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
