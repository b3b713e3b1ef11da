"""Stored text of every kind is NFC without invisible characters; Markdown is its text.

A reader cannot see U+200B and friends, nor tell a composed "é" from "e" +
U+0301: a quote typed from what they see must match what is stored.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fetchledger import Ledger
from fetchledger.adapters.markdown import markdown_text
from fetchledger.text.normalize import INVISIBLE, clean_lines, visible_nfc
from fetchledger.text.verbatim import find_verbatim

HIDDEN = ("Caf\u0065\u0301 au lait costs 3\u200b euros,\u200e the\u00ad menu\u2060 "
          "says\u200f\ufeff.")
SEEN = "Café au lait costs 3 euros, the menu says."


@pytest.mark.parametrize("suffix", [".txt", ".md", ".html", ".log"])
def test_files_of_every_kind_store_visible_nfc_text(tmp_path: Path, suffix: str) -> None:
    body = f"<html><body><p>{HIDDEN}</p></body></html>" if suffix == ".html" else HIDDEN
    path = tmp_path / f"note{suffix}"
    path.write_text(body + "\n", encoding="utf-8")
    with Ledger(tmp_path / "ledger.db") as ledger:
        result = ledger.read(str(path))
        text = ledger.text(result.source.id)
        assert SEEN in text
        assert not any(ch in text for ch in INVISIBLE)
        assert unicodedata.is_normalized("NFC", text)
        confirmed = ledger.quote(result.source.id, "Café au lait costs 3 euros").snippets[0]
        assert text[confirmed.start : confirmed.end] == confirmed.quote == \
            "Café au lait costs 3 euros"


def test_command_output_is_visible_nfc_too(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.db") as ledger:
        result = ledger.run(["printf", HIDDEN.replace("%", "%%")])
        assert ledger.text(result.source.id) == SEEN


def test_pdf_page_text_is_visible_nfc_too() -> None:
    from fetchledger.adapters.pdftext import page_paragraphs

    assert page_paragraphs(HIDDEN + "\n") == SEEN


def test_matching_forgives_invisible_characters_and_composition() -> None:
    stored = "The caf\u0065\u0301 opened in 1998, said the\u200b owner."  # an old version
    span = find_verbatim(stored, "The café opened in 1998, said the owner.")
    assert span is not None and stored[span[0] : span[1]].startswith("The caf")
    assert stored[span[0] : span[1]].endswith("owner.")
    assert find_verbatim("Café au lait", "Cafe\u0301 au\u200b lait") == (0, 12)
    assert find_verbatim("Café au lait", "Cafe au lait") is None  # letters still count


@given(st.text(alphabet=st.sampled_from([*"ae \u0301\u0308", *INVISIBLE, "x", "\n"]),
               max_size=40))
def test_clean_lines_is_visible_nfc(text: str) -> None:
    cleaned = clean_lines(text)
    assert not any(ch in cleaned for ch in INVISIBLE)
    assert unicodedata.is_normalized("NFC", cleaned)
    assert clean_lines(cleaned) == cleaned
    assert visible_nfc(cleaned) == cleaned


MARKDOWN = """# Boiling *point* of water

Water boils at **100 °C** at sea
level, as [the survey](https://example.org/s "Survey") and ![a chart](c.png) show.

## Altitude

- On Everest it boils at about `70 °C`.
- In Denver it boils at 95 °C.

> A pressure cooker raises the boiling point.

| Place | Boiling point |
|---|---|
| Sea level | 100 °C |

```
code  keeps   its lines
second line
```
"""


def test_markdown_is_stored_as_its_text() -> None:
    converted = markdown_text(MARKDOWN)
    assert converted.title == "Boiling point of water"
    assert converted.text.split("\n") == [
        "Boiling point of water",
        "Water boils at 100 °C at sea level, as the survey and a chart show.",
        "Altitude",
        "On Everest it boils at about 70 °C.",
        "In Denver it boils at 95 °C.",
        "A pressure cooker raises the boiling point.",
        "Place | Boiling point",
        "Sea level | 100 °C",
        "code  keeps   its lines",
        "second line",
    ]


def test_a_markdown_file_hands_out_sentences_not_heading_marks(tmp_path: Path) -> None:
    path = tmp_path / "boiling.md"
    path.write_text(MARKDOWN, encoding="utf-8")
    with Ledger(tmp_path / "ledger.db") as ledger:
        result = ledger.read(str(path), query="boiling point water")
        assert result.source.title == "Boiling point of water"
        assert all(not s.quote.startswith(("#", "-", "|", ">")) for s in result.snippets)
        assert all("**" not in s.quote and "](" not in s.quote for s in result.snippets)
