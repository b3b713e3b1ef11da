"""A table of drafts and the exact findings `check` must report (rule, line[, column]).

Drafts marked ``rendered`` get their Sources block from `render` first, so
only the rule under test fires; a ``tweak`` edits the rendered draft.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fetchledger import Document, Ledger
from fetchledger.cite import RULES, check, render

from cite_sources import seed


@dataclass
class Case:
    name: str
    draft: str
    expected: list[tuple[str, int] | tuple[str, int, int]]
    rendered: bool = True
    tweak: Callable[[str], str] | None = None
    allow_links: bool = False
    style: str = "markdown"
    renumber: bool = False
    options: dict[str, bool] = field(default_factory=dict)


CLEAN = [
    Case("plain citations",
         "At sea level, water boils at 100 °C.[1] On Everest, at 8,849 metres, it boils at "
         "about 70 °C.[1]\n", []),
    Case("abbreviations and decimals",
         "The U.S. Forest Service recommends 15 psi.[2] Dr. Smith et al. agree, e.g. in the "
         "Ph.D. thesis by J. Doe.[2] The API reported 89.9 °C at 3,000 m.[5]\n", []),
    Case("markers glued after punctuation",
         "Water boils at 100 °C at sea level.[1] Beans cook in 35 minutes.[2] Python "
         "3.11.9 ran it.[4]\n", []),
    Case("code blocks and spans hold no markers",
         "Index with `a[5]` in code.[4]\n\n```python\nvalues[5] = 1  # [7]\n```\n\n"
         "    indented[8] code block https://example.com/x\n\n"
         "~~~\n[9] https://example.net\n~~~\n", []),
    Case("markdown links and footnotes",
         "See [the local guide](./guide.md) and ![a chart](chart.png) for background.[^a] "
         "The API reported 89.9 °C.[5]\n\n[^a]: Written by me, see [my notes](notes.md).\n",
         []),
    Case("allowed markdown link",
         "Water boils at 100 °C at sea level.[1] The [encyclopedia](https://example.org/b) "
         "agrees.[1]\n", [], allow_links=True),
    Case("headings lists tables block quotes",
         "# Boiling at altitude\n\n## Why it matters\n\n"
         "- At sea level, water boils at 100 °C.[1]\n"
         "- A pressure cooker raises it to about 120 °C.[2]\n\n"
         "1. Beans cook in 35 minutes.[2]\n2. Not in 2 hours.[2]\n\n"
         "| Place | Boiling point |\n|---|---|\n| Sea level | 100 °C[1] |\n"
         "| Everest | about 70 °C[1] |\n\n"
         "> On the summit of Mount Everest, water boils at about 70 °C.[1]\n\n"
         "Setext heading\n--------------\n\n* * *\n", []),
    Case("non-English text",
         "Auf Meereshöhe siedet Wasser bei 100 °C.[3] Auf der Zugspitze sind es etwa 90 °C.[3]"
         "\n\n海面では水は100 °Cで沸騰する。[1]エベレストでは約70 °Cである。[1]\n", []),
    Case("verbatim quotations (typographic quotes, emphasis, elision)",
         'The page says “water boils at *100 °C*”.[1] It also says "At sea level, water '
         'boils … (212 °F)."[1] The report: "[A] pressure cooker raises the boiling point".[2]'
         "\n", []),
    Case("figures written another way",
         "On Everest, at 8849 metres, water boils at about 70 °C.[1] The measurement was "
         "published on March 3, 2021.[1] The camp kettle boiled at 86 °C in May 2023.[6]\n",
         []),
    Case("marker as the object of a sentence",
         "Water boils at 100 °C at sea level, as shown in [1]. The field notes agree, see "
         "[6].\n", []),
    Case("HTML comments and inline HTML",
         "<!-- a note to self with [7] and https://example.com -->\n\n"
         "Water boils at <b>100 °C</b> at sea level.[1]\n", []),
    Case("escaped brackets are not markers",
         "Write \\[12\\] to show a literal marker, as the field notes do.[6]\n", []),
    Case("renumbered draft", "Beans cook in 35 minutes.[2] Water boils at 100 °C.[1]\n", [],
         renumber=True),
    Case("footnotes style", "Beans cook in 35 minutes.[2] Water boils at 100 °C.[1]\n", [],
         style="footnotes"),
    Case("evidence style", "Beans cook in 35 minutes.[2] Water boils at 100 °C.[1]\n", [],
         style="evidence"),
    Case("text fragments", "Water boils at 100 °C at sea level.[1]\n", [],
         options={"text_fragments": True}),
]

FINDINGS = [
    Case("unknown id", "Water boils at 100 °C.[9]\n", [("unknown-id", 1, 23)], rendered=False),
    Case("unknown id inside a group", "Water boils at 100 °C.[1, 9]\n",
         [("unknown-id", 1, 23), ("grouped-ids", 1, 23), ("sources-missing", 1)],
         rendered=False),
    Case("quotation not verbatim",
         'The page says "water boils at 101 °C".[1]\n', [("quote-not-verbatim", 1, 15)]),
    Case("quotation of a version the source has changed since",
         'The notice said "The bridge opens in May."[7]\n', [("quote-drifted", 1, 17)]),
    Case("quotation with a changed word",
         'The report says "a pressure cooker lifts the boiling point".[2]\n',
         [("quote-not-verbatim", 1, 17)]),
    Case("quotation attributed to the marker before it",
         'According to [1], "water boils at 99 °C".\n', [("quote-not-verbatim", 1, 19)]),
    Case("marker inside the quotation",
         'The page says "At sea level, water boils at 100 °C (212 °F).[1]" plainly.[1]\n',
         [("marker-in-quotation", 1, 15)]),
    Case("marker inside a blockquote",
         "> On the summit of Mount Everest, at 8,849 metres, water boils at about 70 °C.[1]\n",
         [("marker-in-quotation", 1, 3)], rendered=False),
    Case("bare URL", "Water boils at 100 °C, see https://example.org/boiling.[1]\n",
         [("url-in-prose", 1, 28)]),
    Case("autolink", "Water boils at 100 °C <https://example.org/x>.[1]\n",
         [("url-in-prose", 1, 24)]),
    Case("markdown link target", "Water boils at [100 °C](https://example.org/b).[1]\n",
         [("url-in-prose", 1, 25)]),
    Case("reference definition", "Water boils at 100 °C.[1]\n\n[ref]: https://example.org/r\n",
         [("url-in-prose", 3, 8)]),
    Case("allow-links keeps bare URLs an error",
         "Water boils at [100 °C](https://example.org/b) (www.example.org).[1]\n",
         [("url-in-prose", 1, 49)], allow_links=True),
    Case("URL in a footnote definition", "Water boils at 100 °C.[1][^n]\n\n"
         "[^n]: From https://example.org/n\n", [("url-in-prose", 3, 12)]),
    Case("marker before the punctuation", "Water boils at 100 °C at sea level [1].\n",
         [("marker-placement", 1, 36)]),
    Case("marker before a comma",
         "Water boils at 100 °C [1], and at about 70 °C on Everest.[1]\n",
         [("marker-placement", 1, 23)]),
    Case("space between punctuation and marker",
         "Water boils at 100 °C at sea level. [1] Beans cook in 35 minutes.[2]\n",
         [("marker-placement", 1, 37)]),
    Case("grouped ids with a comma", "Water boils at 100 °C.[1, 2]\n",
         [("grouped-ids", 1, 23)]),
    Case("grouped ids as a range", "Water boils at 100 °C.[1-3]\n",
         [("grouped-ids", 1, 23)]),
    Case("more than three ids", "Water boils at 100 °C.[1][2][3][6]\n",
         [("too-many-ids", 1, 32)]),
    Case("figure drift", "On Everest, at 8,848 metres, water boils at about 70 °C.[1]\n",
         [("figure-drift", 1, 16)]),
    Case("figure drift: decimal digits differ", "The API reported 89.5 °C.[5]\n",
         [("figure-drift", 1, 18)]),
    Case("figure drift: date", "The measurement was published on March 4, 2021.[1]\n",
         [("figure-drift", 1, 34)]),
    Case("figure drift checks every cited source",
         "At 3,000 m water boils at 89.9 °C, and at sea level at 100 °C.[1][5] It boiled at "
         "87 °C.[6]\n", [("figure-drift", 1, 83)]),
    Case("coverage", "Water boils at 100 °C at sea level.[1] This is why pasta takes longer in "
         "the mountains.\n", [("coverage", 1, 40)]),
    Case("coverage in a list item",
         "- Beans cook in 35 minutes.[2] That saves a lot of gas every day.\n",
         [("coverage", 1, 32)]),
    Case("sources block missing", "Water boils at 100 °C.[1]\n", [("sources-missing", 1)],
         rendered=False),
    Case("cited id missing from the block", "Water boils at 100 °C.[1]\n",
         [("missing-from-sources", 3, 26)],
         tweak=lambda t: t.replace("°C.[1]\n", "°C.[1]\n\nBeans cook in 35 minutes.[2]\n", 1)),
    Case("block lists an uncited id", "Water boils at 100 °C.[1] Beans cook fast.[2]\n",
         [("sources-uncited", 8, 1)], tweak=lambda t: t.replace(" Beans cook fast.[2]", "")),
    Case("stale block", "Water boils at 100 °C.[1]\n", [("sources-stale", 3)],
         tweak=lambda t: t.replace("retrieved 20", "retrieved 19")),
    Case("two blocks", "Water boils at 100 °C.[1]\n", [("sources-stale", 9, 1)],
         tweak=lambda t: t + "\n" + t[t.index("<!--"):]),
]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cite") / "ledger.db"
    with Ledger(path) as ledger:
        seed(ledger)
        # [7]: a notice that changed after it was quoted (version 2 says June)
        for month in ("May", "June"):
            text = f"Bridge works\nThe bridge opens in {month}."
            ledger.register(Document(
                kind="web", locator="https://example.org/bridge",
                display="https://example.org/bridge", text=text, raw=text.encode(),
                title="Bridge works", meta={"content_type": "text/plain"},
                extractor="test", extractor_version="1"))
    return path


def _run(seeded: Path, case: Case) -> list[tuple[str, int, int]]:
    with Ledger(seeded) as ledger:
        draft = case.draft
        if case.rendered:
            draft = render(ledger, draft, style=case.style, renumber=case.renumber,
                           **case.options).text
        if case.tweak:
            draft = case.tweak(draft)
        report = check(ledger, draft, allow_links=case.allow_links)
    return [(p.rule, p.line, p.column) for p in report.problems]


@pytest.mark.parametrize("case", CLEAN, ids=[c.name for c in CLEAN])
def test_clean_drafts_have_no_findings(seeded: Path, case: Case) -> None:
    assert _run(seeded, case) == []


@pytest.mark.parametrize("case", FINDINGS, ids=[c.name for c in FINDINGS])
def test_each_rule_reports_where(seeded: Path, case: Case) -> None:
    found = _run(seeded, case)
    left = list(found)
    for expected in case.expected:
        match = next((f for f in left if f[: len(expected)] == expected), None)
        assert match is not None, f"{expected} not in {found}"
        left.remove(match)
    assert left == [], f"unexpected findings {left}"


def test_every_rule_has_a_case_and_a_severity() -> None:
    covered = {e[0] for c in FINDINGS for e in c.expected}
    assert covered == set(RULES)
    assert {RULES[r] for r in ("unknown-id", "quote-not-verbatim", "url-in-prose",
                               "missing-from-sources")} == {"error"}
    assert {s for r, s in RULES.items() if r not in (
        "unknown-id", "quote-not-verbatim", "url-in-prose", "missing-from-sources")} == {
        "warning"}


def test_findings_carry_message_hint_and_ids(seeded: Path) -> None:
    with Ledger(seeded) as ledger:
        report = check(ledger, 'The page says "water boils at 101 °C".[1]\n')
    quote = next(p for p in report.problems if p.rule == "quote-not-verbatim")
    assert quote.ids == (1,)
    assert quote.severity == "error"
    assert "not verbatim in [1]" in quote.message
    # the nearest real passage is shown, verbatim
    assert quote.hint == ('nearest passage: [1] "At sea level, water boils at 100 °C '
                          '(212 °F)."')
    data = report.to_json()
    assert data["ok"] is False
    assert set(data["problems"][0]) == {"line", "column", "severity", "rule", "message", "ids",
                                        "hint"}


def test_strict_turns_warnings_into_failure(seeded: Path) -> None:
    with Ledger(seeded) as ledger:
        lenient = check(ledger, "Water boils at 100 °C.[1]\n")
        strict = check(ledger, "Water boils at 100 °C.[1]\n", strict=True)
    assert [p.rule for p in lenient.problems] == ["sources-missing"]
    assert lenient.ok and lenient.exit_code == 0
    assert not strict.ok and strict.exit_code == 1


def test_crlf_drafts_keep_their_lines(seeded: Path) -> None:
    with Ledger(seeded) as ledger:
        report = check(ledger, "Intro line.\r\nWater boils at 100 °C [1].\r\n")
    assert [(p.rule, p.line, p.column) for p in report.problems] == [
        ("marker-placement", 2, 23), ("sources-missing", 2, 27)]


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.sampled_from(list("ab .,[]()^*_`#>-|!:\n129\"“”<>/\\…")),
                    max_size=120))
def test_check_never_fails_on_any_text(seeded: Path, text: str) -> None:
    with Ledger(seeded) as ledger:
        report = check(ledger, text)
    lines = text.split("\n")
    for problem in report.problems:
        assert problem.rule in RULES
        assert 1 <= problem.line <= len(lines)
        assert 1 <= problem.column <= len(lines[problem.line - 1]) + 1
