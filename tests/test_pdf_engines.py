"""The two PDF engines and the rule that picks one per page: what each engine
gets right or wrong on files written here, and what the version records."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from fetchledger import CorruptContent, Ledger, Limits
from fetchledger.adapters import pdfengines
from fetchledger.adapters.pdfengines import PdfiumEngine, PypdfEngine
from pdfgen import make_pdf, mapped_font_pdf, paper_pdf, without_startxref
from procs import children_of

HERON = ["The survey counted every heron on the lake this spring, and the",
         "count was higher than in any year since the survey began."]
HERON_TEXT = ("The survey counted every heron on the lake this spring, and the count was "
              "higher than in any year since the survey began.")
HYPHENATED = [
    "The measurements were repeated on each of the six sample days and the infor-",
    "mation gathered on those days agreed closely with the well-known values that",
    "earlier teams had published in a widely read and well-",
    "known journal.",
]
WORD = "حَبيبي"  # "darling": one glyph of the font below stands for the whole word


def read(tmp_path: Path, ledger_path: Path, data: bytes, engine: str) -> tuple[str, dict]:
    path = tmp_path / f"{engine}.pdf"
    path.write_bytes(data)
    with Ledger(ledger_path, limits=Limits(pdf_engine=engine)) as ledger:
        got = ledger.read(path)
        version = ledger.details(got.source.id).versions[-1]
        return ledger.text(got.source.id), version


def test_a_clean_file_is_read_by_pdfium_and_the_version_says_so(
    tmp_path: Path, ledger_path: Path
) -> None:
    text, version = read(tmp_path, ledger_path, make_pdf([HERON, HERON]), "auto")
    assert text == f"{HERON_TEXT}\n{HERON_TEXT}"
    assert version["extractor"] == "pdfium"
    assert version["extractor_version"].startswith("pypdfium2 ")
    assert "PDFium" in version["extractor_version"]
    assert version["meta"]["engines"] == {"pdfium": "1-2"}
    text, version = read(tmp_path, ledger_path, make_pdf([HERON]), "pypdf")
    assert text == HERON_TEXT
    assert (version["extractor"], version["meta"]["engines"]) == ("pypdf", {"pypdf": "1"})
    assert version["extractor_version"].startswith("pypdf ")


def test_a_file_pypdf_refuses_is_read_through_pdfium(tmp_path: Path, ledger_path: Path) -> None:
    data = without_startxref(make_pdf([HERON]))
    with pytest.raises(CorruptContent, match="startxref"):
        read(tmp_path, ledger_path, data, "pypdf")
    text, version = read(tmp_path, ledger_path, data, "auto")
    assert text == HERON_TEXT and version["extractor"] == "pdfium"


def test_neither_engine_reading_a_file_names_both_reasons(
    tmp_path: Path, ledger_path: Path
) -> None:
    with pytest.raises(CorruptContent, match=r"pdfium: .*; pypdf: .*"):
        read(tmp_path, ledger_path, b"%PDF-1.4\n" + bytes(range(256)) * 20, "auto")


def test_a_right_to_left_page_is_read_by_pypdf_in_logical_order(
    tmp_path: Path, ledger_path: Path
) -> None:
    """PDFium reverses a glyph that stands for several right-to-left letters
    (a shaped Arabic word, as weasyprint writes them); pypdf keeps them in order."""
    content = (b"BT /F9 14 Tf 72 700 Td (A A) Tj ET "
               b"BT /F1 12 Tf 72 650 Td (Habibi means darling.) Tj ET")
    data = mapped_font_pdf([HERON], {0x41: WORD, 0x20: " "}, content)
    alone = PdfiumEngine(data, None).page(1).text
    assert WORD[::-1] in alone and WORD not in alone  # the quirk the rule works around
    text, version = read(tmp_path, ledger_path, data, "auto")
    assert text.split("\n")[1:] == [f"{WORD} {WORD}", "Habibi means darling."]
    assert version["extractor"] == "pdfium+pypdf"
    assert version["meta"]["engines"] == {"pdfium": "1", "pypdf": "2"}


def test_ligature_glyphs_become_letters_on_both_engines(tmp_path: Path, ledger_path: Path) -> None:
    # a font whose "fi" and "ff" glyphs map to the ligature code points U+FB01, U+FB00
    mapping = {code: chr(code) for code in range(0x20, 0x7F)} | {0x01: "\ufb01", 0x02: "\ufb00"}
    content = b"BT /F9 12 Tf 72 700 Td (The mis\x01ts see things di\x02erently.) Tj ET"
    data = mapped_font_pdf([], mapping, content)
    for engine in ("pdfium", "pypdf"):
        text, _ = read(tmp_path, ledger_path, data, engine)
        assert text == "The misfits see things differently."


def test_pdfium_soft_hyphens_and_line_ends_are_normalized() -> None:
    """PDFium ends lines with \\r\\n and replaces a line-end hyphen *and* its line
    break with U+FFFE: the engine gives back the hyphen and the break."""
    raw = PdfiumEngine(make_pdf([HYPHENATED]), None).page(0).text
    assert "\r" not in raw and "\ufffe" not in raw and "\x02" not in raw
    assert raw.split("\n") == HYPHENATED


@pytest.mark.parametrize("rotate", [90, 180, 270])
def test_rotated_pages_read_in_order_on_both_engines(
    tmp_path: Path, ledger_path: Path, rotate: int
) -> None:
    data = make_pdf([HYPHENATED, HERON], rotate=rotate)
    expected = ("The measurements were repeated on each of the six sample days and the "
                "information gathered on those days agreed closely with the well-known values "
                "that earlier teams had published in a widely read and well-known journal.")
    for engine in ("pdfium", "pypdf"):
        text, _ = read(tmp_path, ledger_path, data, engine)
        assert text.split("\n") == [expected, HERON_TEXT], engine


def test_a_pdfium_crash_is_corrupt_alone_and_read_again_by_pypdf_in_auto(
    tmp_path: Path, ledger_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child is the boundary: PDFium dying inside it never takes this process along."""
    def abort(self: PdfiumEngine, index: int) -> pdfengines.PageText:
        os.abort()

    monkeypatch.setattr(PdfiumEngine, "page", abort)  # the forked child inherits it
    data = make_pdf([HERON])
    with pytest.raises(CorruptContent, match="killed by SIGABRT"):
        read(tmp_path, ledger_path, data, "pdfium")
    started = time.monotonic()
    text, version = read(tmp_path, ledger_path, data, "auto")
    assert text == HERON_TEXT and version["extractor"] == "pypdf"
    assert time.monotonic() - started < 10
    assert children_of(os.getpid()) == []


def test_both_engines_agree_on_passwords(tmp_path: Path) -> None:
    from pdfgen import encrypt

    data = encrypt(make_pdf([HERON]), "s3cret", algorithm="AES-128")
    for engine in (PdfiumEngine, PypdfEngine):
        for password, message in ((None, "needs a password"), ("nope", "does not open")):
            with pytest.raises(pdfengines.OpenFailed, match=message) as failed:
                engine(data, password)
            assert failed.value.status == "needs_password"
        for password in ("s3cret", "s3cret-owner"):  # the user or the owner password
            opened = engine(data, password)
            assert opened.encrypted and HERON[0] in opened.page(0).text


@pytest.mark.parametrize("interleaved", [False, True], ids=["column-by-column", "row-by-row"])
def test_two_column_papers_read_in_column_order(
    tmp_path: Path, ledger_path: Path, interleaved: bool
) -> None:
    """Every sentence of the paper is whole on one line of the stored text, in reading
    order: a sentence of the right column never lands inside the left one's."""
    data, sentences = paper_pdf(2, interleaved=interleaved)
    text, version = read(tmp_path, ledger_path, data, "auto")
    assert version["extractor"] == "pdfium"
    lines = text.split("\n")
    missing = [s for s in sentences if not any(s in line for line in lines)]
    assert missing == []
    positions = [text.index(s) for s in sentences]
    assert positions == sorted(positions)


def test_a_glyph_mapped_to_nothing_is_dropped_not_taken_for_a_hyphen(
    tmp_path: Path, ledger_path: Path
) -> None:
    """PDFium falls back to the raw code of a glyph whose /ToUnicode entry is empty;
    a code of 2 is not PDFium's soft-hyphen mark and must not split the line."""
    mapping = {code: chr(code) for code in range(0x20, 0x7F)} | {0x02: ""}
    content = (b"BT /F9 12 Tf 72 700 Td (The gauge read high water again\x02 and the river "
               b"rose over the bank.) Tj ET")
    data = mapped_font_pdf([], mapping, content)
    for engine in ("pdfium", "pypdf"):
        text, _ = read(tmp_path, ledger_path, data, engine)
        assert text == "The gauge read high water again and the river rose over the bank."
