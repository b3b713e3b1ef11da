"""Real PDFs from ../shared/corpus/pdf (skipped when the corpus is absent)."""

from __future__ import annotations

import json
import re
import time
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from fetchledger import Ledger, NeedsPassword, NoTextLayer, RetrievalFailed
from pdfgen import RawPage, make_pdf

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "pdf"
if not CORPUS.is_dir():
    CORPUS = Path("/work/shared/corpus/pdf")
pytestmark = [pytest.mark.skipif(not (CORPUS / "manifest.json").is_file(),
                                 reason="the shared PDF corpus is absent"),
              pytest.mark.usefixtures("engine")]


def manifest() -> list[dict[str, Any]]:
    if not (CORPUS / "manifest.json").is_file():
        return []
    return list(json.loads((CORPUS / "manifest.json").read_text()))


# Files whose user password is not empty (r6-user-password.pdf opens with "" in pypdf).
NEED_PASSWORD = {"crazyones-encrypted-256.pdf", "libreoffice-writer-password.pdf",
                 "encrypted-file.pdf", "r2-user-password.pdf", "r3-user-password.pdf",
                 "r4-aes-user-password.pdf"}


def sentences(text: str) -> list[str]:
    flowing = unicodedata.normalize("NFKC", " ".join(text.split()))
    return [s for s in re.split(r"(?<=[.!?])\s+", flowing) if s]


def test_crazyones_sentences_are_quotable_verbatim(ledger: Ledger) -> None:
    got = ledger.read(CORPUS / "pypdf" / "crazyones.pdf", query="round pegs square holes")
    text = ledger.text(got.source.id)
    lines = text.split("\n")
    expected = sentences((CORPUS / "pypdf" / "crazyones.txt").read_text())
    missing = [s for s in expected if not any(s in line for line in lines)]
    assert missing == ["The Crazy Ones October 14, 1998 Heres to the crazy ones."]  # title lines
    assert got.source.title == "The Crazy Ones"
    assert got.snippets[0].quote == "The round pegs in the square holes."
    assert got.snippets[0].page == 1


def test_four_pages_each_quote_names_its_page(ledger: Ledger) -> None:
    path = CORPUS / "sample-files" / "004" / "pdflatex-4-pages.pdf"
    for page in range(1, 5):
        got = ledger.read(path, pages=str(page), query="information")
        assert got.snippets and {s.page for s in got.snippets} == {page}
        text = ledger.text(got.source.id)
        for snippet in got.snippets:
            assert text[snippet.start : snippet.end] == snippet.quote
            assert snippet.text_line().endswith(f"(p. {page})")
    assert ledger.details(1).versions[0]["meta"]["pages"] == 4
    assert len(ledger.sources()) == 1


@pytest.mark.parametrize("entry", [e for e in manifest() if e.get("category") == "encrypted"],
                         ids=lambda e: e["file"])
def test_encrypted_files_open_with_the_manifest_password(
    ledger: Ledger, entry: dict[str, Any]
) -> None:
    path = CORPUS / entry["file"]
    password = entry["password"]
    if password.startswith("owner="):  # an owner password, the user password is empty
        assert ledger.read(path).source.id == 1
        return
    if path.name in NEED_PASSWORD:
        with pytest.raises(NeedsPassword, match="needs a password"):
            ledger.read(path)
        with pytest.raises(NeedsPassword, match="does not open"):
            ledger.read(path, password=password + "-wrong")
    got = ledger.read(path, password=password)
    reference = {"crazyones-encrypted-256.pdf": "The Crazy Ones",
                 "r2-empty-password.pdf": "pdf encryption test"}
    head = reference.get(path.name)
    if head:
        assert ledger.text(got.source.id).startswith(head)


def test_image_only_files_are_no_text_layer_or_named_pages(ledger: Ledger) -> None:
    with pytest.raises(NoTextLayer):
        ledger.read(CORPUS / "pypdf" / "imagemagick-CCITTFaxDecode.pdf")
    mixed = ledger.read(CORPUS / "sample-files" / "007" / "imagemagick-images.pdf")
    assert any("Pages 4-5 have no text layer" in w for w in mixed.warnings)


def test_lzw_table_overflow_stream_is_bounded(ledger: Ledger, tmp_path: Path) -> None:
    data = (CORPUS / "pypdf" / "lzw_decoder_table_overflow.bin").read_bytes()
    pdf = make_pdf([["A page before the hostile one says something."],
                    RawPage(data, filters=" /Filter /LZWDecode")])
    path = tmp_path / "lzw.pdf"
    path.write_bytes(pdf)
    started = time.monotonic()
    try:
        got = ledger.read(path)
    except RetrievalFailed as failed:
        assert failed.status in ("corrupt", "too_large")
    else:
        assert "A page before the hostile one says something." in ledger.text(got.source.id)
    assert time.monotonic() - started < 10


def test_every_corpus_pdf_registers_or_fails_cleanly(ledger: Ledger) -> None:
    """No traceback from any real file; every quote handed out is verbatim, one line."""
    registered = failed = 0
    for path in sorted(CORPUS.rglob("*.pdf")):
        try:
            got = ledger.read(path, k=5)
        except RetrievalFailed as error:
            assert error.status in ("needs_password", "no_text_layer", "corrupt")
            failed += 1
            continue
        registered += 1
        text = ledger.text(got.source.id)
        for snippet in got.snippets:
            assert text[snippet.start : snippet.end] == snippet.quote
            assert "\n" not in snippet.quote
            assert snippet.page is not None
    assert registered >= 20 and failed >= 5
