"""The text algorithms as they were before the registration's fast paths (9fd7b02),
kept as the oracle the fast paths are proved against (``test_fast_paths.py``).

``reference`` is a second copy of :mod:`fetchledger.text.passages` in which each
function that a fast path rewrote is put back as it was (their bodies below are
verbatim): the copy's other functions (``rank``, ``cut_quote``, ``display_line``,
``heading_flags``, ...) look their helpers up in the copy, so they run the old code
through and through. Its records (``Passage``, ``QuoteSpan``) are the copy's own
classes: compare their fields, not the objects.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Sequence
from types import ModuleType
from typing import Any


def _copy() -> ModuleType:
    spec = importlib.util.find_spec("fetchledger.text.passages")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)  # not in sys.modules: a copy
    spec.loader.exec_module(module)
    return module


reference = _copy()
_m = reference
# the helpers the old bodies name, from the copy (unchanged by the fast paths)
_BOUNDARY, _CJK_BOUNDARY, _TRAILING_MARKS = _m._BOUNDARY, _m._CJK_BOUNDARY, _m._TRAILING_MARKS
_ABBREVIATIONS, _BEFORE_NUMBERS, _ROMAN = _m._ABBREVIATIONS, _m._BEFORE_NUMBERS, _m._ROMAN
_LETTERS_WITH_DOTS, _BULLET, _TOKEN = _m._LETTERS_WITH_DOTS, _m._BULLET, _m._TOKEN
_URL_LINE, _BIBLIOGRAPHY, _CITED_WORK = _m._URL_LINE, _m._BIBLIOGRAPHY, _m._CITED_WORK
_NAV_SEPARATOR, _CLOSERS, _TERMINATORS = _m._NAV_SEPARATOR, _m._CLOSERS, _m._TERMINATORS
FURNITURE, BODY, MAX_PASSAGE, MAX_QUOTE = _m.FURNITURE, _m.BODY, _m.MAX_PASSAGE, _m.MAX_QUOTE
Passage, QuoteSpan, Page = _m.Passage, _m.QuoteSpan, Any
_goes_on_in_lower_case, _trim, _chunks = _m._goes_on_in_lower_case, _m._trim, _m._chunks
_line_pieces, _page_at, query_terms, rank = _m._line_pieces, _m._page_at, _m.query_terms, _m.rank
passage_roles, cut_quote, _is_substantial = _m.passage_roles, _m.cut_quote, _m._is_substantial

_GLUED_NUMBER = re.compile(r"(?<=[^\W\d_]{2})([.!?])\d{1,3}(?=\s+[\"'“‘«(\[]*[^\W\d_])")


def is_abbreviation(line: str, dot: int) -> bool:
    """True when the '.' at ``dot`` ends an abbreviation (Ph.D., e.g., U.S.) or an
    initial (J. Smith), not a sentence. Shared by stored text and drafts."""
    begin = dot
    while begin > 0 and not line[begin - 1].isspace():
        begin -= 1
    written = line[begin:dot].lstrip("\"'“‘«([*_")
    word = written.lower()
    if word in _BEFORE_NUMBERS:  # "Fig. 3", "p. 72", "No. 5" — but "piece of art. The"
        after = line[dot + 1 :].lstrip()
        return bool(after) and (after[0].isdigit() or bool(_ROMAN.match(after)))
    if len(word) == 1 and word.isalpha():
        # An initial ("J. Smith"), or a letter before a number ("c. 1900", "(d. 2010)",
        # "p. 5"), not "a scalar c. Also".
        after = line[dot + 1 :].lstrip()
        return written.isupper() or (bool(after) and after[0].isdigit())
    return word in _ABBREVIATIONS or bool(_LETTERS_WITH_DOTS.fullmatch(word))


def split_sentences(line: str) -> list[tuple[int, int]]:
    """Sentence spans ``(start, end)`` of one line, whitespace trimmed."""
    cuts: list[int] = []
    for match in _BOUNDARY.finditer(line):
        if match.group(1) == "." and is_abbreviation(line, match.start()):
            continue
        if match.start() and line[match.start() - 1] in "[(":
            continue  # an elision, "[…]" or "(...)", not the end of a sentence
        if _goes_on_in_lower_case(line, match.end()):
            continue  # "…she said?" he asked. / "He’s… not": one sentence
        cuts.append(match.end())
    for match in _GLUED_NUMBER.finditer(line):
        after = line[match.end():].lstrip(" \t\"'“‘«([")
        if after[:1].isupper() and not (match.group(1) == "." and
                                         is_abbreviation(line, match.start())):
            cuts.append(match.end())
    cuts.extend(m.end() for m in _CJK_BOUNDARY.finditer(line))
    spans: list[tuple[int, int]] = []
    begin = 0
    for cut in [*sorted(set(cuts)), len(line)]:
        start, end = _trim(line, begin, cut)
        if start < end:
            spans.append((start, end))
        begin = cut
    return spans


def split_passages(text: str, pages: Sequence[Page] = ()) -> list[Passage]:
    """Every passage of ``text``: sentences of each line, chunked when over-long; a
    list item's bullet (``- ``, ``• ``) is not part of its first passage."""
    page_starts = [p.start for p in pages]
    passages: list[Passage] = []
    offset = 0
    for line in text.split("\n"):
        bullet = _BULLET.match(line)
        skip = offset + bullet.end() if bullet else offset
        for begin, end in _line_pieces(offset, len(line), pages, page_starts):
            page = _page_at(pages, page_starts, begin)
            number, label = (page.number, page.label) if page else (None, None)
            segment = text[begin:end]
            for s_start, s_end in split_sentences(segment):
                start = max(begin + s_start, skip)
                for c_start, c_end in _chunks(text, start, begin + s_end, MAX_PASSAGE):
                    passages.append(Passage(c_start, c_end, number, label))
        offset += len(line) + 1
    return passages


def _line_role(line: str) -> str:
    if _URL_LINE.match(line.strip()) or _BIBLIOGRAPHY.search(line) or _CITED_WORK.match(
            line.lstrip("-•*0123456789.) ")):
        return FURNITURE
    parts = _NAV_SEPARATOR.split(line)
    if len(parts) >= 3 and all(len(p.split()) <= 3 and not any(c.isdigit() for c in p)
                               for p in parts) and not line.rstrip().endswith((".", "!", "?")):
        return FURNITURE
    return BODY


def _after_terminator(text: str, i: int) -> bool:
    """Does ``text[:i]`` end with a terminator, then closers and footnote marks?"""
    while True:
        marks = _TRAILING_MARKS.search(text, max(0, i - 40), i)
        if marks is not None and marks.start() < i:
            i = marks.start()
            continue
        if i > 0 and text[i - 1] in _CLOSERS:
            i -= 1
            continue
        return i > 0 and text[i - 1] in _TERMINATORS


def select_quotes(
    text: str,
    passages: Sequence[Passage],
    query: str | None = None,
    k: int = 3,
    *,
    max_chars: int = MAX_QUOTE,
    lead_if_no_match: bool = True,
    title: str | None = None,
) -> list[QuoteSpan]:
    """The ``k`` quotes a retrieval hands out: best ranked for a query, else the
    leading passages of substance (sentences, not headings; others if none).

    With a query that matches nothing, the leading passages are handed out
    unless ``lead_if_no_match`` is false (then nothing is). The page ``title`` is
    never handed out while body passages match (:func:`rank`)."""
    if k <= 0 or not passages:
        return []
    terms = query_terms(query) if query else []
    order = [index for _, index in rank(text, passages, query, title=title)] if query else []
    if not order and query and not lead_if_no_match:
        return []
    if not order:
        roles = passage_roles(text, passages, title)
        substantial = [i for i, p in enumerate(passages)
                       if roles[i] == BODY and _is_substantial(text, p)]
        taken = set(substantial)  # built once: per passage, it made this quadratic
        # then the rest, but not bare punctuation such as "{" or "],"
        order = substantial + [i for i, p in enumerate(passages) if i not in taken
                               and _TOKEN.search(text, p.start, p.end)]
    chosen: list[QuoteSpan] = []
    seen: set[str] = set()
    for index in order:
        span = cut_quote(text, passages[index], terms, max_chars)
        key = text[span.start : span.end]
        if key in seen:
            continue
        seen.add(key)
        chosen.append(span)
        if len(chosen) == k:
            break
    return chosen

for _name in ("is_abbreviation", "split_sentences", "split_passages", "_line_role",
              "_after_terminator", "select_quotes", "_GLUED_NUMBER"):
    setattr(reference, _name, globals()[_name])
