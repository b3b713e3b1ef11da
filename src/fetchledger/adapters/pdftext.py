"""From the lines a PDF text layer gives to stored paragraphs, and judging them.

pypdf hands out a page as visual lines. Quotes must be whole sentences, so
wrapped lines are joined into paragraphs here:

- A line is joined to the next when it is *wrapped*: it reaches near the
  page's text width, or it stops without sentence-ending punctuation and the
  next line goes on in lower case (or the line ends on a comma, a connective
  such as "and"/"the", or a hyphen; a line ending on a connective goes on even
  when it looks like a heading, as a wrapped title does). A short line that ends a
  sentence, a heading-like line (title case, capitals, no final punctuation), a line
  with no letters (page numbers, table figures) and a line that starts a list
  item stand on their own.
- A word hyphenated across a line break is rejoined *without* the hyphen
  ("infor-" + "mation" -> "information"), unless the document spells that word
  with a hyphen elsewhere and never without one ("well-" + "known" stays
  "well-known" when "well-known" occurs in the text), or the next line starts
  with a capital or a digit ("COVID-" + "19" -> "COVID-19"). Soft hyphens
  (U+00AD) always go.
- Typographic ligatures (U+FB00-FB06: ﬁ ﬂ ﬀ ...) become their letters, runs of
  spaces collapse to one, and lone surrogates become U+FFFD, so quotes match
  what a reader types.
"""

from __future__ import annotations

import itertools
import math
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence

from ..text.normalize import clean_lines, normalize_newlines, one_line

__all__ = [
    "continues",
    "garbled_reason",
    "heading_title",
    "page_paragraphs",
    "plausible_info_title",
    "text_width",
    "vocabulary",
]

_LIGATURES = {cp: unicodedata.normalize("NFKC", chr(cp)) for cp in range(0xFB00, 0xFB07)}
_LIGATURE = re.compile("[\ufb00-\ufb06]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200a\u202f\u205f\u3000]+")
_WORDS = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
_HYPHENS = ("-", "\u2010", "\u00ad")
_LIST_ITEM = re.compile(r"^(?:[•◦▪▫‣∙●○■□➢►–—-]\s|\(?\d{1,3}[.)]\s|\(?[a-z][.)]\s|\(?[ivx]+\)\s)")
_SENTENCE_END = re.compile(r"""[.!?:;…]["'”’»)\]]*$""")
_CONNECTIVES = frozenset(
    """a an and as at by for from in into of on or than that the to with without
    which who whose whom nor but its their our his her your is are was were be been
    has have had not this these those such der die das und oder von mit zu im
    le la les et ou de des du un une""".split()
)
_SMALL_WORDS = frozenset("a an and as at by for in of on or the to with vs via".split())


def _clean(text: str) -> str:
    text = _SURROGATE.sub("\ufffd", text)
    if _LIGATURE.search(text):
        text = text.translate(_LIGATURES)
    return normalize_newlines(text)


def vocabulary(texts: Iterable[str]) -> Counter[str]:
    """Lowercased words (hyphenated compounds kept whole) of a document, for
    deciding whether a hyphen at a line end belongs to the word."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(w.lower() for w in _WORDS.findall(_clean(text)))
    return counts


def page_paragraphs(text: str, words: Counter[str] | None = None) -> str:
    """One page's extracted text as stored text: one paragraph per line."""
    lines = [_SPACES.sub(" ", line).strip() for line in _clean(text).split("\n")]
    lines = [line for line in lines if line]
    if not lines:
        return ""
    width = text_width(lines)
    paragraphs: list[str] = [lines[0]]
    for previous, line in itertools.pairwise(lines):
        joined = _join(paragraphs[-1], previous, line, width, words)
        if joined is None:
            paragraphs.append(line)
        else:
            paragraphs[-1] = joined
    return clean_lines("\n".join(paragraphs))


def text_width(lines: Sequence[str]) -> int:
    """The length a full line of this page reaches (its 90th-percentile line length)."""
    lengths = sorted(len(line) for line in lines)
    return lengths[math.ceil(0.9 * (len(lengths) - 1))]


def continues(previous: str, line: str, width: int | None = None) -> bool:
    """Does ``line`` go on the paragraph whose last visual line is ``previous``? The
    rules above, shared with the soft line breaks (``<br>``) of HTML; ``width`` is the
    length a full line reaches, None where lines are not wrapped at a width (then no
    line counts as full, and only the words decide)."""
    return _join(previous, previous, line, width or sys.maxsize, None) is not None


def _join(
    paragraph: str, previous: str, line: str, width: int, words: Counter[str] | None
) -> str | None:
    """``paragraph`` (which ends with the visual line ``previous``) continued by
    ``line``, or None when ``line`` starts a paragraph of its own."""
    if _LIST_ITEM.match(line) or not _has_letters(line) or not _has_letters(previous):
        return None
    if previous.endswith(_HYPHENS) and len(previous) > 1 and previous[-2].isalpha():
        return _dehyphenate(paragraph, line, words)
    long_line = len(previous) >= 0.75 * width
    if _SENTENCE_END.search(previous):
        starts_block = (len(line) < 0.5 * width and not _SENTENCE_END.search(line)
                        and _looks_like_heading(line))
        if long_line and not previous.endswith(":") and not starts_block:
            return f"{paragraph} {line}"
        return None
    if long_line:
        return f"{paragraph} {line}"
    # A line ending on a connective never ends a paragraph, not even a title's
    # ("The Theory of" + "Everything"); a heading is otherwise a line of its own.
    if previous.rsplit(" ", 1)[-1].lower() in _CONNECTIVES:
        return f"{paragraph} {line}"
    if _looks_like_heading(previous):
        return None
    if line[0].islower() or previous.endswith(","):
        return f"{paragraph} {line}"
    return None


def _dehyphenate(previous: str, line: str, words: Counter[str] | None) -> str:
    if previous.endswith("\u00ad"):
        return previous[:-1] + line
    if not line[0].islower():
        return previous + line  # "COVID-" + "19", "non-" + "European"
    words_before = _WORDS.findall(previous[-100:])  # the tail holds the hyphenated word
    head = words_before[-1].lower() if words_before else ""
    tail_match = _WORDS.match(line)
    tail = tail_match.group(0).lower() if tail_match else ""
    if words is not None and head and tail:
        hyphenated, solid = f"{head}-{tail}", f"{head}{tail}"
        if words[hyphenated] and not words[solid]:
            return previous + line
    return previous[:-1] + line


def _has_letters(line: str) -> bool:
    return any(ch.isalpha() for ch in line)


def _looks_like_heading(line: str) -> bool:
    """Capitals or title case, short, no closing comma: a heading or a label."""
    tokens = line.split()
    if len(tokens) > 12 or line.endswith((",", ";")):
        return False
    letters = [ch for ch in line if ch.isalpha()]
    if any(ch.isupper() for ch in letters) and not any(ch.islower() for ch in letters):
        return True  # ALL CAPITALS
    content = [t for t in tokens if t.lower() not in _SMALL_WORDS and t[:1].isalpha()]
    if not content:
        return False
    capitalized = sum(1 for t in content if t[0].isupper())
    return capitalized / len(content) >= 0.8


# --- titles -----------------------------------------------------------------

_JUNK_TITLE = re.compile(
    r"""^(?:untitled|unknown|no\s*title|title|document\d*|microsoft\s+\w+\s*-.*|
    .*\.(?:docx?|pdf|tex|dvi|ps|indd|rtf|odt|pptx?|xlsx?|qxd|pages|wpd))$""",
    re.IGNORECASE | re.VERBOSE,
)
_PAGE_NUMBER_EDGE = re.compile(r"^\d{1,4}\s+|\s+\d{1,4}$")


def plausible_info_title(title: object) -> str | None:
    """The document-info title unless it is a file name or a placeholder."""
    if not isinstance(title, str):
        return None
    text = one_line(_clean(title))
    if not text or _JUNK_TITLE.match(text) or not _has_letters(text):
        return None
    return text


def heading_title(first_page: str, max_lines: int = 8) -> str | None:
    """The first heading-like line near the top of the first page, if any."""
    for line in first_page.split("\n")[:max_lines]:
        candidate = _PAGE_NUMBER_EDGE.sub("", line).strip().rstrip(".").strip()
        words = candidate.split()
        letters = sum(ch.isalpha() for ch in candidate)
        if not 1 <= len(words) <= 15 or letters < 3 or len(candidate) > 150:
            continue
        if _SENTENCE_END.search(line) and len(words) > 8:
            continue  # a sentence of body text, not a title
        return candidate
    return None


# --- judging the extracted text -------------------------------------------------

_PRIVATE_USE = re.compile("[\ue000-\uf8ff\U000f0000-\U0010ffff]")
_CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f]")
_SPACE = re.compile(r"\s")
_LATIN = re.compile("[A-Za-z]")
_VOWEL = re.compile("[aeiouyAEIOUY]")
_LETTER = re.compile(r"[^\W\d_]")
_SYMBOL = re.compile(r"[^\w\s]")


def garbled_reason(text: str) -> str | None:
    """Why a page's text looks like mojibake (a broken font mapping), or None.

    Signs: private-use code points, U+FFFD replacement characters or control
    codes; or Latin letters whose vowel share is far from any natural
    language's (random glyph codes give about one vowel in five, prose about
    two in five); or mostly symbols.
    """
    visible = len(text) - len(_SPACE.findall(text))
    if visible < 20:
        return None
    private = len(_PRIVATE_USE.findall(text))
    replaced = text.count("\ufffd")
    controls = len(_CONTROL.findall(text))
    if (private + replaced + controls) / visible >= 0.05:
        kinds = [f"{count} {kind}" for count, kind in (
            (private, "private-use"), (replaced, "replacement"), (controls, "control"))
            if count]
        return f"{' and '.join(kinds)} characters"
    latin = len(_LATIN.findall(text))
    if latin >= 200 and latin >= 0.8 * len(_LETTER.findall(text)):
        vowels = len(_VOWEL.findall(text)) / latin
        if not 0.25 <= vowels <= 0.6:
            return f"an implausible letter mix ({vowels:.0%} vowels)"
        symbols = len(_SYMBOL.findall(text)) / visible
        if symbols > 0.35:
            return f"an implausible share of symbols ({symbols:.0%})"
    return None
