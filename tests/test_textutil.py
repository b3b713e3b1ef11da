"""Line-break normalization, wrapped-line joining and decoding."""

from __future__ import annotations

import codecs

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fetchledger.errors import UnsupportedType
from fetchledger.text.normalize import (
    LINE_BREAKS,
    clean_lines,
    decode_bytes,
    join_wrapped_lines,
    normalize_newlines,
    one_line,
)


def test_line_breaks_are_exactly_what_splitlines_breaks_on() -> None:
    breakers = {chr(c) for c in range(0x110000) if len(f"a{chr(c)}b".splitlines()) == 2}
    assert breakers == set(LINE_BREAKS) | {"\n"}


@given(st.text())
def test_normalized_text_has_only_newlines(text: str) -> None:
    out = clean_lines(text)
    assert out.split("\n") == out.splitlines() or out == ""
    assert "" not in out.split("\n") or out == ""
    assert "\n" not in one_line(text)


def test_crlf_is_one_newline() -> None:
    assert normalize_newlines("a\r\nb\rc\u2029d") == "a\nb\nc\nd"


def test_markdown_joins_soft_wraps_and_keeps_blocks() -> None:
    text = ("# Title\n\nA paragraph that\nwraps here.\n\n- one\n- two\n\n"
            "| a | b |\n| 1 | 2 |\n\n```\nx = 1\n\ny = 2\n```\n")
    assert join_wrapped_lines(text).split("\n") == [
        "# Title", "A paragraph that wraps here.", "- one", "- two", "| a | b |", "| 1 | 2 |",
        "```", "x = 1", "y = 2", "```"]


def test_plain_text_keeps_short_lines() -> None:
    text = ("Roses are red\nViolets are blue\n\n" + "x" * 70 + " wrapped\n" + "y" * 70
            + " here\nend.\n")
    lines = join_wrapped_lines(text, markdown=False).split("\n")
    assert lines[:2] == ["Roses are red", "Violets are blue"]
    assert len(lines) == 3


@pytest.mark.parametrize(
    ("raw", "declared", "expected"),
    [
        ("Grüße".encode(), None, "Grüße"),
        ("Grüße".encode("latin-1"), None, "Grüße"),
        ("Grüße".encode("latin-1"), "iso-8859-1", "Grüße"),
        ("Grüße".encode(), "iso-8859-1", "GrÃ¼ÃŸe"),  # a declaration is believed when it decodes
        (codecs.BOM_UTF16_LE + "Grüße".encode("utf-16-le"), None, "Grüße"),
        (codecs.BOM_UTF8 + b"plain", None, "plain"),
        ("€5".encode("cp1252"), "latin-1", "€5"),
        (b"ok", "no-such-charset", "ok"),
    ],
)
def test_decode_bytes(raw: bytes, declared: str | None, expected: str) -> None:
    assert decode_bytes(raw, declared) == expected


def test_binary_is_refused() -> None:
    with pytest.raises(UnsupportedType):
        decode_bytes(bytes(range(256)) * 10)
