"""Reading a source in order (issue 18): ``Ledger.read_source`` and ``show N --passages``.

Every line of a window is a snippet line (DESIGN §5) whose quote is verbatim in the
stored text; the windows of a source, followed by their ``next``, give every passage
once, in order; headings are landmarks marked ``§ `` in the display line only.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fetchledger import Document, Ledger, Page, Reading, json_schema
from fetchledger.store import windows
from fetchledger.text.passages import heading_flags, split_passages

from cite_sources import REPORT_LINES, seed
from conftest import LedgerLocation, table_counts

pytestmark = pytest.mark.both_backends

SNIPPET_LINE = re.compile(r'^\[(\d+)\] "(.*)"( \(p\. [^)]+\))?$')


def read_all(ledger: Ledger, source_id: int, limit: int, *, outline: bool = False
             ) -> list[Reading]:
    """Every window of a source, each from the ``next`` of the one before."""
    readings = [ledger.read_source(source_id, limit=limit, outline=outline)]
    while readings[-1].next is not None:
        assert len(readings) < 10_000
        readings.append(ledger.read_source(source_id, readings[-1].next, limit=limit,
                                           outline=outline))
    return readings


_WORDS = st.sampled_from(["water", "Boils", "at", "100", "°C", "Straße", "naïve", "日本語",
                          "e.g.", "Dr.", "U.S.", "the", "émigré", "—", "x" * 30, "🙂"])
_SENTENCE = st.lists(_WORDS, min_size=1, max_size=40).map(" ".join).map(
    lambda words: words[0].upper() + words[1:] + ".")
_HEADING = st.lists(st.sampled_from(["Methods", "Results", "2.1 Altitude", "Why?"]),
                    min_size=1, max_size=3).map(" ".join)
_LINE = st.one_of(st.lists(_SENTENCE, min_size=1, max_size=4).map(" ".join), _HEADING,
                  _SENTENCE.map(lambda s: "- " + s),
                  st.lists(_SENTENCE, min_size=30, max_size=40).map(" ".join))


@given(lines=st.lists(_LINE, min_size=1, max_size=25), limit=st.integers(1, 900),
       paged=st.booleans())
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_windows_give_every_passage_once_in_order_each_line_verbatim(
        ledger: Ledger, monkeypatch: pytest.MonkeyPatch, lines: list[str], limit: int,
        paged: bool) -> None:
    monkeypatch.setattr(windows, "CHUNK", 97)  # words and passages across chunk edges
    text = "\n".join(lines)
    pages: tuple[Page, ...] = ()
    if paged:  # one page per line
        starts = [0]
        for line in lines[:-1]:
            starts.append(starts[-1] + len(line) + 1)
        pages = tuple(Page(a, a + len(line), n + 1, None if n % 2 else f"p{n}")
                      for n, (a, line) in enumerate(zip(starts, lines, strict=True)))
    source_id = ledger.register(Document(
        kind="file", locator=f"/reading/{hash((text, paged))}.txt", display="doc.txt",
        text=text, raw=text.encode(), pages=pages)).source.id
    stored = ledger.text(source_id)
    passages = split_passages(stored, pages)
    readings = read_all(ledger, source_id, limit)
    shown = [line for reading in readings for line in reading.lines]
    assert [line.number for line in shown] == list(range(1, len(passages) + 1))
    assert {r.total for r in readings} == {len(passages)}
    for line, passage, heading in zip(shown, passages, heading_flags(stored, passages),
                                      strict=True):
        assert line.quote == stored[line.start : line.end] and "\n" not in line.quote
        assert line.start == passage.start and line.end <= passage.end
        assert (line.page, line.page_label) == (passage.page, passage.label)
        assert line.heading == heading
        assert line.line.startswith("§ ") == heading
        match = SNIPPET_LINE.match(line.text_line())
        assert match and match.group(1) == str(source_id)
        assert bool(match.group(3)) == paged
    for reading in readings:  # whole passages up to the limit, never fewer than one
        sizes = [len(line.text_line()) + 1 for line in reading.lines]
        assert len(sizes) == 1 or sum(sizes) <= limit
    outline = [line.number for r in read_all(ledger, source_id, limit, outline=True)
               for line in r.lines]
    assert outline == [line.number for line in shown if line.heading]


def test_headings_are_landmarks_marked_in_the_line_only(tmp_path: Path, ledger: Ledger,
                                                       run_cli: object) -> None:
    doc = tmp_path / "guide.md"
    doc.write_text("# Boiling water\n\nWater boils at 100 °C at sea level. It boils "
                   "sooner on a mountain.\n\n## At altitude\n\nOn Everest water boils at "
                   "about 70 °C.\n\n## Why?\n\nThe air pressure is lower up there.\n")
    ledger.read(doc)
    reading = ledger.read_source(1)
    assert [line.line for line in reading.lines] == [
        "§ Boiling water", "Water boils at 100 °C at sea level.",
        "It boils sooner on a mountain.", "§ At altitude",
        "On Everest water boils at about 70 °C.", "§ Why?",
        "The air pressure is lower up there."]
    assert [line.quote for line in reading.lines if line.heading] == [
        "Boiling water", "At altitude", "Why?"]
    assert reading.next is None and reading.text_lines()[-1] == "end of source: 7 passages"
    outline = ledger.read_source(1, outline=True)
    assert outline.text_lines()[1:] == ['1: [1] "§ Boiling water"', '4: [1] "§ At altitude"',
                                        '6: [1] "§ Why?"', "end of source: 7 passages"]
    shown = run_cli("show", "1", "--outline")  # type: ignore[operator]
    assert shown.exit_code == 0 and shown.stdout.splitlines() == outline.text_lines()
    page = ledger.read_source(1, outline=True, limit=40)  # one heading a window
    assert [line.number for line in page.lines] == [1] and page.next == 4


def test_command_output_has_no_headings(ledger: Ledger) -> None:
    ledger.register(Document(kind="command", locator="ls (in /x)", display="ls (in /x)",
                             text="README\nSetup Guide\nMakefile", raw=b"x"))
    assert not any(line.heading for line in ledger.read_source(1).lines)


def test_a_window_ends_with_the_passage_to_go_on_from(ledger: Ledger, run_cli: object,
                                                     ledger_path: LedgerLocation) -> None:
    text = "\n".join(f"Sentence number {n} is one passage of this long text." for n in
                     range(1, 381))
    ledger.register(Document(kind="file", locator="/long.txt", display="/long.txt",
                             text=text, raw=text.encode()))
    before = table_counts(ledger_path)
    first = ledger.read_source(1)
    assert first.start == 1 and first.total == 380 and first.next is not None
    assert sum(len(line) + 1 for line in first.text_lines()[1:-1]) <= 4000
    assert first.text_lines()[-1] == f"next start: {first.next} of 380 passages"
    second = ledger.read_source(1, first.next)
    assert second.lines[0].quote == f"Sentence number {first.next} is one passage of this " \
                                    "long text."
    end = ledger.read_source(1, 379)
    assert [line.number for line in end.lines] == [379, 380] and end.next is None
    ranged = run_cli("show", "1", "--passages", "41-43")  # type: ignore[operator]
    assert ranged.exit_code == 0
    assert ranged.stdout.splitlines()[1:] == [
        '[1] "Sentence number 41 is one passage of this long text."',
        '[1] "Sentence number 42 is one passage of this long text."',
        '[1] "Sentence number 43 is one passage of this long text."',
        "next start: 44 of 380 passages"]
    structured = run_cli("--json", "show", "1", "--passages", "41-42")  # type: ignore[operator]
    data = json.loads(structured.stdout)
    jsonschema.validate(data, json_schema("reading"))
    assert (data["start"], data["next"], data["total"]) == (41, 43, 380)
    assert [(p["number"], p["quote"] == text[p["start"]:p["end"]]) for p in data["passages"]
            ] == [(41, True), (42, True)]
    assert table_counts(ledger_path) == before  # reading records no quote, no attempt


def test_pages_read_those_pages_of_a_paged_source(ledger: Ledger, run_cli: object) -> None:
    seed(ledger)
    reading = ledger.read_source(2, pages="2-3")
    assert [line.quote for line in reading.lines] == REPORT_LINES[1:]
    assert [line.text_line()[-22:] for line in reading.lines][-1].endswith(
        "(p. 3, printed iii)")
    assert reading.pages == (2, 3) and reading.next is None
    one = ledger.read_source(2, pages="2")
    assert [line.quote for line in one.lines] == [REPORT_LINES[1]] and one.next == 3
    for read in (reading, one, ledger.read_source(2, outline=True)):
        jsonschema.validate(read.to_json(), json_schema("reading"))
    shown = run_cli("show", "2", "--pages", "3")  # type: ignore[operator]
    assert shown.stdout.splitlines()[1:] == [
        f'[2] "{REPORT_LINES[2]}" (p. 3, printed iii)',
        f'[2] "{REPORT_LINES[3]}" (p. 3, printed iii)', "end of source: 4 passages"]


def test_an_older_version_is_read_as_it_was(ledger: Ledger) -> None:
    for text in ("The first version says this.", "The second version says that."):
        ledger.register(Document(kind="file", locator="/v.txt", display="/v.txt",
                                 text=text, raw=text.encode()))
    assert ledger.read_source(1).lines[0].quote == "The second version says that."
    old = ledger.read_source(1, version=1)
    assert old.lines[0].quote == "The first version says this." and old.lines[0].version == 1
    assert old.to_json()["version"] == 1


@pytest.mark.parametrize(("args", "message"), [
    (["show", "7", "--passages", "1"], "no source [7]"),
    (["show", "1", "--passages", "0-3"], "bad passage range '0-3'"),
    (["show", "1", "--passages", "5-2"], "bad passage range '5-2'"),
    (["show", "1", "--passages", "x"], "bad passage range 'x'"),
    (["show", "1", "--passages", "99"], "passage 99 is past the end: source [1] has 5"),
    (["show", "1", "--passages", "99999999999999999999"], "bad passage range"),
    (["show", "1", "--pages", "1"], "source [1] has no pages"),
    (["show", "2", "--pages", "4-5"], "page 4 is past the end: source [2] has 3 pages"),
    # a last page past the end was clipped silently: now the same error as a first one
    (["show", "2", "--pages", "2-9"], "page 9 is past the end: source [2] has 3 pages"),
    (["show", "2", "--pages", "-4"], "page 4 is past the end: source [2] has 3 pages"),
    (["show", "2", "--pages", "b"], "bad page range 'b'"),
    (["show", "1", "--limit", "0"], "the limit must be 1 to 100,000 characters"),
    (["show", "1", "--limit", "100001"], "the limit must be 1 to 100,000 characters"),
    (["show", "1", "--text", "--passages", "1"], "--text prints the whole text"),
])
def test_bad_reading_input_is_one_clear_error_and_changes_nothing(
        ledger: Ledger, ledger_path: LedgerLocation, run_cli: object, args: list[str],
        message: str) -> None:
    seed(ledger)
    before = table_counts(ledger_path)
    result = run_cli(*args)  # type: ignore[operator]
    assert result.exit_code == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr.startswith("fetchledger: error: ")
    assert message in result.stderr and "Traceback" not in result.stderr
    as_json = run_cli("--json", *args)  # type: ignore[operator]
    assert as_json.exit_code == 2
    assert table_counts(ledger_path) == before


def test_the_library_bounds_its_numbers(ledger: Ledger) -> None:
    seed(ledger)
    from fetchledger import InvalidArgument

    for call in (lambda: ledger.read_source(1, 0), lambda: ledger.read_source(1, 2**70),
                 lambda: ledger.read_source(1, 3, last=2),
                 lambda: ledger.read_source(1, version=2**70),
                 lambda: ledger.read_source(1, version=2),
                 lambda: ledger.read_source(1, limit=-1)):
        with pytest.raises(InvalidArgument):
            call()
