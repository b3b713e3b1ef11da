"""Turning a PDF page's visual lines into paragraphs, and judging the text."""

from __future__ import annotations

from fetchledger.adapters.pdftext import (
    garbled_reason,
    heading_title,
    page_paragraphs,
    plausible_info_title,
    vocabulary,
)

WIDE = "This line of ordinary prose is about as long as any line on the page."


def paragraphs(*lines: str, words: str = "") -> list[str]:
    text = "\n".join(lines)
    return page_paragraphs(text, vocabulary([text, words])).split("\n")


def test_soft_hyphenation_is_undone() -> None:
    assert paragraphs(
        "Lorem ipsum dolor sit amet, consectetuer adipiscing elit, the infor-",
        "mation is here.") == [
        "Lorem ipsum dolor sit amet, consectetuer adipiscing elit, the information is here."]


def test_hyphen_kept_when_the_document_spells_the_compound_with_one() -> None:
    assert paragraphs(
        "The team relied on methods that are, by now, thoroughly and widely well-",
        "known.", words="a well-known result") == [
        "The team relied on methods that are, by now, thoroughly and widely well-known."]


def test_hyphen_kept_before_a_capital_or_digit_and_soft_hyphen_dropped() -> None:
    assert paragraphs("The spread of the virus that causes the disease called COVID-",
                      "19 was fast.") == [
        "The spread of the virus that causes the disease called COVID-19 was fast."]
    assert paragraphs("A long line that ends in a soft hyphen within the word extra\u00ad",
                      "ordinary things.") == [
        "A long line that ends in a soft hyphen within the word extraordinary things."]


def test_ligatures_and_spacing_are_normalized() -> None:
    assert paragraphs("The  misﬁts   and the ﬂowers.") == ["The misfits and the flowers."]


def test_headings_short_sentence_ends_and_lists_stand_alone() -> None:
    assert paragraphs(
        "INTRODUCTION",
        "Water boils at a lower temperature on a mountain because the air pressure",
        "is lower there.",
        "Methods and Materials",
        "We measured it.",
        "1. first step of the list",
        "2. second step",
        WIDE) == [
        "INTRODUCTION",
        "Water boils at a lower temperature on a mountain because the air pressure is lower "
        "there.",
        "Methods and Materials",
        "We measured it.",
        "1. first step of the list",
        "2. second step",
        WIDE]


def test_ragged_short_lines_continue_in_lower_case() -> None:
    # a narrow inset column: lines far shorter than the page's text width
    assert paragraphs(
        "A report creeps into camp that",
        "the general is coming with fifty",
        "thousand men to raise the siege.",
        "Nobody believes it.",
        WIDE) == [
        "A report creeps into camp that the general is coming with fifty thousand "
        "men to raise the siege.", "Nobody believes it.", WIDE]


def test_lines_without_letters_stand_alone() -> None:
    assert paragraphs("Population", "273,879,750", "83,190,556") == [
        "Population", "273,879,750", "83,190,556"]


def test_empty_page_is_empty() -> None:
    assert page_paragraphs(" \n \n") == ""


def test_lone_surrogates_become_replacement_characters() -> None:
    assert page_paragraphs("bad \ud800 char") == "bad \ufffd char"


def test_info_title_placeholders_are_rejected() -> None:
    for junk in ("Microsoft Word - report.docx", "Binder1.pdf", "untitled", "", "   ", "123"):
        assert plausible_info_title(junk) is None
    assert plausible_info_title(" The  Crazy Ones ") == "The Crazy Ones"
    assert plausible_info_title(None) is None


def test_heading_title_skips_body_sentences_and_page_numbers() -> None:
    assert heading_title("THE SIEGE OF VICKSBURG. 49\nhowever, it did not last.") == (
        "THE SIEGE OF VICKSBURG")
    long_sentence = ("Hello, here is some text without a meaning that goes on for a while "
                     "and ends.")
    assert heading_title(long_sentence) is None


def test_garbled_text_is_recognized() -> None:
    english = ("At sea level, water boils at one hundred degrees Celsius, and the boiling "
               "point decreases with altitude because the pressure of the air falls. ") * 4
    assert garbled_reason(english) is None
    private = "".join(chr(0xE000 + (i % 50)) for i in range(200))
    assert "private-use" in (garbled_reason(private) or "")
    assert "replacement" in (garbled_reason("\ufffd" * 30 + " ok") or "")
    shifted = "".join(chr((ord(c) - 97 + 3) % 26 + 97) if c.islower() else c for c in english)
    assert "letter mix" in (garbled_reason(shifted) or "")
    assert garbled_reason("short \ufffd") is None  # too little text to judge


def test_garbled_judges_non_latin_text_fairly() -> None:
    arabic = "مرحبا بالعالم هذا نص عربي عادي تماما ولا يوجد فيه أي خطأ " * 5
    russian = "Привет, мир! Это обычный русский текст без каких-либо ошибок. " * 5
    assert garbled_reason(arabic) is None
    assert garbled_reason(russian) is None
