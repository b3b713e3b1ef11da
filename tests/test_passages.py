"""Passages, ranking and quote cutting: unit cases and verbatim properties."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from fetchledger.document import Page
from fetchledger.text.normalize import LINE_BREAKS
from fetchledger.text.passages import (
    MAX_QUOTE,
    Passage,
    cut_quote,
    display_line,
    rank,
    rank_candidates,
    select_quotes,
    split_passages,
    split_sentences,
)


def sentences(line: str) -> list[str]:
    return [line[a:b] for a, b in split_sentences(line)]


def test_sentences_survive_abbreviations_initials_and_decimals() -> None:
    line = ("Dr. J. Smith earned a Ph.D. in the U.S. in 1999. Water boils at 99.97 °C, "
            "e.g. at sea level. Is it? Yes! “Quoted.” Next one.")
    assert sentences(line) == [
        "Dr. J. Smith earned a Ph.D. in the U.S. in 1999.",
        "Water boils at 99.97 °C, e.g. at sea level.",
        "Is it?",
        "Yes!",
        "“Quoted.”",
        "Next one.",
    ]


def test_cjk_sentences_split_without_spaces() -> None:
    assert sentences("水は百度で沸騰する。高地では低い。") == [
        "水は百度で沸騰する。", "高地では低い。"]


def test_passages_never_cross_lines_or_pages() -> None:
    text = "First line. Still first.\nSecond line\nthird line on page two. More."
    pages = (Page(0, 36, 1), Page(37, len(text), 2, "ii"))
    passages = split_passages(text, pages)
    for p in passages:
        assert "\n" not in text[p.start : p.end]
    assert [text[p.start : p.end] for p in passages] == [
        "First line.", "Still first.", "Second line", "third line on page two.", "More."]
    assert [(p.page, p.label) for p in passages] == [
        (1, None), (1, None), (1, None), (2, "ii"), (2, "ii")]


def test_a_line_crossing_a_page_start_is_split_there() -> None:
    text = "one two three four"
    pages = (Page(0, 8, 1), Page(8, len(text), 2))
    spans = [(text[p.start : p.end], p.page) for p in split_passages(text, pages)]
    assert spans == [("one two", 1), ("three four", 2)]


def test_long_sentences_are_chunked_for_the_index() -> None:
    text = " ".join(["word"] * 600)
    passages = split_passages(text)
    assert len(passages) >= 3
    assert all(p.end - p.start <= 1000 for p in passages)


def test_ranking_prefers_the_passage_with_the_query_terms() -> None:
    text = ("Cats sleep a lot.\nWater boils at 100 °C at sea level.\n"
            "The boiling point decreases with altitude.\nDogs bark.")
    passages = split_passages(text)
    best = rank(text, passages, "boiling point altitude")[0][1]
    assert text[passages[best].start : passages[best].end] == (
        "The boiling point decreases with altitude.")


def test_ledger_wide_ranking_weighs_words_by_the_whole_collection() -> None:
    # Both candidates hold one query word each; the ledger's counts say which is rare.
    texts = ["The glacier melted during the summer.", "The river flooded during the summer."]
    candidates = [(t, Passage(0, len(t))) for t in texts]

    def best(holding: dict[str, int]) -> int:
        return rank_candidates(candidates, "glacier river", collection=10_000,
                               holding=holding)[0][1]

    assert best({"glacier": 3, "river": 4_000}) == 0
    assert best({"glacier": 4_000, "river": 3}) == 1
    assert rank_candidates(candidates, "lava", collection=10, holding={"lava": 2}) == []


def test_phrase_bonus_breaks_ties_toward_adjacent_terms() -> None:
    text = "The point of boiling is unclear.\nThe boiling point is 100 degrees."
    passages = split_passages(text)
    best = rank(text, passages, "boiling point")[0][1]
    assert text[passages[best].start : passages[best].end] == "The boiling point is 100 degrees."


def test_long_passage_is_cut_around_the_query_with_ellipses() -> None:
    filler = " ".join(f"w{i}" for i in range(120))
    text = f"{filler} the rare platypus lays eggs {filler}."
    passage = split_passages(text)[0]
    quote = cut_quote(text, passage, ["platypus"])
    assert quote.end - quote.start <= MAX_QUOTE
    assert "platypus" in text[quote.start : quote.end]
    assert quote.line.startswith("…") and quote.line.endswith("…")
    assert quote.line.strip("…") == text[quote.start : quote.end]


def test_whole_sentences_carry_no_ellipsis_cut_ones_do() -> None:
    text = "Water boils at 100 °C. It is hot."
    assert display_line(text, 0, 22) == "Water boils at 100 °C."
    assert display_line(text, 6, 21) == "…boils at 100 °C…"


def test_leading_passages_skip_headings() -> None:
    text = "Boiling point\nMenu\nAt sea level, water boils at 100 °C.\nIt is hot here today."
    quotes = select_quotes(text, split_passages(text), None, 2)
    assert [text[q.start : q.end] for q in quotes] == [
        "At sea level, water boils at 100 °C.", "It is hot here today."]


def test_no_match_gives_leading_passages_or_nothing() -> None:
    text = "At sea level, water boils at 100 °C."
    passages = split_passages(text)
    assert select_quotes(text, passages, "zebra", 3)
    assert select_quotes(text, passages, "zebra", 3, lead_if_no_match=False) == []


def test_duplicate_passages_are_handed_out_once() -> None:
    text = "Same sentence here now.\nSame sentence here now.\nOther sentence here too."
    quotes = select_quotes(text, split_passages(text), "sentence", 3)
    assert len({text[q.start : q.end] for q in quotes}) == len(quotes) == 2


# --- properties -------------------------------------------------------------------

stored_texts = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters=LINE_BREAKS),
    max_size=3000,
)
queries = st.one_of(st.none(), st.text(max_size=40), st.sampled_from(["water", "a b", "É"]))


@settings(max_examples=300, deadline=None)
@given(text=stored_texts, query=queries, k=st.integers(1, 6))
def test_every_quote_is_verbatim_one_line_and_bounded(text: str, query: str | None,
                                                      k: int) -> None:
    passages = split_passages(text)
    for p in passages:
        assert 0 <= p.start < p.end <= len(text)
        assert "\n" not in text[p.start : p.end]
    for q in select_quotes(text, passages, query, k):
        quote = text[q.start : q.end]
        assert quote and "\n" not in quote
        assert len(quote) <= MAX_QUOTE
        assert q.line in {quote, f"…{quote}", f"{quote}…", f"…{quote}…"}


sentence_texts = st.lists(
    st.tuples(st.text(alphabet="abcdeXYZ 1é", min_size=1, max_size=12).filter(str.strip),
              st.sampled_from([" ", " ", ". ", "! ", "? ", ".[3] ", ", ", "\n", ". a"])),
    min_size=1, max_size=400).map(lambda parts: "".join(w + s for w, s in parts))


@settings(max_examples=200, deadline=None)
@given(text=sentence_texts, query=queries, k=st.integers(1, 4))
def test_every_quote_is_a_whole_passage_or_a_marked_cut(text: str, query: str | None,
                                                        k: int) -> None:
    passages = split_passages(text)
    for q in select_quotes(text, passages, query, k):
        home = [p for p in passages if p.start <= q.start and q.end <= p.end]
        assert len(home) == 1  # inside exactly one passage: never two run together
        passage, quote = home[0], text[q.start : q.end]
        if q.start > passage.start:
            assert q.line.startswith("…"), (quote, text[passage.start : passage.end])
        if q.end < passage.end:
            assert q.line.endswith("…"), (quote, text[passage.start : passage.end])


@settings(max_examples=200, deadline=None)
@given(words=st.lists(st.text(min_size=1, max_size=15).filter(lambda w: w.strip()),
                      min_size=1, max_size=200),
       seps=st.lists(st.sampled_from([" ", ". ", "! ", "\n", "? ", ", "]), min_size=1))
def test_passages_cover_every_word(words: list[str], seps: list[str]) -> None:
    parts = []
    for i, word in enumerate(words):
        parts.append(word.replace("\n", " "))
        parts.append(seps[i % len(seps)])
    text = "".join(parts)
    covered = set()
    for p in split_passages(text):
        covered.update(range(p.start, p.end))
    bullets = {m.start() for m in re.finditer(r"(?m)^[-*•◦▪‣–](?=\s+\S)", text)}
    for i, ch in enumerate(text):
        if not ch.isspace() and i not in bullets:  # a list item's bullet is no word
            assert i in covered, (text, i)


def test_a_list_items_bullet_is_not_quoted() -> None:
    text = "Steps\n- Only the main diagonal entries are real.\n• Boil the water first.\n- \n"
    quotes = select_quotes(text, split_passages(text), "entries water", 2)
    assert sorted(q.line for q in quotes) == ["Boil the water first.",
                                              "Only the main diagonal entries are real."]


def test_initials_are_capitals_and_elisions_end_nothing() -> None:
    line = ("For any real scalar c. Also recall this. J. Smith agreed. The film is vaudou "
            "[…] Lire la suite. He said (...) nothing more.")
    assert [line[a:b] for a, b in split_sentences(line)] == [
        "For any real scalar c.", "Also recall this.", "J. Smith agreed.",
        "The film is vaudou […] Lire la suite.", "He said (...) nothing more."]
