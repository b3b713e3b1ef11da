"""Text normalization shared by every extractor.

The stored text of a source uses ``\\n`` only, holds one paragraph (or one
output line) per line, and has no blank lines. Every line-break character
``str.splitlines()`` knows becomes ``\\n`` here, so a quote cut from one line
can never contain a line break. The text is in NFC, without invisible format
characters (zero-width space, joiners, word joiner, BOM, soft hyphen, direction
marks): a quote
typed by a reader, who cannot see them, matches what is stored.
"""

from __future__ import annotations

import codecs
import re
import unicodedata

from .._version import __version__
from ..errors import UnsupportedType

__all__ = [
    "INVISIBLE",
    "LINE_BREAKS",
    "UNPRINTABLE_BEYOND_C0",
    "clean_lines",
    "decode_bytes",
    "join_wrapped_lines",
    "looks_binary",
    "normalize_newlines",
    "one_line",
    "printable",
    "printable_line",
    "text_extractor_version",
    "visible_nfc",
]

# Everything str.splitlines() breaks on, apart from "\n" itself.
LINE_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_TO_NEWLINE = {ord(ch): "\n" for ch in LINE_BREAKS}
# C0/C1 controls other than tab and line breaks are noise in extracted text.
_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\ufeff]")
# Format characters nobody sees or types: soft hyphen, zero-width space, non-joiner and
# joiner, the left-to-right, right-to-left and Arabic letter marks, word joiner and the
# invisible operators, zero-width no-break space (BOM), the Mongolian vowel separator.
# Kept: variation selectors (they pick a glyph form of the character before them) and
# the bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069):
# they change the order a reader sees words in, so they stay, and every output shows
# them as visible escapes (``printable``) instead of silently changing the text.
INVISIBLE = ("\u00ad\u061c\u180e\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062"
             "\u2063\u2064\ufeff")
_DROP_INVISIBLE = dict.fromkeys(map(ord, INVISIBLE))
_ANY_INVISIBLE = re.compile(f"[{INVISIBLE}]")
# A half of a surrogate pair standing alone: JSON may spell one ("\ud83d" without its
# low half), Python keeps it, and no UTF-8 text (SQLite, PostgreSQL, a terminal) can
# hold it. It becomes U+FFFD, one character for one, like a byte that does not decode.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def visible_nfc(text: str) -> str:
    """``text`` without invisible format characters, in NFC (stored text and anything
    compared with it: quotes, draft quotations)."""
    if _ANY_INVISIBLE.search(text):
        text = text.translate(_DROP_INVISIBLE)
    if _LONE_SURROGATE.search(text):  # JSON's "\ud800": no text can be stored with it
        text = _LONE_SURROGATE.sub("\ufffd", text)
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


# Bumped whenever the stored text of the same bytes changes (text, Markdown, CSV, command
# and piped output).
# 2: NFC without invisible format characters (issue 11).
# 3: direction marks (LRM, RLM, ALM) and U+180E invisible too; Markdown footnotes dropped.
TEXT_REVISION = 3


def text_extractor_version() -> str:
    """The extractor version recorded for text kinds and command output: ``0.1.0+text.3``."""
    return f"{__version__}+text.{TEXT_REVISION}"


# What must never reach an output raw: C0 and C1 controls and DEL (they end lines,
# move the cursor, talk to the terminal: ESC, CSI, OSC), the line and paragraph
# separators, the bidi controls that reorder the text around them (embeddings,
# overrides, isolates, marks), the interlinear annotation controls, and the tag
# characters (U+E0000-E007F: invisible, yet a model reads them as ASCII: hidden
# instructions in a page's text).
# Also every other invisible format character (issue 13, red team): the ones stored text
# drops (zero-width space and joiners, word joiner, invisible operators, BOM, soft hyphen,
# U+180E) where a field keeps them (a file name, a URL, a command line: two names that
# look alike are then told apart), the deprecated format controls U+206A-U+206F (they
# swap brackets and reshape digits: `123` shown as `١٢٣`), the shorthand format controls
# and the invisible musical beam and phrase marks.
# And (session 7) the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0: letters by
# their category, yet drawn as blank space, so `admin` and `admin` + a filler look alike
# and a line of them looks empty (they are kept in stored text: only shown escaped).
# Beyond C0 (which JSON always escapes): the same class, for JSON printed for people
# and for every JSON file an export writes.
UNPRINTABLE_BEYOND_C0 = ("\x7f-\x9f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028\u2029"
                         "\u202a-\u202e\u3164\uffa0"
                         "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U0001bca0-\U0001bca3"
                         "\U0001d173-\U0001d17a\U000e0000-\U000e007f")
_UNPRINTABLE = re.compile(f"[\x00-\x1f{UNPRINTABLE_BEYOND_C0}]")
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str) -> str:
    """The display function: text a source controls (a file name, title, URL, label,
    command line, page text) as it may be printed. Each character that could end a
    line, drive a terminal or reorder the text around it becomes a visible escape —
    ``\\n``, ``\\r``, ``\\t``, ``\\x1b``, ``\\x9b``, ``\\u202e`` — and
    everything else stays as it is. Every text output path uses it."""
    return _UNPRINTABLE.sub(_visible, text)


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED_ESCAPES.get(char)
    if named:
        return named
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable_line(text: str) -> str:
    """:func:`printable`, with runs of spaces collapsed: a message as one line."""
    return " ".join(printable(text).split())


def normalize_newlines(text: str) -> str:
    """Turn ``\\r\\n`` and every other line-break character into ``\\n``."""
    return text.replace("\r\n", "\n").translate(_TO_NEWLINE)


def one_line(text: str) -> str:
    """Collapse any text (a title, a label) to one line of single-spaced words."""
    text = _CONTROLS.sub("", normalize_newlines(visible_nfc(text)))
    return " ".join(text.split())


def clean_lines(text: str) -> str:
    """Normalize line breaks, drop control characters, trim lines, drop blank lines.

    Runs of spaces and tabs inside a line are kept as they are (they are part
    of the verbatim text), only leading and trailing whitespace goes.
    """
    text = _CONTROLS.sub("", normalize_newlines(visible_nfc(text)))
    lines = (line.strip() for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


_BLOCK_START = re.compile(
    r"""^(?:
        [#>|]                      # heading, block quote, table row
      | [-*+•]\s                   # bullet
      | \d{1,3}[.)]\s              # numbered item
      | ```|~~~                    # code fence
      | [=\-*_]{3,}\s*$            # rule or setext underline
    )""",
    re.VERBOSE,
)


def join_wrapped_lines(text: str, *, markdown: bool = True) -> str:
    """Join hard-wrapped lines into one line per paragraph.

    Paragraphs are separated by blank lines. Lines that start a block of their
    own (headings, list items, table rows, block quotes, rules) stay on their
    own line, and so does every line inside a fenced code block. In markdown a
    single line break never ends a paragraph; in plain text (``markdown=False``)
    a line is joined to the next only when it reaches near the wrap width of
    the file, so short lines (verse, addresses, lists) keep their breaks.
    """
    lines = normalize_newlines(text).split("\n")
    wrap = 0 if markdown else _wrap_width(lines)
    out: list[str] = []
    current: list[str] = []
    in_fence = False

    def flush() -> None:
        if current:
            out.append(" ".join(current))
            current.clear()

    for raw_line in lines:
        line = raw_line.strip()
        if markdown and line.startswith(("```", "~~~")):
            flush()
            out.append(line)
            in_fence = not in_fence
            continue
        if in_fence:
            if line:
                out.append(raw_line.rstrip())
            continue
        if not line:
            flush()
            continue
        starts_block = bool(_BLOCK_START.match(line))
        previous_open = bool(current) and not current[-1].startswith(("#", "|"))
        if previous_open and wrap and len(current[-1]) < wrap:
            previous_open = False
        if starts_block or not previous_open:
            flush()
        current.append(line)
    flush()
    return clean_lines("\n".join(out))


def _wrap_width(lines: list[str]) -> int:
    """The length a hard-wrapped plain-text line reaches (80% of the 90th percentile)."""
    lengths = sorted(len(line.strip()) for line in lines if line.strip())
    if not lengths:
        return 0
    return max(30, int(lengths[int(0.9 * (len(lengths) - 1))] * 0.8))


def looks_binary(raw: bytes) -> bool:
    """True when the bytes are clearly not text (NUL bytes, or mostly control bytes)."""
    head = raw[:8192]
    if not head:
        return False
    if b"\x00" in head:
        # UTF-16/32 text has NULs too; it carries a BOM when we can read it.
        return not head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    controls = sum(1 for b in head if b < 9 or 13 < b < 32)
    return controls / len(head) > 0.1


def decode_bytes(raw: bytes, declared: str | None = None, *, locator: str = "") -> str:
    """Decode text bytes: BOM, then the declared charset, then UTF-8, then detection.

    Raises UnsupportedType when the bytes are not text.
    """
    for bom, encoding in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if raw.startswith(bom):
            return raw.decode(encoding, errors="replace")
    if looks_binary(raw):
        raise UnsupportedType("binary content, not text", locator=locator)
    if declared:
        try:
            return raw.decode(_codec_name(declared))
        except (LookupError, UnicodeDecodeError):
            pass  # a wrong or unknown declaration: fall through to detection
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    mostly = _mostly_utf8(raw)
    if mostly is not None:
        return mostly
    if len(raw) < 200:
        # Too little text for detection to be reliable: read it as Windows-1252,
        # the legacy encoding of most non-UTF-8 text on the web.
        return raw.decode("cp1252", errors="replace")
    from charset_normalizer import from_bytes

    best = from_bytes(raw).best()
    if best is None:
        raise UnsupportedType("content is not text in any known encoding", locator=locator)
    return str(best)


_NON_ASCII = re.compile(r"[^\x00-\x7f\ufffd]")


def _mostly_utf8(raw: bytes) -> str | None:
    """UTF-8 with a few stray bytes (a Latin-1 character pasted into a UTF-8 page) is
    read as browsers read it: UTF-8, the stray bytes replaced. Detection would garble
    every other character of the page instead."""
    text = raw.decode("utf-8", errors="replace")
    stray = text.count("\ufffd") - raw.count("\ufffd".encode())
    valid = len(_NON_ASCII.findall(text))
    return text if stray > 0 and valid >= 4 * stray else None


def _codec_name(declared: str) -> str:
    name = declared.strip().strip("\"'").lower()
    # Browsers read latin-1 declarations as windows-1252 (WHATWG Encoding).
    return "cp1252" if name in {"iso-8859-1", "latin-1", "latin1", "us-ascii", "ascii"} else name


def fold_for_match(text: str) -> str:
    """Lowercase and strip diacritics (for ranking only, never for stored text)."""
    if text.isascii():
        return text.lower()  # nothing to decompose (the common case, and fast)
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))
