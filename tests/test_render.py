"""render: styles, idempotence, the author's own sections, unknown ids, URLs only from
the ledger."""

from __future__ import annotations

import json
import re
from pathlib import Path

import bibtexparser
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fetchledger import InvalidArgument, Ledger, UnknownSource
from fetchledger.cite import STYLES, render
from fetchledger.cite.markdown import BLOCK_END, BLOCK_START

from cite_sources import seed

pytestmark = pytest.mark.both_backends

DRAFT = ("# Boiling\n\nAt sea level, water boils at 100 °C.[1] A pressure cooker raises the "
         "boiling point to about 120 °C.[2]\n")


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("render") / "ledger.db"
    with Ledger(path) as ledger:
        seed(ledger)
    return path


@pytest.fixture
def ledger(seeded: Path) -> Ledger:
    with Ledger(seeded) as opened:
        yield opened  # type: ignore[misc]


def _block_of(text: str) -> str:
    start = text.index(BLOCK_START)
    end = text.index(BLOCK_END) + len(BLOCK_END)
    return text[start:end]


def test_markdown_block_lists_exactly_the_cited_ids(ledger: Ledger) -> None:
    out = render(ledger, DRAFT)
    day = ledger.source(1).retrieved_at[:10]
    assert out.text.startswith(DRAFT + "\n" + BLOCK_START + "\n## Sources\n\n")
    assert out.text.endswith(BLOCK_END + "\n")
    assert out.ids == (1, 2)
    entries = [line for line in out.text.splitlines() if re.match(r"^\[\d+\] ", line)]
    assert entries == [
        f"[1] Boiling point — example.org — <https://example.org/boiling> — retrieved {day}",
        f"[2] Cooking at altitude — altitude\\_report.pdf — `/data/altitude_report.pdf` — "
        f"retrieved {day} — p. 2",
    ]
    # stdout form: the entries only
    assert out.block.splitlines() == entries


def test_entry_parts_for_every_kind(ledger: Ledger) -> None:
    out = render(ledger, "A.[3] B.[4] C.[5] D.[6]\n", style="plain")
    day = ledger.source(3).retrieved_at[:10]
    assert out.block.splitlines() == [
        f"[3] Siedepunkt — example.de — https://example.de/siedepunkt — retrieved {day}",
        f"[4] python3 --version — python3 --version (in /work) — retrieved {day}",
        # the request URL, then the method (and body hash, when a body was sent)
        f"[5] JSON from api.example.org/v1/boil — https://api.example.org/v1/boil (POST) — "
        f"retrieved {day}",
        f"[6] field_notes.txt — /notes/field_notes.txt — retrieved {day}",
    ]


def test_pages_of_the_cited_quotes_with_printed_labels(ledger: Ledger) -> None:
    # the sentence draws on the page-3 quote (printed "iii")
    out = render(ledger, "The U.S. Forest Service recommends 15 psi for canning.[2]\n",
                 style="plain")
    assert out.block.endswith("— p. 3 (printed iii)")
    # nothing in the sentence matches a quote: the pages of every quote handed out
    out = render(ledger, "See the report.[2]\n", style="plain")
    assert out.block.endswith("— pp. 2, 3 (printed iii)")


def test_rendering_twice_changes_nothing_in_every_style(ledger: Ledger) -> None:
    for style in STYLES:
        for renumber in (False, True):
            once = render(ledger, DRAFT, style=style, renumber=renumber)
            twice = render(ledger, once.text, style=style, renumber=renumber)
            assert twice.text == once.text, (style, renumber)
            assert not twice.changed


def test_authors_own_sources_section_is_kept(ledger: Ledger) -> None:
    draft = DRAFT + "\n## Sources\n\n- My own list: https://my.example/x [1]\n"
    out = render(ledger, draft)
    assert out.text.startswith(draft)
    again = render(ledger, out.text.replace("## Sources\n\n- My", "## Sources\n\n- Our"))
    assert "- Our own list" in again.text


def test_a_block_in_the_middle_is_replaced_in_place(ledger: Ledger) -> None:
    rendered = render(ledger, "Water boils at 100 °C.[1]\n").text
    moved = rendered + "\n## Appendix\n\nBeans cook in 35 minutes.[2]\n"
    out = render(ledger, moved)
    assert out.text.endswith("## Appendix\n\nBeans cook in 35 minutes.[2]\n")
    assert out.text.count(BLOCK_START) == 1
    assert "[2] Cooking at altitude" in _block_of(out.text)


def test_footnotes_style_rewrites_markers_and_keeps_authors_footnotes(ledger: Ledger) -> None:
    draft = "Water boils at 100 °C.[1] A note.[^mine]\n\n[^mine]: My own footnote.\n"
    out = render(ledger, draft, style="footnotes")
    assert "Water boils at 100 °C.[^1] A note.[^mine]" in out.text
    assert "[^mine]: My own footnote." in out.text
    assert re.search(r"^\[\^1\]: Boiling point — ", _block_of(out.text), re.MULTILINE)
    # back to markdown: markers return to [n]
    back = render(ledger, out.text, style="markdown")
    assert "Water boils at 100 °C.[1] A note.[^mine]" in back.text


def test_footnote_labels_that_clash_are_refused(ledger: Ledger) -> None:
    with pytest.raises(InvalidArgument, match=r"\[\^1\]"):
        render(ledger, "Water.[1] Mine.[^1]\n\n[^1]: mine\n", style="footnotes")


def test_renumber_is_consistent_in_text_and_block(ledger: Ledger) -> None:
    draft = "Beans cook fast.[2] Water boils at 100 °C.[1] Again.[2] Python 3.11.9.[4]\n"
    out = render(ledger, draft, renumber=True)
    assert out.text.startswith(
        "Beans cook fast.[1] Water boils at 100 °C.[2] Again.[1] Python 3.11.9.[3]\n")
    assert out.numbers == {1: 2, 2: 1, 3: 4}
    block = _block_of(out.text)
    assert "<!-- fetchledger:renumbered 1=2 2=1 3=4 -->" in block
    assert re.search(r"^\[1\] Cooking at altitude", block, re.MULTILINE)
    assert re.search(r"^\[2\] Boiling point", block, re.MULTILINE)
    # rendering without --renumber restores the ledger ids
    back = render(ledger, out.text)
    assert back.text.startswith(draft)
    assert "renumbered" not in back.text


def test_grouped_markers_are_cited_and_split_when_renumbered(ledger: Ledger) -> None:
    out = render(ledger, "Both agree.[1, 2]\n")
    assert out.ids == (1, 2)
    assert out.text.startswith("Both agree.[1, 2]\n")
    renumbered = render(ledger, "First.[4] Both agree.[1-2]\n", renumber=True)
    assert renumbered.text.startswith("First.[1] Both agree.[2][3]\n")


def test_unknown_id_is_refused(ledger: Ledger) -> None:
    with pytest.raises(UnknownSource) as error:
        render(ledger, "Water boils.[1] Nowhere.[42]\n")
    assert error.value.exit_code == 2
    assert "[42] (line 1, column 25)" in error.value.message


def test_markers_outside_prose_are_not_cited(ledger: Ledger) -> None:
    draft = ("Code `x[9]` and\n\n```\n[42]\n```\n\n    [43]\n\n[a link](./x.md) "
             "[9](./y.md)\n\n[77]: ./ref.md\n\nUse [77] here.[1]\n\n[^5]: def [44]\n")
    out = render(ledger, draft)
    assert out.ids == (1,)


def test_no_citation_no_block(ledger: Ledger) -> None:
    out = render(ledger, "Nothing cited here.\n")
    assert out.text == "Nothing cited here.\n" and out.block == "" and out.ids == ()
    # an existing block becomes empty rather than stale
    emptied = render(ledger, render(ledger, "Water.[1]\n").text.replace("Water.[1]", "Water."))
    assert _block_of(emptied.text) == f"{BLOCK_START}\n{BLOCK_END}"


def test_broken_blocks_are_refused(ledger: Ledger) -> None:
    with pytest.raises(InvalidArgument, match="no end marker"):
        render(ledger, f"Water.[1]\n\n{BLOCK_START}\n[1] x\n")
    with pytest.raises(InvalidArgument, match="2 fetchledger Sources blocks"):
        render(ledger, f"{BLOCK_START}\n{BLOCK_END}\n\n{BLOCK_START}\n{BLOCK_END}\n")
    with pytest.raises(InvalidArgument, match="unknown style"):
        render(ledger, "Water.[1]\n", style="apa")


def test_block_urls_come_only_from_the_ledger(ledger: Ledger) -> None:
    draft = ("Water boils at 100 °C [1](https://evil.example/a) https://evil.example/b "
             "<https://evil.example/c>.[1][3]\n\n[1]: https://evil.example/d\n")
    locators = {s.locator for s in ledger.sources()}
    for style in STYLES:
        out = render(ledger, draft, style=style, text_fragments=True)
        block = out.block
        assert "evil.example" not in block
        for url in re.findall(r"https?://[^\s<>\"`}]+", block):
            assert url.split("#", 1)[0] in locators, url


def test_text_fragments_point_at_the_cited_quote(ledger: Ledger) -> None:
    out = render(ledger, "On Everest water boils at about 70 °C.[1] Report.[2]\n",
                 style="plain", text_fragments=True)
    web, pdf = out.block.splitlines()
    assert ("https://example.org/boiling#:~:text=On%20the%20summit%20of%20Mount,"
            "boils%20at%20about%2070%20%C2%B0C." in web)
    assert "#:~:text" not in pdf  # not a web page


def test_evidence_style_lists_quotes_with_the_lines_that_cite_them(ledger: Ledger) -> None:
    draft = "Intro.\n\nOn Everest, water boils at about 70 °C.[1]\n"
    out = render(ledger, draft, style="evidence")
    lines = out.block.splitlines()
    assert lines[0].startswith("[1] Boiling point — example.org")
    assert lines[1] == ('- "On the summit of Mount Everest, at 8,849 metres, water boils at '
                        'about 70 °C." — cited at line 3')
    assert all(line.startswith('- "') for line in lines[1:])
    # a verbatim quotation never handed out is listed as quoted in the draft
    quoted = render(ledger, 'It says "The measurement was published on 3 March 2021."[1]\n',
                    style="evidence")
    assert ('- "The measurement was published on 3 March 2021." — cited at line 1 (quoted '
            'in the draft, verbatim in the source)') in quoted.block


def test_bibtex_style_parses(ledger: Ledger) -> None:
    out = render(ledger, "Water.[1] Report.[2] Run.[4]\n", style="bibtex")
    library = bibtexparser.parse_string(out.block)
    assert not library.failed_blocks
    keys = [entry.key for entry in library.entries]
    assert keys == ["fetchledger-1", "fetchledger-2", "fetchledger-4"]
    web = library.entries[0]
    assert web.fields_dict["url"].value == "https://example.org/boiling"
    assert web.fields_dict["urldate"].value == ledger.source(1).retrieved_at[:10]
    assert out.text == "Water.[1] Report.[2] Run.[4]\n"  # bibliographies never edit the draft


def test_csl_json_style_is_an_array_of_items(ledger: Ledger) -> None:
    out = render(ledger, "Water.[1] Report.[2]\n", style="csl-json")
    items = json.loads(out.block)
    assert [item["id"] for item in items] == ["fetchledger-1", "fetchledger-2"]
    assert items[0]["type"] == "webpage" and items[0]["URL"] == "https://example.org/boiling"
    assert items[1]["type"] == "report" and items[1]["page"] == "2, 3 (printed iii)"


def test_crlf_drafts_stay_crlf(ledger: Ledger) -> None:
    out = render(ledger, "Title\r\n\r\nWater.[1]\r\n")
    assert "\n" not in out.text.replace("\r\n", "")
    assert render(ledger, out.text).text == out.text


# --- properties -----------------------------------------------------------------------------

_PIECES = st.sampled_from([
    "Water boils at 100 °C.", "[1]", "[2]", "[^3]", "[1, 2]", "[1-2]", " ", "\n", "\n\n",
    "`a[4]`", "```\n[5]\n```\n", "[x](https://e.example/y)", "# Heading ", "- item ",
    "> quote ", "| a | b [1] |\n|---|---|\n", '"water boils at 100 °C"', "e.g. ", "U.S. ",
    "3.5 ", "[^n]", "\n[^n]: note\n", "<!-- c -->", "*em*", "\\[1\\]", "    code [6]\n",
    "[ref]", "\n[ref]: ./r.md\n", "Über 90 °C.", "。",
])


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(_PIECES, max_size=25), style=st.sampled_from(STYLES),
       renumber=st.booleans())
def test_render_is_idempotent(seeded: Path, pieces: list[str], style: str,
                              renumber: bool) -> None:
    draft = "".join(pieces)
    with Ledger(seeded) as ledger:
        try:
            once = render(ledger, draft, style=style, renumber=renumber)
        except InvalidArgument as error:  # an unclosed fence at the end, a footnote clash
            assert "ends inside" in error.message or "footnote" in error.message
            return
        assert render(ledger, once.text, style=style, renumber=renumber).text == once.text
        if style in ("markdown", "plain", "evidence") and not renumber and "[^3]" not in draft:
            # outside the block, nothing of the author's text changes
            start = once.text.find(BLOCK_START)
            assert start == -1 or once.text[:start].rstrip("\n") == draft.rstrip("\n")


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.sampled_from(list("ab .,[]()^*_`#>-|!:\n12\"“”<>/\\")),
                    max_size=80))
def test_render_of_any_text_is_idempotent_or_refused(seeded: Path, text: str) -> None:
    with Ledger(seeded) as ledger:
        try:
            once = render(ledger, text)
        except (InvalidArgument, UnknownSource):
            return
        assert render(ledger, once.text).text == once.text


def test_a_footnote_marker_before_a_bracket_keeps_its_form(ledger: Ledger) -> None:
    """`[^1][ref]` rewritten to `[1][ref]` would be a reference link, not a citation
    (found by the idempotence property)."""
    draft = "\n[ref]: ./r.md\n[^1][ref]"
    once = render(ledger, draft)
    assert once.ids == (1,)
    twice = render(ledger, once.text)
    assert twice.ids == (1,) and twice.text == once.text
