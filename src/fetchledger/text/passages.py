"""Split stored text into passages, rank them for a query, cut quotes.

A passage is one sentence of one line of the stored text (a very long
sentence is split at word boundaries), so a passage never crosses a line and
never crosses a page. Offsets are code points into the stored text. Quotes
are cut from passages at word boundaries to at most ``MAX_QUOTE`` characters;
the display line marks a cut with ``…`` (the quote itself never holds one).
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..document import Page
from ..records import quick
from .normalize import fold_for_match

__all__ = [
    "BODY",
    "FURNITURE",
    "MAX_PASSAGE",
    "MAX_QUOTE",
    "TITLE",
    "Passage",
    "QuoteSpan",
    "cut_quote",
    "display_line",
    "heading_flags",
    "idf",
    "is_abbreviation",
    "passage_roles",
    "query_terms",
    "rank",
    "rank_candidates",
    "search_words",
    "select_quotes",
    "span_tokens",
    "split_passages",
    "split_sentences",
    "term_tokens",
    "tokenize",
]

MAX_QUOTE = 300
MAX_PASSAGE = 1000  # longer sentences are indexed in chunks of about this size
ELLIPSIS = "…"


@quick
@dataclass(frozen=True)
class Passage:
    """``text[start:end]`` is one sentence (or chunk of one) on one line."""

    start: int
    end: int
    page: int | None = None
    label: str | None = None


@quick
@dataclass(frozen=True)
class QuoteSpan:
    """A quote cut from a passage: ``text[start:end]`` verbatim, ``line`` for display."""

    start: int
    end: int
    page: int | None
    label: str | None
    line: str


# --- sentences --------------------------------------------------------------

_ABBREVIATIONS = frozenset(
    """mr mrs ms dr prof sr jr st mt vs etc e.g i.e eg ie cf al fig figs no nos vol vols
    pp p ed eds approx ca inc ltd co corp dept univ jan feb mar apr jun jul aug sep sept
    oct nov dec u.s u.k u.n u.s.a ph.d m.d b.a m.a m.sc b.sc gen gov sen rep rev est op
    viz resp incl min max sec ch chap eq eqs ref refs art dist
    z.b bzw ggf usw vgl d.h u.a s.o bzgl evtl inkl""".split()
)
# A terminator run, closing quotes/brackets, footnote marks that a source glued after
# the sentence ("in 1998.[1][2]", "shown.¹²"), then whitespace and what can open one.
# A mark is a bracketed number or run (``[12]``, ``[3, 5]``, ``[4–6]``) with an optional
# page (``[12]:3``), a bracketed letter or note (``[a]``, ``[note 1]``, ``[nb 2]``), or
# superscript digits.
_MARK = (r"""(?:\[(?:\d{1,4}(?:\s*[,–-]\s*\d{1,4})*|[a-z]|(?:note|nb|n)\s?\d{1,3})\]"""
         r"""(?::\s?\d{1,4}(?:\s?[–-]\s?\d{1,4})?)?|[¹²³⁰⁴-⁹]+)""")
_BOUNDARY = re.compile(
    rf"""([.!?…]+)["'”’»)\]]*{_MARK}*"""
    r"""(?=\s+["'“‘«(\[]*[\w¿¡])""")
# A note number a PDF or a page glued after a word's full stop (its superscript lost):
# "take 5 seconds.23 If ..." ends the sentence after the number. Only after a word of two
# letters or more (never a decimal, "3.5 Million"), and only before a capital.
# (The terminator comes first and the letters before it are looked behind from after
# it: the search then skips to each terminator instead of trying every position.)
_GLUED_NUMBER = re.compile(r"([.!?])(?<=[^\W\d_]{2}[.!?])\d{1,3}(?=\s+[\"'“‘«(\[]*[^\W\d_])")
_CJK_BOUNDARY = re.compile(r"[。！？]+[」』”’）]*")
_WORD = re.compile(r"\S+")


# Abbreviations that stand before a number; elsewhere the same word ends a sentence.
_BEFORE_NUMBERS = frozenset("fig figs no nos vol vols pp p art sec ch chap eq eqs ref refs op"
                            .split())
_ROMAN = re.compile(r"[ivxlcIVXLC]+\b")
_LETTERS_WITH_DOTS = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")  # L.E.A.N, H.W, U.S.A
_OPENERS = "\"'“‘«(["


def is_abbreviation(line: str, dot: int) -> bool:
    """True when the '.' at ``dot`` ends an abbreviation (Ph.D., e.g., U.S.) or an
    initial (J. Smith), not a sentence. Shared by stored text and drafts."""
    begin = _word_start(line, dot)
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


_LAST_SPACE = re.compile(r".*\s", re.DOTALL)  # to the last whitespace (``\s``: isspace)
_WORD_WINDOW = 64


def _word_start(line: str, at: int) -> int:
    """Where the run of non-whitespace that ends at ``at`` begins: after the last
    whitespace before ``at`` (looked for in C over the 64 characters before it, then,
    for a longer word, character by character)."""
    low = max(0, at - _WORD_WINDOW)
    space = _LAST_SPACE.match(line, low, at)
    if space is not None:
        return space.end()
    begin = low
    while begin > 0 and not line[begin - 1].isspace():
        begin -= 1
    return begin


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
    if not line.isascii():  # (an ASCII line holds no CJK terminator)
        cuts.extend(m.end() for m in _CJK_BOUNDARY.finditer(line))
    spans: list[tuple[int, int]] = []
    begin = 0
    for cut in [*sorted(set(cuts)), len(line)]:
        start, end = _trim(line, begin, cut)
        if start < end:
            spans.append((start, end))
        begin = cut
    return spans


def _goes_on_in_lower_case(line: str, at: int) -> bool:
    while at < len(line) and (line[at].isspace() or line[at] in _OPENERS):
        at += 1
    return at < len(line) and line[at].islower()


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _chunks(text: str, start: int, end: int, size: int) -> Iterable[tuple[int, int]]:
    """Split ``text[start:end]`` at word boundaries into pieces of about ``size``."""
    while end - start > size:
        cut = text.rfind(" ", start + size // 2, start + size)
        if cut <= start:
            cut = start + size
        yield _trim(text, start, cut)
        start, _ = _trim(text, cut, end)
    if start < end:
        yield start, end


# The bullet of a list item: a mark of the layout, not a word of the item.
_BULLET = re.compile(r"[-*•◦▪‣–]\s+(?=\S)")
_BULLET_BEFORE = re.compile(r"[-*•◦▪‣–]\s+")  # the bullet, seen from the word after it


def split_passages(text: str, pages: Sequence[Page] = ()) -> list[Passage]:
    """Every passage of ``text``: sentences of each line, chunked when over-long; a
    list item's bullet (``- ``, ``• ``) is not part of its first passage."""
    page_starts = [p.start for p in pages]
    passages: list[Passage] = []
    append = passages.append
    offset = 0
    for line in text.split("\n"):
        length = len(line)
        bullet = _BULLET.match(line)
        skip = offset + bullet.end() if bullet else offset
        # unpaged text: the line is one piece, sentences of at most MAX_PASSAGE one passage
        pieces = (_line_pieces(offset, length, pages, page_starts) if pages
                  else ((offset, offset + length),) if length else ())
        for begin, end in pieces:
            page = _page_at(pages, page_starts, begin) if pages else None
            number, label = (page.number, page.label) if page else (None, None)
            segment = line if end - begin == length else text[begin:end]
            for s_start, s_end in split_sentences(segment):
                start = max(begin + s_start, skip)
                stop = begin + s_end
                if stop - start <= MAX_PASSAGE:
                    if start < stop:
                        append(Passage(start, stop, number, label))
                    continue
                for c_start, c_end in _chunks(text, start, stop, MAX_PASSAGE):
                    append(Passage(c_start, c_end, number, label))
        offset += length + 1
    return passages


def _line_pieces(
    offset: int, length: int, pages: Sequence[Page], page_starts: list[int]
) -> list[tuple[int, int]]:
    """The line at ``offset``, split where a page starts inside it (never happens
    with well-formed paged text, but a passage must not cross a page)."""
    end = offset + length
    cuts = [s for s in page_starts if offset < s < end]
    bounds = [offset, *cuts, end]
    return [(a, b) for a, b in itertools.pairwise(bounds) if a < b]


def _page_at(pages: Sequence[Page], page_starts: list[int], position: int) -> Page | None:
    if not pages:
        return None
    index = bisect.bisect_right(page_starts, position) - 1
    if index < 0:
        return None
    page = pages[index]
    return page if position < max(page.end, page.start + 1) else None


# --- ranking ----------------------------------------------------------------

_TOKEN = re.compile(r"\w+")
_STOPWORDS = frozenset(
    """a an and are as at be by for from has have in is it its of on or that the this
    to was were which with der die das und ist von zu den des le la les et de du""".split()
)


@lru_cache(maxsize=1)
def _stemmer() -> object:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return str(_stemmer().stemWord(word))  # type: ignore[attr-defined]


def tokenize(text: str) -> list[str]:
    """Lowercased, diacritic-free, stemmed word tokens (for ranking only)."""
    # Digits stem to themselves; skipping them keeps the stem cache for words.
    return [w if w.isdigit() else _stem(w) for w in _TOKEN.findall(fold_for_match(text))]


def span_tokens(text: str, spans: Iterable[tuple[int, int]]) -> Iterator[list[str]]:
    """``tokenize(text[start:end])`` for each span, in order; an ASCII text (whose
    lowercase keeps every offset) is folded once for them all, its words read in
    place."""
    if not text.isascii():
        yield from (tokenize(text[start:end]) for start, end in spans)
        return
    folded, words, stem = text.lower(), _TOKEN.findall, _stem
    for start, end in spans:
        yield [w if w.isdigit() else stem(w) for w in words(folded, start, end)]


def term_tokens(text: str, terms: Collection[str]) -> list[str]:
    """:func:`tokenize`, except that a word which cannot stem to any of ``terms`` is
    left unstemmed and given as ``""`` (never a term): the same count of tokens and
    the same terms at the same places, for a fraction of the stemming.

    Snowball's English stemmer rewrites only a word's ending (its R1 region starts
    at the third letter at the earliest): a stem keeps the word's first letter, is
    never longer than the word, and keeps its second letter too unless the stem is
    one letter (``aed`` -> ``a``) or a ``y`` became ``i`` (``dying`` -> ``die``).
    Checked on 463,279 distinct folded words (the shared corpus's and a random
    vocabulary). Stemming every word of every candidate (pure Python, ~25 µs a word
    the cache has not seen) was most of the time of a ledger-wide search."""
    # a word's first two letters -> the shortest term it may stem to; one-letter terms
    shortest: dict[str, int] = {}
    single = {term for term in terms if len(term) == 1}
    for term in terms:
        if len(term) > 1:
            for key in (term[:2], term[0] + "y") if term[1] == "i" else (term[:2],):
                shortest[key] = min(len(term), shortest.get(key, len(term)))
    out: list[str] = []
    for word in _TOKEN.findall(fold_for_match(text)):
        least = shortest.get(word[:2])
        if (least is not None and len(word) >= least) or (single and word[0] in single):
            out.append(word if word.isdigit() else _stem(word))
        else:
            out.append("")
    return out


def search_words(query: str) -> list[str]:
    """Distinct lowercased words of a query for the ledger's full-text index
    (which stems by itself), stopwords dropped unless nothing else is left."""
    words = _TOKEN.findall(query.lower())
    content = [w for w in words if w not in _STOPWORDS]
    return list(dict.fromkeys(content or words))


def query_terms(query: str) -> list[str]:
    """Distinct stemmed terms of a query, stopwords dropped unless nothing else is left."""
    tokens = tokenize(query)
    content = [t for t in tokens if t not in _STOPWORDS]
    return list(dict.fromkeys(content or tokens))


def rank(
    text: str, passages: Sequence[Passage], query: str, *, k1: float = 1.2, b: float = 0.75,
    title: str | None = None,
) -> list[tuple[float, int]]:
    """BM25 score of every passage that matches the query, best first: ``(score, index)``.

    Adjacent query terms found next to each other in a passage add a small
    phrase bonus, so "boiling point" prefers passages with the phrase; headings
    and labels (not sentences) count half, so a statement beats its title.
    Term statistics come from ``passages`` themselves (one document). Body
    passages come before those of the page's furniture (:func:`passage_roles`),
    and the page ``title`` itself is left out when any body passage matches.
    """
    return _bm25([(text, p) for p in passages], query_terms(query), None, k1, b, title)


def rank_candidates(
    candidates: Sequence[tuple[str, Passage]], query: str, *, collection: int,
    holding: Mapping[str, int], k1: float = 1.2, b: float = 0.75,
) -> list[tuple[float, int]]:
    """:func:`rank` for passages a ledger-wide search found, each ``(text, passage)``
    with offsets into its own text: ``collection`` passages are indexed, ``holding``
    says how many hold each search word. The one scorer of every store backend."""
    df: dict[str, int] = {}
    for word, count in holding.items():
        for term in tokenize(word):
            df[term] = max(df.get(term, 0), count)
    return _bm25(candidates, query_terms(query), (collection, df), k1, b)


def idf(collection: int, holding: int) -> float:
    """BM25's inverse document frequency of a term ``holding`` of ``collection``
    passages hold (the weight every ranking and every store's pre-selection uses)."""
    return math.log(1 + (max(collection, holding) - holding + 0.5) / (holding + 0.5))


def _bm25(
    items: Sequence[tuple[str, Passage]], terms: Sequence[str],
    collection: tuple[int, Mapping[str, int]] | None, k1: float, b: float,
    title: str | None = None,
) -> list[tuple[float, int]]:
    if not terms or not items:
        return []
    docs = [term_tokens(text[p.start : p.end], terms) for text, p in items]
    avg_len = sum(len(d) for d in docs) / len(docs) or 1.0
    term_set = set(terms)
    df: Counter[str] = Counter()
    for doc in docs:
        df.update(term_set.intersection(doc))
    n_docs = len(docs)
    if collection is not None:  # the store's counts; never fewer than seen here
        n_docs = max(n_docs, collection[0])
        df = Counter({t: max(df[t], collection[1].get(t, 0)) for t in terms})
    weights = {t: idf(n_docs, df[t]) for t in terms}
    pairs = set(itertools.pairwise(terms))
    scored: list[tuple[float, int]] = []
    coverage: dict[int, int] = {}  # distinct query terms in each scored passage
    for index, doc in enumerate(docs):
        counts = Counter(t for t in doc if t in term_set)
        if not counts:
            continue
        norm = k1 * (1 - b + b * len(doc) / avg_len)
        score = sum(weights[t] * c * (k1 + 1) / (c + norm) for t, c in counts.items())
        if pairs:
            adjacent = sum(1 for pair in itertools.pairwise(doc) if pair in pairs)
            score += 0.25 * min(adjacent, len(pairs)) * max(weights.values())
        text, passage = items[index]
        if not _is_substantial(text, passage):
            score *= 0.5  # a heading or label names a topic; a sentence states something
        scored.append((score, index))
        coverage[index] = len(counts)
    return _body_first(items, scored, coverage, title)


def _body_first(items: Sequence[tuple[str, Passage]], scored: list[tuple[float, int]],
                coverage: dict[int, int], title: str | None) -> list[tuple[float, int]]:
    """``scored`` sorted: body passages first, then the page's furniture (see
    :func:`passage_roles`), each by score; the title is dropped while a body passage
    matches. A furniture passage holding more of the query's terms than any body
    passage stays among the body: a query that *is* a reference entry finds it."""
    roles = _Roles(title)
    role_of = {index: roles.of(*items[index]) for _, index in scored}
    best_body = max((coverage[i] for _, i in scored if role_of[i] == BODY), default=0)
    if best_body:
        scored = [item for item in scored if role_of[item[1]] != TITLE]

    def behind(index: int) -> bool:
        return role_of[index] != BODY and coverage[index] <= best_body

    scored.sort(key=lambda item: (behind(item[1]), -item[0], item[1]))
    return scored


# --- what a passage is: body, or the page's furniture ------------------------------------

BODY, TITLE, FURNITURE = "body", "title", "furniture"
_URL_LINE = re.compile(r"^\W{0,3}(?:[a-z][a-z0-9+.-]*://|www\.)\S+\W{0,3}$", re.IGNORECASE)
_NAV_SEPARATOR = re.compile(r"\s+[|·•»›/]\s+")
_BIBLIOGRAPHY = re.compile(
    r"""\bRetrieved\s+(?:on\s+)?(?:\d|[A-Z][a-z]+\s+\d)|\bArchived\s+from\s+the\s+original
    |\b(?:doi|DOI):\s*10\.|\bISBN(?:-1[03])?:?\s*[\dX-]{9}|\bISSN\s+\d{4}-|\barXiv:\d{4}\.
    |\b[Aa]ccessed\s+(?:on\s+)?\d""", re.VERBOSE)
_CITED_WORK = re.compile(  # Surname, A. B. (1998). ... / "Title". Publisher.
    r"""^(?:[A-Z][\w'’-]+,\s(?:[A-Z][\w'’-]*\.?\s?){1,3}.{0,120}\(\d{4}[a-z]?\)
    |["“][^"”]{3,200}[.,]?["”][.,]\s+\S)""", re.VERBOSE)
_TITLE_SPLIT = re.compile(r"\s+[-|–—:·]\s+")
_LOOSE = re.compile(r"[\W_]+")


def passage_roles(text: str, passages: Sequence[Passage], title: str | None = None,
                  ) -> list[str]:
    """For each passage: ``title`` (it is the page's title, or a part of it between
    separators), ``furniture`` (on a navigation, bare-URL or bibliography line) or
    ``body``. Headings and labels are body that ranks at half weight (:func:`rank`):
    on WiCE a short line is often the evidence itself."""
    roles = _Roles(title)
    return [roles.of(text, passage) for passage in passages]


class _Roles:
    """Roles of passages (:func:`passage_roles`), each line judged once."""

    def __init__(self, title: str | None) -> None:
        self.titles = _title_forms(title)
        self.lines: dict[tuple[int, int], str] = {}

    def of(self, text: str, passage: Passage) -> str:
        line_start = text.rfind("\n", 0, passage.start) + 1
        key = (id(text), line_start)
        role = self.lines.get(key)
        if role is None:
            line_end = text.find("\n", passage.start)
            role = self.lines[key] = _line_role(
                text[line_start : line_end if line_end != -1 else len(text)])
        if self.titles and _LOOSE.sub(" ", text[passage.start : passage.end]).strip() \
                .casefold() in self.titles:
            role = TITLE
        return role


def _title_forms(title: str | None) -> frozenset[str]:
    if not title:
        return frozenset()
    parts = [title, *_TITLE_SPLIT.split(title)]
    return frozenset(f for f in (_LOOSE.sub(" ", p).strip().casefold() for p in parts) if f)


# A word each of _BIBLIOGRAPHY's alternatives holds, and the characters a navigation
# separator is made of: a line without any is spared the search (it cannot match).
_BIBLIOGRAPHY_WORDS = ("Retrieved", "Archived", "doi:", "DOI:", "ISBN", "ISSN", "arXiv:",
                       "ccessed")
_NAV_MARK = re.compile(r"[|·•»›/]")


def _line_role(line: str) -> str:
    if _URL_LINE.match(line.strip()) or (
            any(word in line for word in _BIBLIOGRAPHY_WORDS) and _BIBLIOGRAPHY.search(line)
            ) or _CITED_WORK.match(line.lstrip("-•*0123456789.) ")):
        return FURNITURE
    parts = _NAV_SEPARATOR.split(line) if _NAV_MARK.search(line) else [line]
    if len(parts) >= 3 and all(len(p.split()) <= 3 and not any(c.isdigit() for c in p)
                               for p in parts) and not line.rstrip().endswith((".", "!", "?")):
        return FURNITURE
    return BODY


# --- quotes -----------------------------------------------------------------

_TERMINATORS = ".!?…。！？:;"
_CLOSERS = "\"'”’»)]」』）"


def _starts_sentence(text: str, pos: int) -> bool:
    i = pos
    while i > 0 and text[i - 1] in " \t":
        i -= 1
    if i == 0 or text[i - 1] == "\n":
        return True
    line_start = text.rfind("\n", 0, i) + 1
    if _BULLET_BEFORE.fullmatch(text, line_start, pos):
        return True  # the first words of a list item
    return _after_terminator(text, i)


def _ends_sentence(text: str, pos: int) -> bool:
    if pos >= len(text) or text[pos] == "\n":
        return True
    return _after_terminator(text, pos)


_TRAILING_MARKS = re.compile(rf"(?:{_MARK}|(?<=[^\W\d_][.!?])\d{{1,3}})+$")


# The characters a footnote mark can end with (``]``, a superscript digit; a decimal
# digit is told by ``str.isdecimal``, as ``\d`` is), and ``\n``, before which ``$``
# also matches: a ``_TRAILING_MARKS`` match ending at ``i`` needs one at ``i - 1``.
_MARK_ENDS = frozenset("]\n¹²³⁰⁴⁵⁶⁷⁸⁹")


def _after_terminator(text: str, i: int) -> bool:
    """Does ``text[:i]`` end with a terminator, then closers and footnote marks?"""
    while True:
        # The search tries every start in its window (40 tries, most of a quote's
        # cut); it runs only where a mark can end (a sentence's own end: never).
        last = text[i - 1] if i > 0 else ""
        if last and (last in _MARK_ENDS or last.isdecimal()):
            marks = _TRAILING_MARKS.search(text, max(0, i - 40), i)
            if marks is not None and marks.start() < i:
                i = marks.start()
                continue
        if i > 0 and text[i - 1] in _CLOSERS:
            i -= 1
            continue
        return i > 0 and text[i - 1] in _TERMINATORS


def cut_quote(
    text: str, passage: Passage, terms: Sequence[str] = (), max_chars: int = MAX_QUOTE
) -> QuoteSpan:
    """The quote for a passage: the passage itself when short enough, else the
    window of whole words (at most ``max_chars``) holding most query terms."""
    start, end = passage.start, passage.end
    if end - start > max_chars:
        start, end = _best_window(text, start, end, set(terms), max_chars)
    line = display_line(text, start, end)
    # A cut inside the passage is marked even where it meets a terminator that did not
    # end the sentence ("e.g. the"): every quote is a whole passage or a marked cut.
    if start > passage.start and not line.startswith(ELLIPSIS):
        line = ELLIPSIS + line
    if end < passage.end and not line.endswith(ELLIPSIS):
        line += ELLIPSIS
    return QuoteSpan(start, end, passage.page, passage.label, line)


def display_line(text: str, start: int, end: int) -> str:
    """``text[start:end]`` with ``…`` on each side where it does not begin or end
    a sentence (or a line) of the stored text."""
    left = "" if _starts_sentence(text, start) else ELLIPSIS
    right = "" if _ends_sentence(text, end) else ELLIPSIS
    return f"{left}{text[start:end]}{right}"


def _best_window(
    text: str, start: int, end: int, terms: set[str], max_chars: int
) -> tuple[int, int]:
    """Whole words of ``text[start:end]`` spanning at most ``max_chars``, holding the
    most query terms (the earliest such window; the first one without terms)."""
    words = [(m.start(), m.end()) for m in _WORD.finditer(text, start, end)]
    hits = [1 if terms and terms.intersection(tokenize(text[a:b])) else 0 for a, b in words]
    best: tuple[int, int, int] | None = None
    j = total = 0
    for i in range(len(words)):
        if j < i:
            j, total = i, 0
        while j < len(words) and words[j][1] - words[i][0] <= max_chars:
            total += hits[j]
            j += 1
        if j > i:
            if best is None or total > best[0]:
                best = (total, i, j - 1)
            total -= hits[i]
        if best is not None and not terms:
            break
    if best is None:  # not one word fits: a hard cut at the start
        return start, start + max_chars
    _, first, last = best
    if best[0]:  # shrink to the hits, then grow evenly so they sit mid-window
        hit_words = [i for i in range(first, last + 1) if hits[i]]
        first, last = hit_words[0], hit_words[-1]
        grew = True
        while grew:
            grew = False
            if first > 0 and words[last][1] - words[first - 1][0] <= max_chars:
                first, grew = first - 1, True
            if last + 1 < len(words) and words[last + 1][1] - words[first][0] <= max_chars:
                last, grew = last + 1, True
    return words[first][0], words[last][1]


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
    chosen: list[QuoteSpan] = []
    seen: set[str] = set()
    for index in order or _leading(text, passages, title):
        span = cut_quote(text, passages[index], terms, max_chars)
        key = text[span.start : span.end]
        if key in seen:
            continue
        seen.add(key)
        chosen.append(span)
        if len(chosen) == k:
            break
    return chosen


def _leading(text: str, passages: Sequence[Passage], title: str | None) -> Iterator[int]:
    """The passages handed out without a query, in order: those of substance on the
    page's body (:func:`passage_roles`), then the rest but bare punctuation such as
    ``{`` or ``],``. Lazily: a retrieval takes the first few, and judging every
    passage of a long text for them was most of its quotes' time."""
    roles = _Roles(title)
    taken: set[int] = set()
    for i, p in enumerate(passages):
        if roles.of(text, p) == BODY and _is_substantial(text, p):
            taken.add(i)
            yield i
    yield from (i for i, p in enumerate(passages)
                if i not in taken and _TOKEN.search(text, p.start, p.end))


def _is_substantial(text: str, passage: Passage) -> bool:
    """A sentence rather than a heading, label or menu: it ends like a sentence
    and has four words or more, or it is long."""
    words = len(_TOKEN.findall(text[passage.start : passage.end]))
    return words >= 12 or (words >= 4 and _ends_sentence(text, passage.end)
                           and text[passage.end - 1] in _TERMINATORS + _CLOSERS)


# --- headings: the landmarks of a reading --------------------------------------------

_HEADING_ENDS = ".,;:!…。！"  # a line ending so is a sentence or a label, not a heading
_TABLE_CELLS = re.compile(r"\t| \| ")
_RUNNING = 3  # a line repeated this often is a running header or footer


def heading_flags(text: str, passages: Sequence[Passage]) -> list[bool]:
    """For each passage: is it a heading? Stored text keeps no heading marks, so a
    heading is what one looks like — a whole line of its own, of one to twelve words
    that start capitalized (or with a section number), not ending like a sentence or
    a label (a question may be one), on no navigation, bibliography or table line —
    and not a line repeated three times or more (a PDF's running header, a "Reply"
    button): those mark no place."""
    roles = _Roles(None)
    flags = [_looks_like_heading(text, p, roles) for p in passages]
    seen = Counter(text[p.start : p.end] for p, flag in zip(passages, flags, strict=True)
                   if flag)
    return [flag and seen[text[p.start : p.end]] < _RUNNING
            for p, flag in zip(passages, flags, strict=True)]


def _looks_like_heading(text: str, passage: Passage, roles: _Roles) -> bool:
    start, end = passage.start, passage.end
    if (start and text[start - 1] != "\n") or (end < len(text) and text[end] != "\n"):
        return False  # a sentence of a paragraph, a list item after its bullet
    body = text[start:end]
    words = _TOKEN.findall(body)
    if not 1 <= len(words) <= 12 or body[-1] in _HEADING_ENDS or _TABLE_CELLS.search(body):
        return False
    first = next((ch for ch in body if ch.isalpha()), "")
    return bool(first) and not first.islower() and roles.of(text, passage) == BODY
