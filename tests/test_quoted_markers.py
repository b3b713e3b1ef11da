"""A ``[n]`` inside a quotation is the source's words, never a ledger citation (DESIGN §7).

Sources here hold their own bracket numbers, as papers do ("as shown in [12]"):
quoting them must render and check clean, and must never make ``render`` list
ledger source 12.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fetchledger import Document, Ledger
from fetchledger.cite import check, render
from fetchledger.cite.citations import read_citations

PAPER = "\n".join([
    "Attention is all you need",
    "Self-attention relates positions of one sequence, as shown in [12] and later work.",
    "The model reaches 28.4 BLEU on the WMT 2014 task [3].",
])
WEB = "At sea level, water boils at 100 °C. On Everest it boils at about 70 °C."


@pytest.fixture()
def ledger(tmp_path: Path) -> Ledger:
    with Ledger(tmp_path / "ledger.db") as opened:
        for n, text in enumerate((PAPER, WEB), start=1):
            opened.register(Document(kind="web", locator=f"https://site{n}.example/",
                                     display=f"https://site{n}.example/", text=text,
                                     raw=text.encode(), title=f"Page {n}",
                                     extractor="test", extractor_version="1"))
        yield opened


def problems(ledger: Ledger, draft: str) -> list[tuple[str, tuple[int, ...]]]:
    rendered = render(ledger, draft).text
    return [(p.rule, p.ids) for p in check(ledger, rendered).problems]


@pytest.mark.parametrize("draft", [
    'The paper notes that self-attention "relates positions of one sequence, as shown in '
    '[12] and later work".[1]\n',
    "The paper notes “The model reaches 28.4 BLEU on the WMT 2014 task [3].”[1]\n",
    "> Self-attention relates positions of one sequence, as shown in [12] and later work.\n"
    "\n— [1]\n",
    "> Self-attention relates positions of one sequence, as shown in [12] and later work.\n"
    "> — [1]\n",
])
def test_a_quoted_bracket_number_is_the_sources_words(ledger: Ledger, draft: str) -> None:
    citations = read_citations(draft)
    assert citations.cited_ids() == [1]
    assert render(ledger, draft).ids == (1,)
    assert problems(ledger, draft) == []


def test_a_quoted_number_never_lists_a_source(ledger: Ledger) -> None:
    draft = 'Its text says "as shown in [2]" and nothing else.\n'
    assert read_citations(draft).cited_ids() == []
    assert render(ledger, draft).ids == ()


def test_a_blockquote_followed_by_a_citation_is_verified(ledger: Ledger) -> None:
    wrong = "> At sea level, water boils at 90 °C.\n\n— [2]\n"
    found = problems(ledger, wrong)
    assert ("quote-not-verbatim", (2,)) in found
    right = "> At sea level, water boils at 100 °C.\n\n[2]\n"
    assert problems(ledger, right) == []


def test_a_quotation_ending_in_a_marker_warns_marker_in_quotation(ledger: Ledger) -> None:
    draft = 'The page says "At sea level, water boils at 100 °C.[2]" plainly.\n'
    assert read_citations(draft).cited_ids() == []
    report = check(ledger, draft)
    rules = [(p.rule, p.ids, p.severity) for p in report.problems]
    assert ("marker-in-quotation", (2,), "warning") in rules
    assert report.ok
    assert not any(rule == "quote-not-verbatim" for rule, _, _ in rules)
    blockquote = "> On Everest it boils at about 70 °C.[2]\n"
    assert [p.rule for p in check(ledger, blockquote).problems] == ["marker-in-quotation"]


def test_a_trailing_marker_that_is_not_a_misplaced_citation_is_just_words(
        ledger: Ledger) -> None:
    # [9] is no source of this ledger: nothing to move, and never an unknown-id error
    draft = 'The paper says "relates positions of one sequence [9]" here.\n'
    assert [p.rule for p in check(ledger, draft).problems] == []


QUOTE_STYLES = [("\"", "\""), ("“", "”"), ("‘", "’"), ("'", "'"), ("«", "»"), ("« ", " »"),
                ("»", "«"), ("„", "“"), ("‚", "‘"), ("「", "」"), ("『", "』"), ("‹", "›"),
                ("<q>", "</q>")]


@pytest.mark.parametrize(("opener", "closer"), QUOTE_STYLES)
def test_a_bracket_number_in_a_quotation_of_any_language_is_quoted_words(
        ledger: Ledger, opener: str, closer: str) -> None:
    draft = (f"The paper notes that self-attention {opener}relates positions of one "
             f"sequence, as shown in [12] and later work{closer}.[1] Its score was cited "
             f"as {opener}28.4 BLEU on the WMT 2014 task [3]{closer} in reviews.[1]\n")
    assert read_citations(draft).cited_ids() == [1]
    assert render(ledger, draft).ids == (1,)
    assert problems(ledger, draft) == []


@pytest.mark.parametrize("draft", [
    # a quotation running over a soft line break of the draft
    'The paper notes that self-attention "relates positions of one sequence,\nas shown in '
    '[12] and later work".[1]\n',
    # nested quotations: the outer one holds the marker
    "A reviewer wrote: “the paper says ‘as shown in [12] and later work’ plainly”.[1]\n",
    # a lazy continuation line of a blockquote, and a blockquote inside a list
    "> Self-attention relates positions of one sequence,\nas shown in [12] and later work.\n"
    "\n— [1]\n",
    "- > Self-attention relates positions of one sequence, as shown in [12] and later work.\n"
    "\n  — [1]\n",
    # in a code span the quotation is no prose at all
    'The page\'s markup reads `"as shown in [2]"` verbatim.[1]\n',
])
def test_quotations_across_lines_nested_and_in_blocks_hold_their_numbers(
        ledger: Ledger, draft: str) -> None:
    assert render(ledger, draft).ids == (1,)


@pytest.mark.parametrize("draft", [
    "The students' results were good.[2] It's true.[2]\n",  # apostrophes quote nothing
    "In the '90s the boiling point was measured again.[2]\n",
    "The café’s owner said water boils at 100 °C.[2]\n",
])
def test_apostrophes_never_hide_a_citation(ledger: Ledger, draft: str) -> None:
    assert render(ledger, draft).ids == (2,)


@pytest.mark.parametrize(("opener", "closer"), QUOTE_STYLES)
def test_a_quotation_ending_in_a_marker_warns_in_every_style(
        ledger: Ledger, opener: str, closer: str) -> None:
    draft = f"The page says {opener}At sea level, water boils at 100 °C.[2]{closer} plainly.\n"
    rules = [(p.rule, p.ids) for p in check(ledger, draft).problems]
    assert ("marker-in-quotation", (2,)) in rules
    assert render(ledger, draft).ids == ()


_WORDS = st.sampled_from(["water", "boils", "at", "sea", "level", "the", "model", "shown",
                          "in", "later", "work", "and"])
_NUMBERS = st.integers(1, 2).map(lambda n: f"[{n}]") | st.tuples(
    st.integers(1, 2), st.integers(1, 2)).map(lambda p: f"[{p[0]}, {p[1]}]") | \
    st.integers(1, 2).map(lambda n: f"[^{n}]")


@st.composite
def _quoted(draw: st.DrawFn) -> str:
    opener, closer = draw(st.sampled_from(QUOTE_STYLES))
    words = draw(st.lists(st.one_of(_WORDS, _NUMBERS), min_size=1, max_size=8))
    if not any(w.startswith("[") for w in words):
        words.append(draw(_NUMBERS))
    return f"{opener}{' '.join(words)}{closer}"


@st.composite
def _draft(draw: st.DrawFn) -> tuple[str, set[int]]:
    cited: set[int] = set()
    sentences = []
    for _ in range(draw(st.integers(1, 4))):
        parts = draw(st.lists(st.one_of(_WORDS, _quoted()), min_size=1, max_size=6))
        sentence = "The " + " ".join(parts) + "."
        if draw(st.booleans()):
            typed = draw(st.integers(1, 2))
            cited.add(typed)
            sentence += f"[{typed}]"
        sentences.append(sentence)
    return " ".join(sentences) + "\n", cited


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_draft())
def test_a_bracket_number_a_writer_did_not_type_as_a_citation_never_lists_a_source(
        ledger: Ledger, drawn: tuple[str, set[int]]) -> None:
    draft, cited = drawn
    assert set(render(ledger, draft).ids) == cited
