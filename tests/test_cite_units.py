"""The pieces under render and check: the markdown scanner, draft sentences, figures."""

from __future__ import annotations

import pytest

from fetchledger.cite.citations import read_citations
from fetchledger.cite.evidence import quotation_fragments
from fetchledger.cite.figures import figures_in, source_figures
from fetchledger.cite.markdown import scan


def _sentences(text: str) -> list[str]:
    return [s.text for s in read_citations(text).sentences]


@pytest.mark.parametrize(("text", "expected"), [
    ("Water boils.[1] Next one.[2]", ["Water boils.[1]", "Next one.[2]"]),
    ("Water boils.[1][2] Next.", ["Water boils.[1][2]", "Next."]),
    ("Water boils. [1] Next.", ["Water boils. [1]", "Next."]),
    ("See [1] for this. [2] shows more.", ["See [1] for this.", "[2] shows more."]),
    ("The U.S. Forest Service agrees. Ph.D. students, e.g. Ann, too.",
     ["The U.S. Forest Service agrees.", "Ph.D. students, e.g. Ann, too."]),
    ("It costs 3.50 dollars. It weighs 2.5 kg.", ["It costs 3.50 dollars.", "It weighs 2.5 kg."]),
    ('He said "It boils. Then it cools." and left.',
     ['He said "It boils. Then it cools." and left.']),
    ('He said "It boils."[1] Then it cooled.', ['He said "It boils."[1]', "Then it cooled."]),
    ("Dr. J. Smith wrote it. Wait… really? Yes!", ["Dr. J. Smith wrote it.", "Wait… really?",
                                                   "Yes!"]),
    ("水は沸騰する。[1]次の文。", ["水は沸騰する。[1]", "次の文。"]),
    ("Это вода.[1] Да.", ["Это вода.[1]", "Да."]),
])
def test_sentence_splitting(text: str, expected: list[str]) -> None:
    assert _sentences(text) == expected


def test_scanner_finds_markers_links_and_the_block() -> None:
    text = ("Water [1] and `[2]` and [x](https://a.example/p) and [3](./r.md).\n\n"
            "[4, 5] [6-8] [^9] \\[10\\] <https://b.example> www.c.example/x.\n\n"
            "<!-- fetchledger:sources -->\n[1] entry https://d.example\n"
            "<!-- /fetchledger:sources -->\n")
    draft = scan(text)
    assert [(m.ids, m.grouped, m.footnote) for m in draft.markers] == [
        ((1,), False, False), ((4, 5), True, False), ((6, 7, 8), True, False),
        ((9,), False, True)]
    assert [(link.url, link.kind) for link in draft.links] == [
        ("https://a.example/p", "link"), ("https://b.example", "autolink"),
        ("www.c.example/x", "bare")]
    assert draft.position(draft.links[0].start) == (1, 29)
    assert draft.block is not None
    assert text[draft.block.start:].startswith("<!-- fetchledger:sources -->")


def test_reference_links_and_footnote_definitions_are_not_markers() -> None:
    draft = scan("See [1] and [2].\n\n[1]: ./one.md\n\n[^2]: note [3]\n")
    assert [m.ids for m in draft.markers] == [(2,)]
    assert draft.footnote_labels == {"2"}


def test_quotations_are_attributed_to_the_nearest_marker_group() -> None:
    sentence = read_citations('"A b" [1][2] and "c d" [3], as [4] says "e f".').sentences[0]
    assert [(q.text, q.ids) for q in sentence.quotations] == [
        ("A b", (1, 2)), ("c d", (3,)), ("e f", (4,))]


def test_quotation_fragments() -> None:
    assert quotation_fragments("water *boils* … at [the] 100 °C.") == [
        "water boils", "at", "100 °C."]
    assert quotation_fragments("…") == []


def test_figures() -> None:
    found = figures_in("At 8,849 m on 1 May 2023, COVID-19 and H2O; 3,5 kg, 45% and 1.000.")
    assert [(f.written, f.value, f.is_date) for f in found] == [
        ("8,849", "8849", False), ("1 May 2023", "2023-05-01", True), ("3,5", "3.5", False),
        ("45", "45", False), ("1.000", "1.000", False)]
    source = source_figures("Published 2023-05-01; 8849 metres; 12 000 feet")
    assert source.holds(figures_in("8,849")[0])
    assert source.holds(figures_in("May 2023")[0])
    assert source.holds(figures_in("May 1, 2023")[0])
    assert not source.holds(figures_in("May 2, 2023")[0])
    assert not source.holds(figures_in("8,848")[0])
    # a day and month without a year hold a full date when the year is there too
    yearless = source_figures("Released on April 9th, the 2011 season began.")
    assert yearless.holds(figures_in("April 9, 2011")[0])
    assert yearless.holds(figures_in("April 2011")[0])
    assert not yearless.holds(figures_in("April 10, 2011")[0])
    assert not yearless.holds(figures_in("April 9, 2012")[0])
