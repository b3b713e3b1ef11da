"""A ``[n]`` inside a quotation is the source's words, never a ledger citation (DESIGN §7).

Sources here hold their own bracket numbers, as papers do ("as shown in [12]"):
quoting them must render and check clean, and must never make ``render`` list
ledger source 12.
"""

from __future__ import annotations

from pathlib import Path

import pytest

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
