"""Is a piece of text verbatim in a stored text? Where, and what is nearest if not?

Matching forgives only what typing or markdown changes without changing the
words: runs of whitespace, typographic quotes and dashes, invisible format
characters and Unicode composition (both sides compare in NFC), and (for
drafts) markdown emphasis marks. Words and digits must match exactly. A match never
crosses a line of the stored text, because a quote never holds a newline.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Sequence

from .normalize import INVISIBLE, visible_nfc
from .passages import Passage, rank

__all__ = ["find_verbatim", "nearest_passage", "normalize_for_match", "strip_emphasis"]

_FOLD = str.maketrans({
    "‘": "'", "’": "'", "‚": "'", "‛": "'", "′": "'", "`": "'", "´": "'",
    "“": '"', "”": '"', "„": '"', "‟": '"', "″": '"', "«": '"', "»": '"',
    "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "―": "-", "−": "-",
    "\u00a0": " ", "\u202f": " ", "\u2009": " ", "\u200a": " ", "\u2007": " ",
    "\t": " ",
})
_EMPHASIS = re.compile(r"(\*{1,3}|_{1,3})(?=\S)(.+?)(?<=\S)\1")


def strip_emphasis(text: str) -> str:
    """Remove markdown emphasis marks (``*a*``, ``**a**``, ``_a_``) around words."""
    previous = None
    while previous != text:
        previous, text = text, _EMPHASIS.sub(r"\2", text)
    return text


def normalize_for_match(text: str) -> tuple[str, list[int]]:
    """Fold quotes, dashes and whitespace runs, drop invisible format characters and
    compose to NFC; return the folded text and, for each of its characters, the
    offset of the original character it came from."""
    folded: list[str] = []
    origin: list[int] = []
    in_space = False
    text = text.translate(_FOLD)  # one for one: offsets stay
    composed = unicodedata.is_normalized("NFC", text)
    index, length = 0, len(text)
    while index < length:
        char = text[index]
        if char in INVISIBLE:
            index += 1
            continue
        if not composed:  # a base character and its combining marks, composed
            after = index + 1
            while after < length and unicodedata.combining(text[after]):
                after += 1
            if after > index + 1:
                for piece in unicodedata.normalize("NFC", text[index:after]):
                    folded.append(piece)
                    origin.append(index)
                in_space = False
                index = after
                continue
        if char == " ":
            if in_space:
                index += 1
                continue
            in_space = True
        else:
            in_space = False
        folded.append(char)
        origin.append(index)
        index += 1
    return "".join(folded), origin


def find_verbatim(text: str, needle: str) -> tuple[int, int] | None:
    """``(start, end)`` of ``needle`` in ``text`` on one line, exact first, then
    forgiving only whitespace, quote and dash differences, invisible characters and
    composition (NFC); None if absent."""
    needle = visible_nfc(needle).strip()
    if not needle or "\n" in needle:
        return None
    position = text.find(needle)
    if position != -1:
        return position, position + len(needle)
    folded, origin = normalize_for_match(text)
    target, _ = normalize_for_match(needle)
    target = target.strip()
    position = folded.find(target)
    while position != -1:
        start, end = origin[position], origin[position + len(target) - 1] + 1
        while end < len(text) and (unicodedata.combining(text[end]) or text[end] in INVISIBLE):
            end += 1  # the marks composed into the last character
        if "\n" not in text[start:end]:
            return start, end
        position = folded.find(target, position + 1)
    return None


def nearest_passage(text: str, passages: Sequence[Passage], needle: str) -> Passage | None:
    """The passage that reads most like ``needle`` (for "did you mean" messages)."""
    if not passages:
        return None
    ranked = [passages[i] for _, i in rank(text, passages, needle)[:25]] or list(passages[:25])
    target = needle.lower()

    def similarity(p: Passage) -> float:
        """How well the best-aligned stretch of the passage reads like the needle."""
        candidate = text[p.start : p.end].lower()
        blocks = difflib.SequenceMatcher(None, candidate, target, autojunk=False)
        matched = [b for b in blocks.get_matching_blocks() if b.size]
        if not matched:
            return 0.0
        region = candidate[matched[0].a : matched[-1].a + matched[-1].size]
        return difflib.SequenceMatcher(None, region, target, autojunk=False).ratio()

    return max(ranked, key=similarity)
