"""A draft read for its citations: sentences, the ids each cites, and its quotations.

Shared by ``render`` and ``check``: both read the draft the same way, so a
marker ``render`` lists is exactly a marker ``check`` verifies. A ``>``
blockquote paragraph is a quotation of its own, attributed to the citation
that follows the blockquote (DESIGN §7).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .markdown import Draft, Marker, Paragraph, blockquote_citation, scan
from .sentences import quote_spans, split_sentences

__all__ = ["Citations", "Quotation", "Sentence", "read_citations"]


@dataclass(frozen=True)
class Quotation:
    """A quoted string of a sentence and the ledger ids it is attributed to."""

    text: str  # the words between the quotation marks
    start: int  # draft offset of the opening quotation mark (a blockquote: its first word)
    ids: tuple[int, ...]
    blockquote: bool = False


@dataclass
class Sentence:
    """One sentence of a paragraph's prose, with the markers that cite it."""

    paragraph: Paragraph
    start: int  # prose offsets
    end: int
    markers: list[tuple[int, int, Marker]]
    ids: tuple[int, ...]  # ledger ids, in order of first appearance
    quotations: list[Quotation] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.paragraph.prose[self.start : self.end]

    @property
    def claim(self) -> str:
        """The sentence with its markers blanked out: what it says."""
        chars = list(self.text)
        for start, end, _ in self.markers:
            for i in range(start, end):
                chars[i - self.start] = " "
        return "".join(chars)

    @property
    def offset(self) -> int:
        """Draft offset of the sentence's first character."""
        return self.paragraph.origin[self.start]

    def words(self) -> int:
        return len([w for w in self.text.split() if any(c.isalnum() for c in w)])


@dataclass
class Citations:
    draft: Draft
    sentences: list[Sentence]

    def ledger_id(self, shown: int) -> int:
        """The ledger id a marker number stands for (renumbered drafts carry a map)."""
        return self.draft.renumbered.get(shown, shown)

    def cited_ids(self) -> list[int]:
        """Ledger ids in order of first appearance in the prose."""
        seen: dict[int, None] = {}
        for marker in self.draft.markers:
            for shown in marker.ids:
                seen.setdefault(self.ledger_id(shown), None)
        return list(seen)


def read_citations(text: str) -> Citations:
    draft = scan(text)
    citations = Citations(draft, [])
    for index, paragraph in enumerate(draft.paragraphs):
        sentences = _sentences(citations, paragraph)
        if paragraph.blockquote is not None and sentences:
            quotation = _blockquote_quotation(citations, index)
            if quotation is not None:
                sentences[0].quotations.insert(0, quotation)
        citations.sentences.extend(sentences)
    return citations


def _blockquote_quotation(citations: Citations, index: int) -> Quotation | None:
    """A blockquote paragraph as one quotation: its words without the attribution."""
    paragraph = citations.draft.paragraphs[index]
    prose = paragraph.prose
    end = paragraph.attribution[0] if paragraph.attribution else len(prose)
    words = prose[:end].rstrip(" \t\u2014\u2013\u2015-")
    start = len(words) - len(words.lstrip())
    if not words.strip():
        return None
    cited = blockquote_citation(citations.draft.paragraphs, index)
    ids = tuple(dict.fromkeys(citations.ledger_id(n) for _, _, m in cited for n in m.ids))
    return Quotation(words.strip(), paragraph.origin[start], ids, blockquote=True)


def _sentences(citations: Citations, paragraph: Paragraph) -> list[Sentence]:
    prose = paragraph.prose
    quotes = quote_spans(prose)
    spans = split_sentences(prose, [(a, b) for a, b, _ in paragraph.markers], quotes)
    sentences: list[Sentence] = []
    for start, end in spans:
        markers = [m for m in paragraph.markers if start <= m[0] < end]
        ids = tuple(dict.fromkeys(citations.ledger_id(n) for _, _, m in markers for n in m.ids))
        sentence = Sentence(paragraph, start, end, markers, ids)
        for open_at, close_at in quotes:
            if start <= open_at < end:
                attributed = _attribution(markers, open_at, close_at)
                sentence.quotations.append(Quotation(
                    prose[open_at + 1 : close_at], paragraph.origin[open_at],
                    tuple(dict.fromkeys(citations.ledger_id(n) for n in attributed))))
        sentences.append(sentence)
    return sentences


def _attribution(
    markers: list[tuple[int, int, Marker]], open_at: int, close_at: int
) -> tuple[int, ...]:
    """The marker group right after a quotation in its sentence, else the one before it.
    A group is a run of adjacent markers (``[1][2]``)."""
    after = [m for m in markers if m[0] > close_at]
    before = [m for m in markers if m[1] <= open_at]
    if after:
        group = [after[0]]
        for marker in after[1:]:
            if marker[0] - group[-1][1] <= 1:
                group.append(marker)
    elif before:
        group = [before[-1]]
        for marker in reversed(before[:-1]):
            if group[0][0] - marker[1] <= 1:
                group.insert(0, marker)
    else:
        return ()
    return tuple(n for _, _, marker in group for n in marker.ids)
