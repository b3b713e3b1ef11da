"""PDFs the tests write themselves: page numbers and labels, paragraphs,
passwords, scans, empty, corrupt and hostile files (bounded in time and memory).

Every test runs on each engine setting: ``auto`` (PDFium, pypdf per page where
it reads better: what users get), ``pdfium`` alone and ``pypdf`` alone, so
each promise holds whichever engine read the page.
"""

from __future__ import annotations

import json
import os
import re
import resource
import time
from pathlib import Path

import pytest

from fetchledger import (
    CorruptContent,
    EmptyContent,
    InvalidArgument,
    Ledger,
    Limits,
    NeedsPassword,
    NoTextLayer,
    TooLarge,
)
from fetchledger.adapters.pdf import read_pdf
from pdfgen import (
    ImagePage,
    RawPage,
    encrypt,
    fanout_pdf,
    flate_bomb_pdf,
    make_pdf,
    mojibake_pdf,
    wordy_pdf,
)
from procs import children_of

from conftest import rows, table_counts

SNIPPET = re.compile(r'^\[(\d+)\] "(.*)"( \(p\. [^)]+\))?$')

FRONT = ["Preface", "This book was written for careful readers who check their sources."]
BODY_1 = ["Chapter One", "At sea level, water boils at 100 degrees Celsius under standard",
          "pressure, which is why cooks at altitude wait longer for their pasta."]
BODY_2 = ["Chapter Two", "The Dead Sea shore lies far below sea level, so water there boils a",
          "little above 100 degrees and simmering takes a little less time."]


pytestmark = pytest.mark.usefixtures("engine")


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def labelled_book() -> bytes:
    """Two front-matter pages numbered i, ii, then body pages numbered from 1."""
    return make_pdf(
        [FRONT, ["Contents", "Chapter One is about boiling water at sea level."], BODY_1, BODY_2],
        title="Boiling Points", author="A. Cook",
        page_labels=[(0, "/r", None, 1), (2, "/D", None, 1)])


# --- page numbers and labels ----------------------------------------------------


def test_each_snippet_carries_its_physical_page_and_printed_label(
    tmp_path: Path, ledger: Ledger
) -> None:
    path = write(tmp_path, "book.pdf", labelled_book())
    got = ledger.read(path, query="Dead Sea boils")
    top = got.snippets[0]
    assert "Dead Sea" in top.quote
    assert (top.page, top.page_label) == (4, "2")
    assert top.text_line().endswith("(p. 4, printed 2)")
    text = ledger.text(got.source.id)
    for snippet in got.snippets:
        assert text[snippet.start : snippet.end] == snippet.quote
    front = ledger.read(path, query="careful readers").snippets[0]
    assert (front.page, front.page_label) == (1, "i")
    assert front.text_line().endswith("(p. 1, printed i)")


def test_page_label_equal_to_the_number_is_not_repeated(tmp_path: Path, ledger: Ledger) -> None:
    path = write(tmp_path, "plain.pdf", make_pdf(
        [BODY_1, BODY_2], page_labels=[(0, "/D", None, 1)]))
    got = ledger.read(path, query="Dead Sea")
    assert got.snippets[0].page == 2
    assert got.snippets[0].page_label is None
    assert got.snippets[0].text_line().endswith('" (p. 2)')


def test_passages_never_cross_pages_and_rows_hold_pages(
    tmp_path: Path, ledger: Ledger, ledger_path: Path
) -> None:
    # page 1 ends mid-sentence; page 2 goes on: they must stay apart
    path = write(tmp_path, "split.pdf", make_pdf(
        [["The experiment ran for three weeks and the results were"],
         ["consistent across every trial that the team recorded."]]))
    got = ledger.read(path)
    text = ledger.text(got.source.id)
    assert text.split("\n") == ["The experiment ran for three weeks and the results were",
                                "consistent across every trial that the team recorded."]
    pages = rows(ledger_path, "SELECT page, start, end FROM passage ORDER BY start")
    assert [p[0] for p in pages] == [1, 2]
    for page, start, end in pages:
        assert "\n" not in text[start:end]  # type: ignore[index]
        assert page is not None


def test_read_pages_restricts_quotes_and_keeps_one_source(
    tmp_path: Path, ledger: Ledger
) -> None:
    path = write(tmp_path, "book.pdf", labelled_book())
    first = ledger.read(path, pages="3-4", k=5)
    assert first.snippets and all(s.page in (3, 4) for s in first.snippets)
    second = ledger.read(path, pages="1", query="boiling water")
    assert all(s.page == 1 for s in second.snippets)
    assert second.source.id == first.source.id and second.source.versions == 1
    with pytest.raises(InvalidArgument, match="past the end"):
        ledger.read(path, pages="9-10")


@pytest.mark.parametrize("pages", ["3-9", "-9", "1-5", "4-5", "5", "5-", "9-10"])
def test_a_page_range_past_the_last_page_is_exit_2_naming_the_page_count(
    tmp_path: Path, ledger: Ledger, ledger_path: Path, run_cli: object, pages: str
) -> None:
    """A bound past the last page, first or last (``3-9``, ``-9``), is bad input as a
    single page past the end always was: exit 2 naming the page count, nothing recorded
    (it was silently clipped to the last page)."""
    path = write(tmp_path, "book.pdf", labelled_book())  # 4 pages
    before = table_counts(ledger_path)
    with pytest.raises(InvalidArgument, match="past the end: the document has 4 pages"):
        ledger.read(path, pages=pages)
    result = run_cli("--ledger", str(ledger_path), "read", str(path),  # type: ignore[operator]
                     "--pages", pages)
    assert result.exit_code == 2, result.stderr
    assert "has 4 pages" in result.stderr and "Traceback" not in result.stderr
    assert table_counts(ledger_path) == before  # no source, no attempt
    assert ledger.read(path, pages="3-4").snippets  # the last page itself is fine


def test_metadata_title_author_pages_and_raw_hash(tmp_path: Path, ledger: Ledger) -> None:
    data = labelled_book()
    path = write(tmp_path, "book.pdf", data)
    got = ledger.read(path)
    details = ledger.details(got.source.id)
    assert got.source.title == "Boiling Points"
    assert details.source.author == "A. Cook"
    version = details.versions[0]
    assert version["meta"]["pages"] == 4
    assert version["meta"]["content_type"] == "application/pdf"
    import hashlib

    assert version["raw_sha256"] == hashlib.sha256(data).hexdigest()
    assert got.source.locator == str(path.resolve())
    assert ledger.raw(got.source.id) == data


def test_title_falls_back_to_first_heading_when_info_title_is_a_file_name(
    tmp_path: Path, ledger: Ledger
) -> None:
    path = write(tmp_path, "x.pdf", make_pdf(
        [["A Study of Boiling", "Water boils at lower temperatures on high mountains, as every "
          "climber knows."]], title="Microsoft Word - draft7.docx"))
    assert ledger.read(path).source.title == "A Study of Boiling"


def test_changed_pdf_is_a_new_version_of_the_same_source(tmp_path: Path, ledger: Ledger) -> None:
    path = write(tmp_path, "doc.pdf", make_pdf([BODY_1]))
    first = ledger.read(path)
    path.write_bytes(make_pdf([BODY_2]))
    second = ledger.read(path)
    assert second.source.id == first.source.id
    assert second.source.versions == 2 and second.new_version


# --- paragraphs ------------------------------------------------------------------


def test_wrapped_lines_become_paragraphs_and_hyphenation_is_undone(
    tmp_path: Path, ledger: Ledger
) -> None:
    lines = [
        "Results",
        "The measurements were repeated on each of the six sample days and the infor-",
        "mation gathered on those days agreed closely with the well-known values that",
        "earlier teams had published.",
        "A second paragraph starts here.",
        "• a list item stays on its own line",
    ]
    path = write(tmp_path, "p.pdf", make_pdf([lines]))
    text = ledger.text(ledger.read(path).source.id)
    assert text.split("\n") == [
        "Results",
        "The measurements were repeated on each of the six sample days and the information "
        "gathered on those days agreed closely with the well-known values that earlier teams "
        "had published.",
        "A second paragraph starts here.",
        "• a list item stays on its own line",
    ]


def test_quotes_are_whole_sentences_that_were_wrapped(tmp_path: Path, ledger: Ledger) -> None:
    path = write(tmp_path, "b.pdf", make_pdf([BODY_1]))
    got = ledger.read(path, query="pasta altitude")
    assert got.snippets[0].quote == (
        "At sea level, water boils at 100 degrees Celsius under standard pressure, which is "
        "why cooks at altitude wait longer for their pasta.")
    assert SNIPPET.match(got.snippets[0].text_line())


# --- encrypted -------------------------------------------------------------------------


def test_encrypted_without_password_is_needs_password_and_no_source(
    tmp_path: Path, ledger: Ledger, ledger_path: Path
) -> None:
    path = write(tmp_path, "secret.pdf", encrypt(make_pdf([BODY_1]), "s3cret"))
    with pytest.raises(NeedsPassword, match="encrypted"):
        ledger.read(path)
    with pytest.raises(NeedsPassword, match="does not open"):
        ledger.read(path, password="wrong")
    assert table_counts(ledger_path)["source"] == 0
    assert [a.status for a in ledger.attempts(failed=True)] == ["needs_password"] * 2
    got = ledger.read(path, password="s3cret", query="pasta")
    assert "pasta" in got.snippets[0].quote
    assert ledger.details(got.source.id).versions[0]["meta"]["encrypted"] is True


@pytest.mark.parametrize("algorithm", ["RC4-128", "AES-128", "AES-256"])
def test_encryption_algorithms_open_with_the_password(
    tmp_path: Path, ledger: Ledger, algorithm: str
) -> None:
    path = write(tmp_path, "e.pdf", encrypt(make_pdf([BODY_2]), "pw", algorithm=algorithm))
    assert "Dead Sea" in ledger.text(ledger.read(path, password="pw").source.id)


def test_cli_password_errors_exit_3_with_one_line(tmp_path: Path, run_cli, ledger_path) -> None:
    path = write(tmp_path, "secret.pdf", encrypt(make_pdf([BODY_1]), "s3cret"))
    missing = run_cli("read", str(path))
    assert missing.exit_code == 3
    assert missing.stderr.splitlines()[0].startswith(
        f"fetchledger: error: {path}: needs_password: ")
    assert "--password" in missing.stderr
    wrong = run_cli("read", str(path), "--password", "nope")
    assert wrong.exit_code == 3 and "does not open" in wrong.stderr
    assert "Traceback" not in missing.stderr + wrong.stderr
    assert rows(ledger_path, "SELECT count(*) FROM source") == [(0,)]
    assert rows(ledger_path, "SELECT status FROM attempt") == [("needs_password",)] * 2
    ok = run_cli("read", str(path), "--password", "s3cret", "--json")
    assert ok.exit_code == 0
    assert json.loads(ok.stdout)[0]["source"]["id"] == 1


# --- scans, empty, corrupt ----------------------------------------------------------------


def test_image_only_pdf_is_no_text_layer(tmp_path: Path, ledger: Ledger, ledger_path) -> None:
    path = write(tmp_path, "scan.pdf", make_pdf([ImagePage(), ImagePage()]))
    with pytest.raises(NoTextLayer, match="none of the 2 pages has a text layer"):
        ledger.read(path)
    assert table_counts(ledger_path)["source"] == 0
    assert ledger.attempts(failed=True)[0].status == "no_text_layer"


def test_some_image_only_pages_are_named_in_a_warning(tmp_path: Path, ledger: Ledger) -> None:
    path = write(tmp_path, "mixed.pdf", make_pdf([BODY_1, ImagePage(), ImagePage(), BODY_2]))
    got = ledger.read(path, query="Dead Sea")
    assert got.snippets[0].page == 4
    assert any("Pages 2-3 have no text layer" in w for w in got.warnings)


def test_blank_pages_are_empty_content(tmp_path: Path, ledger: Ledger) -> None:
    path = write(tmp_path, "blank.pdf", make_pdf([RawPage(b""), RawPage(b"BT ( ) Tj ET")]))
    with pytest.raises(EmptyContent, match="hold no text"):
        ledger.read(path)


def test_empty_file_is_empty_content(tmp_path: Path, ledger: Ledger) -> None:
    with pytest.raises(EmptyContent):
        ledger.read(write(tmp_path, "empty.pdf", b""))


@pytest.mark.parametrize("data", [
    b"%PDF-1.4\n" + bytes(range(256)) * 20,
    make_pdf([BODY_1])[:300],
    b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\ntrailer << /Root 1 0 R >>\n",
], ids=["garbage", "truncated", "no-pages-object"])
def test_corrupt_pdf_is_a_corrupt_attempt(
    tmp_path: Path, ledger: Ledger, ledger_path: Path, data: bytes
) -> None:
    path = write(tmp_path, "bad.pdf", data)
    with pytest.raises((CorruptContent, EmptyContent)) as caught:
        ledger.read(path)
    assert caught.value.status in ("corrupt", "empty_content")
    assert table_counts(ledger_path)["source"] == 0


def test_broken_xref_is_recovered(tmp_path: Path, ledger: Ledger) -> None:
    data = make_pdf([BODY_1]).replace(b"0000000", b"0000099")  # every xref offset wrong
    got = ledger.read(write(tmp_path, "xref.pdf", data), query="pasta")
    assert "pasta" in got.snippets[0].quote


def test_one_unreadable_page_leaves_the_others(
    tmp_path: Path, ledger: Ledger, engine: str
) -> None:
    if engine == "pdfium":
        pytest.skip("PDFium alone reads an undecodable page as an empty one, without an error")
    broken = RawPage(b"BT (x) Tj ET", filters=" /Filter /NoSuchDecode")
    path = write(tmp_path, "partial.pdf", make_pdf([BODY_1, broken, BODY_2]))
    got = ledger.read(path, query="Dead Sea")
    assert got.snippets[0].page == 3
    assert any(w.startswith("Page 2 could not be read") for w in got.warnings)


def test_garbled_text_is_flagged_in_warnings_json_and_stderr(
    tmp_path: Path, run_cli
) -> None:
    # a font whose /ToUnicode maps every glyph to a private-use code point
    path = write(tmp_path, "mojibake.pdf", mojibake_pdf(
        [BODY_1], "these glyphs map to nothing readable at all"))
    result = run_cli("read", str(path))
    assert result.exit_code == 0
    assert "fetchledger: warning: [1] the text of page 2 looks garbled" in result.stderr
    as_json = run_cli("read", str(path), "--json")
    warnings = json.loads(as_json.stdout)[0]["warnings"]
    assert any("looks garbled" in w and "private-use" in w for w in warnings)


def test_clean_text_has_no_warnings(tmp_path: Path, ledger: Ledger) -> None:
    assert ledger.read(write(tmp_path, "ok.pdf", labelled_book())).warnings == ()


# --- hostile files: bounded in time and memory ------------------------------------------------


def test_fan_out_bomb_stops_at_the_time_limit(
    tmp_path: Path, ledger_path: Path, engine: str
) -> None:
    path = write(tmp_path, "fanout.pdf", fanout_pdf(8, leaf_ops=200))  # ~20 s of work unbounded
    assert path.stat().st_size < 4000
    with Ledger(ledger_path, limits=Limits(pdf_timeout=1.0, pdf_engine=engine)) as ledger:
        started = time.monotonic()
        with pytest.raises(CorruptContent, match="time limit of 1 s"):
            ledger.read(path)
        assert time.monotonic() - started < 4.0
        assert ledger.attempts(failed=True)[0].status == "corrupt"
    assert children_of(os.getpid()) == []  # the child was killed and reaped


def test_decompression_bomb_stops_at_the_memory_limit(
    tmp_path: Path, ledger_path: Path, engine: str
) -> None:
    path = write(tmp_path, "bomb.pdf", flate_bomb_pdf(70 << 20))  # 70 MB from ~70 kB
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    limits = Limits(pdf_memory=32 << 20, pdf_timeout=20.0, pdf_engine=engine)
    # PDFium aborts when an allocation fails; alone it cannot tell that abort from
    # another crash (corrupt); "auto" then reads the file with pypdf, which stops at its cap
    expected = (CorruptContent, "killed by SIGABRT") if engine == "pdfium" else (TooLarge, "memory")
    with Ledger(ledger_path, limits=limits) as ledger:
        started = time.monotonic()
        with pytest.raises(expected[0], match=expected[1]):
            ledger.read(path)
        assert time.monotonic() - started < 10.0
        assert ledger.attempts(failed=True)[0].status == expected[0].status
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 30 * 1024  # this process never held the inflated stream
    assert children_of(os.getpid()) == []


def test_text_over_the_cap_is_too_large(tmp_path: Path, ledger_path: Path, engine: str) -> None:
    path = write(tmp_path, "wordy.pdf", wordy_pdf(40))  # ~125 kB of text
    limits = Limits(max_decoded_bytes=50_000, pdf_engine=engine)
    with Ledger(ledger_path, limits=limits) as ledger, \
            pytest.raises(TooLarge, match="text is too large"):
        ledger.read(path)


def test_self_referencing_form_does_not_loop(tmp_path: Path, ledger: Ledger) -> None:
    from pdfgen import first_extra_object, stream

    form = first_extra_object(1)
    data = make_pdf(
        [RawPage(b"BT /F1 11 Tf 72 700 Td (Before the loop comes a sentence.) Tj ET /X1 Do",
                 f"/XObject << /X1 {form} 0 R >>")],
        extra_objects=[stream(
            b"BT /F1 11 Tf 72 600 Td (Inside the loop.) Tj ET /X1 Do",
            f" /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /XObject << "
            f"/X1 {form} 0 R >> /Font << /F1 3 0 R >> >>")])
    got = ledger.read(write(tmp_path, "loop.pdf", data))
    assert "Before the loop comes a sentence." in ledger.text(got.source.id)


def test_too_many_pages_is_too_large(tmp_path: Path, ledger_path: Path, engine: str) -> None:
    path = write(tmp_path, "long.pdf", make_pdf([BODY_1] * 5))
    with Ledger(ledger_path, limits=Limits(max_pdf_pages=4, pdf_engine=engine)) as ledger, \
            pytest.raises(TooLarge, match="5 pages, over the cap of 4"):
        ledger.read(path)


def test_cli_hostile_file_exit_3_without_traceback(tmp_path: Path, run_cli, ledger_path) -> None:
    path = write(tmp_path, "bad.pdf", b"%PDF-1.4\n" + os.urandom(2000))
    result = run_cli("read", str(path))
    assert result.exit_code == 3
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith(f"fetchledger: error: {path}: corrupt: ")
    assert rows(ledger_path, "SELECT status FROM attempt") == [("corrupt",)]


# --- the reader itself ----------------------------------------------------------------------


def test_read_pdf_for_web_callers_and_in_a_fresh_interpreter(monkeypatch, engine: str) -> None:
    """The signature the web adapter calls, and the spawn path taken when threads run."""
    from fetchledger.adapters import sandbox

    monkeypatch.setattr(sandbox, "fork_is_safe", lambda: False)
    doc = read_pdf(labelled_book(), locator="https://example.org/book.pdf",
                   meta={"status": 200}, limits=Limits(pdf_engine=engine), name="book.pdf",
                   kind="web")
    assert doc.kind == "web" and doc.meta["status"] == 200 and doc.meta["pages"] == 4
    assert [(p.number, p.label) for p in doc.pages] == [(1, "i"), (2, "ii"), (3, "1"), (4, "2")]
    assert doc.text[doc.pages[0].start : doc.pages[0].end] == "\n".join(FRONT)
    assert doc.text[doc.pages[3].start : doc.pages[3].end].startswith("Chapter Two\nThe Dead Sea")
