"""``check``: prove a draft's citations against the ledger.

Every finding has a line, a column, a severity, a rule name and a fix hint.
Errors: ``unknown-id``, ``quote-not-verbatim``, ``url-in-prose``,
``missing-from-sources``. Warnings: ``marker-in-quotation``, ``marker-placement``,
``grouped-ids``, ``too-many-ids``, ``figure-drift``, ``quote-drifted`` (verbatim
only in an older version of the source: it changed since it was quoted),
``coverage``, ``sources-missing``, ``sources-stale``, ``sources-uncited``.
``check`` only reads the ledger.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import BadInput
from ..hints import Front, Hint, phrased
from ..models import Quote
from ..text.normalize import printable
from .citations import Citations, Quotation, Sentence, read_citations
from .evidence import SourceView, find_quotation, holds_verbatim, quotation_fragments
from .figures import figures_in
from .markdown import Marker, Paragraph
from .render import render_citations

if TYPE_CHECKING:
    from ..ledger import Ledger

__all__ = ["RULES", "CheckReport", "Problem", "check"]

ERROR, WARNING = "error", "warning"
RULES: dict[str, str] = {
    "unknown-id": ERROR,
    "quote-not-verbatim": ERROR,
    "url-in-prose": ERROR,
    "missing-from-sources": ERROR,
    "marker-in-quotation": WARNING,
    "marker-placement": WARNING,
    "grouped-ids": WARNING,
    "too-many-ids": WARNING,
    "figure-drift": WARNING,
    "quote-drifted": WARNING,
    "coverage": WARNING,
    "sources-missing": WARNING,
    "sources-stale": WARNING,
    "sources-uncited": WARNING,
}
MAX_IDS_PER_SENTENCE = 3
MIN_COVERAGE_WORDS = 4
_PUNCTUATION = ".,;:!?"
_TERMINATORS = ".!?…"
# Words after which a marker is the object of the sentence ("see [1].") and may
# stand before the punctuation.
_NOUN_CONTEXT = frozenset(
    """in see from by to of and or cf cf. also per at with as source sources reference
    references ref refs e.g. i.e. vgl. siehe und oder""".split())
_ENTRY = re.compile(r"^\[(\d+)\] |^\[\^(\d+)\]: ")
# Markers that end a quotation ("…at 100 °C.[3]"): most likely a misplaced citation.
_TRAILING_MARKERS = re.compile(r"\s*((?:\[\^?\d+\])+)\s*$")
_RENDER_HINT = Hint("{render} to rewrite the Sources block")


@dataclass(frozen=True)
class Problem:
    """One finding. ``ids`` are the ledger ids it concerns."""

    line: int
    column: int
    rule: str
    message: str
    ids: tuple[int, ...] = ()
    hint: str | None = None

    @property
    def severity(self) -> str:
        return RULES[self.rule]

    def to_json(self, front: Front = "cli") -> dict[str, Any]:
        return {"line": self.line, "column": self.column, "severity": self.severity,
                "rule": self.rule, "message": self.message, "ids": list(self.ids),
                "hint": phrased(self.hint, front)}

    def text_lines(self, name: str, front: Front = "cli") -> list[str]:
        """The finding as printed (a message may quote a source: shown by the display
        function); the hint as ``front`` says it."""
        lines = [f"{name}:{self.line}:{self.column}: {self.severity}: {self.message} "
                 f"[{self.rule}]"]
        hint = phrased(self.hint, front)
        if hint:
            lines.append(f"    hint: {hint}")
        return [printable(line) for line in lines]


@dataclass(frozen=True)
class CheckReport:
    """The findings of one check, in draft order."""

    problems: tuple[Problem, ...]
    cited: tuple[int, ...]  # ledger ids the draft cites, by first appearance
    strict: bool = False

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == ERROR]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == WARNING]

    @property
    def ok(self) -> bool:
        """No error (and, under ``strict``, no finding at all)."""
        return not (self.problems if self.strict else self.errors)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def to_json(self, front: Front = "cli") -> dict[str, Any]:
        return {"ok": self.ok, "problems": [p.to_json(front) for p in self.problems]}

    def summary(self, name: str) -> str:
        errors, warnings = len(self.errors), len(self.warnings)
        if not self.problems:
            return (f"{name}: ok — {len(self.cited)} cited source"
                    f"{'' if len(self.cited) == 1 else 's'} checked")
        return (f"{name}: {errors} error{'' if errors == 1 else 's'}, "
                f"{warnings} warning{'' if warnings == 1 else 's'}")


def check(ledger: Ledger, text: str, *, allow_links: bool = False,
          strict: bool = False) -> CheckReport:
    """Check a draft's citations against ``ledger`` (which is only read)."""
    citations = read_citations(text.replace("\r\n", "\n"))
    view = SourceView(ledger)
    checker = _Checker(view, citations, allow_links=allow_links)
    problems = sorted(checker.run(), key=lambda p: (p.line, p.column, p.rule))
    return CheckReport(tuple(problems), tuple(citations.cited_ids()), strict)


class _Checker:
    def __init__(self, view: SourceView, citations: Citations, *, allow_links: bool) -> None:
        self.view = view
        self.citations = citations
        self.draft = citations.draft
        self.allow_links = allow_links
        self.by_paragraph: dict[int, list[Sentence]] = {}
        for sentence in citations.sentences:
            self.by_paragraph.setdefault(id(sentence.paragraph), []).append(sentence)

    def problem(self, offset: int, rule: str, message: str, ids: tuple[int, ...] = (),
                hint: str | None = None) -> Problem:
        line, column = self.draft.position(offset)
        return Problem(line, column, rule, message, ids, hint)

    def known(self, source_id: int) -> bool:
        return self.view.source(source_id) is not None

    def shown(self, source_id: int) -> str:
        """How the draft shows a ledger id (``[2]``, or ``[2] (ledger id 7)``)."""
        for number, ledger_id in self.draft.renumbered.items():
            if ledger_id == source_id and number != source_id:
                return f"[{number}] (ledger id {source_id})"
        return f"[{source_id}]"

    def run(self) -> Iterator[Problem]:
        yield from self.urls()
        yield from self.markers()
        for paragraph in self.draft.paragraphs:
            yield from self.placement(paragraph)
        for sentence in self.citations.sentences:
            yield from self.sentence(sentence)
        yield from self.coverage()
        yield from self.sources_block()

    # --- rules -------------------------------------------------------------------------

    def urls(self) -> Iterator[Problem]:
        known = {s.locator.rstrip("/"): s.id for s in self.view.ledger.sources()}
        for link in self.draft.links:
            if self.allow_links and link.kind in ("link", "definition", "html"):
                continue
            source_id = known.get(link.url.rstrip("/"))
            hint = (f"this is source [{source_id}] of the ledger: cite it as [{source_id}]"
                    if source_id else
                    "cite the source by its ledger id instead (fetch it first if it is not "
                    "in the ledger); render writes its URL")
            what = {"bare": "a URL", "autolink": "an autolink", "link": "a link target",
                    "definition": "a link definition", "html": "an HTML link"}[link.kind]
            yield self.problem(link.start, "url-in-prose", f"{what} typed in the draft: "
                               f"{link.url}", (source_id,) if source_id else (), hint)

    def markers(self) -> Iterator[Problem]:
        for marker in self.draft.markers:
            ids = tuple(self.citations.ledger_id(n) for n in marker.ids)
            for source_id in ids:
                if not self.known(source_id):
                    yield self.problem(
                        marker.start, "unknown-id", f"no source {self.shown(source_id)} in "
                        "this ledger", (source_id,),
                        Hint("cite only ids that {retrievals} handed out ({list} them)"))
            if marker.grouped:
                written = self.draft.text[marker.start : marker.end]
                fixed = "".join(f"[{n}]" for n in marker.ids)
                yield self.problem(marker.start, "grouped-ids",
                                   f"grouped ids {written}: one marker per id", ids,
                                   f"write {fixed}")

    def placement(self, paragraph: Paragraph) -> Iterator[Problem]:
        prose = paragraph.prose
        for run in _marker_runs(paragraph):
            first, last = run[0], run[-1]
            markers_text = prose[first[0] : last[1]]
            after = last[1]
            while after < len(prose) and prose[after] in " \t":
                after += 1
            before = first[0]
            while before > 0 and prose[before - 1] in " \t":
                before -= 1
            ids = tuple(self.citations.ledger_id(n) for _, _, m in run for n in m.ids)
            word = _word_before(prose, before)
            if after < len(prose) and prose[after] in _PUNCTUATION and before > 0 \
                    and prose[before - 1] not in _PUNCTUATION + _TERMINATORS \
                    and word.lower() not in _NOUN_CONTEXT \
                    and not (prose[after] == "." and prose[after + 1 : after + 2].isdigit()):
                yield self.problem(
                    paragraph.origin[first[0]], "marker-placement",
                    f"marker before the punctuation: {word} {markers_text}{prose[after]}",
                    ids, f"write {word}{prose[after]}{markers_text}")
            elif before < first[0] and before > 0 and prose[before - 1] in _TERMINATORS \
                    and self._ends_sentence(paragraph, first[0], last[1]):
                punctuation = prose[before - 1]
                yield self.problem(
                    paragraph.origin[first[0]], "marker-placement",
                    f"space between the punctuation and the marker: {word}{punctuation} "
                    f"{markers_text}", ids, f"write {word}{punctuation}{markers_text}")

    def _ends_sentence(self, paragraph: Paragraph, start: int, end: int) -> bool:
        for sentence in self.by_paragraph.get(id(paragraph), []):
            if sentence.start < start < sentence.end:
                return sentence.end == end
        return False

    def sentence(self, sentence: Sentence) -> Iterator[Problem]:
        known = [i for i in sentence.ids if self.known(i)]
        if len(sentence.ids) > MAX_IDS_PER_SENTENCE:
            seen: list[int] = []
            for _, _, marker in sentence.markers:
                for n in marker.ids:
                    source_id = self.citations.ledger_id(n)
                    if source_id not in seen:
                        seen.append(source_id)
                if len(seen) > MAX_IDS_PER_SENTENCE:
                    yield self.problem(
                        marker.start, "too-many-ids",
                        f"{len(sentence.ids)} ids in one sentence: cite at most "
                        f"{MAX_IDS_PER_SENTENCE}", sentence.ids,
                        "split the sentence, or keep the sources that carry the claim")
                    break
        for quotation in sentence.quotations:
            yield from self.quotation(quotation)
        if known and sentence.paragraph.blockquote is None:
            yield from self.figures(sentence, tuple(known))

    def quotation(self, quotation: Quotation) -> Iterator[Problem]:
        text, offset = quotation.text, quotation.start
        ids = tuple(i for i in quotation.ids if self.known(i))
        if not quotation_fragments(text):
            return
        # The source's own "[3]" quoted with its words is fine; a trailing marker whose
        # source holds the words without it was meant as a citation.
        if _TRAILING_MARKERS.search(text) and any(
                holds_verbatim(self.view, source_id, text) for source_id in ids):
            return
        misplaced = self.misplaced_marker(quotation)
        if misplaced is not None:
            yield misplaced
            return
        if not ids:
            return
        found = [q for source_id in ids if (q := find_quotation(self.view, source_id, text))]
        if found:
            yield from self.drifted(text, offset, ids, found)
            return
        nearest = []
        for source_id in ids[:3]:
            passage = self.view.nearest(source_id, text)
            if passage:
                nearest.append(f'{self.shown(source_id)} "{passage}"')
        cited = ", ".join(self.shown(i) for i in ids)
        shown = " ".join(text.split())
        yield self.problem(
            offset, "quote-not-verbatim", f'the quotation "{shown}" is not verbatim in {cited}',
            ids, ("nearest passage: " + "; ".join(nearest)) if nearest else
            "quote the words exactly as the source has them")

    def drifted(self, text: str, offset: int, ids: tuple[int, ...],
                found: list[Quote]) -> Iterator[Problem]:
        """A quotation verbatim only in an older version of its source: the source has
        changed since (``refresh`` made a new version) and no longer says it."""
        stale = []
        for found_in in found:
            latest = self.view.source(found_in.source_id)
            if latest is None or found_in.version == latest.version:
                return  # verbatim in a source as it stands now
            stale.append((found_in, latest))
        quote, source = stale[0]
        shown = " ".join(text.split())
        yield self.problem(
            offset, "quote-drifted",
            f'the quotation "{shown}" is verbatim in version {quote.version} of '
            f"{self.shown(quote.source_id)}, not in its latest version {source.version} "
            f"(retrieved {source.retrieved_at})", ids,
            Hint("the source changed since it was quoted: {refresh} what drifted; quote "
                 "the current text, or say which version you cite"))

    def misplaced_marker(self, quotation: Quotation) -> Problem | None:
        """``marker-in-quotation`` when the quotation ends in markers and its words
        without them are verbatim in the sources those markers name."""
        match = _TRAILING_MARKERS.search(quotation.text)
        words = quotation.text[: match.start()] if match else ""
        if match is None or not quotation_fragments(words):
            return None
        numbers = [int(n) for n in re.findall(r"\d+", match.group(1))]
        ids = tuple(dict.fromkeys(self.citations.ledger_id(n) for n in numbers))
        if not ids or not all(self.known(i) for i in ids) or not any(
                find_quotation(self.view, source_id, words) for source_id in ids):
            return None
        written = match.group(1)
        where = "the blockquote" if quotation.blockquote else "the closing quotation mark"
        return self.problem(
            quotation.start, "marker-in-quotation",
            f"{written} stands inside the quotation, so it is part of the quoted words, "
            f"not a citation; the words without it are verbatim in {self.shown(ids[0])}",
            ids, f"move {written} after {where}")

    def figures(self, sentence: Sentence, ids: tuple[int, ...]) -> Iterator[Problem]:
        paragraph = sentence.paragraph
        masked = list(paragraph.prose[sentence.start : sentence.end])
        spans = [(a, b) for a, b, _ in sentence.markers]
        for quotation in sentence.quotations:
            open_at = paragraph.origin.index(quotation.start, sentence.start)
            spans.append((open_at, open_at + len(quotation.text) + 2))
        for a, b in spans:
            for i in range(max(a, sentence.start), min(b, sentence.end)):
                masked[i - sentence.start] = " "
        for figure in figures_in("".join(masked)):
            if any(self.view.figures(i).holds(figure) for i in ids):
                continue
            cited = ", ".join(self.shown(i) for i in ids)
            kind = "date" if figure.is_date else "figure"
            yield self.problem(
                paragraph.origin[sentence.start + figure.start], "figure-drift",
                f"the {kind} {figure.written} is in none of the sources this sentence cites "
                f"({cited})", ids,
                Hint("take figures from the quoted words: {quotes} the passage"))

    def coverage(self) -> Iterator[Problem]:
        for sentences in self.by_paragraph.values():
            paragraph = sentences[0].paragraph
            if paragraph.kind not in ("text", "item") or not paragraph.markers \
                    or paragraph.blockquote is not None:
                continue
            for sentence in sentences:
                if sentence.markers or sentence.words() < MIN_COVERAGE_WORDS \
                        or sentence.text.rstrip().endswith(":") \
                        or any(sentence.start <= n <= sentence.end for n in paragraph.notes):
                    continue
                yield self.problem(
                    sentence.offset, "coverage",
                    "a sentence without a citation in a paragraph that cites: "
                    f'"{_clip(sentence.text)}"', (),
                    "cite the source it rests on (marker after its punctuation), or move "
                    "your own reasoning to a paragraph of its own")

    def sources_block(self) -> Iterator[Problem]:
        draft = self.draft
        cited = [i for i in self.citations.cited_ids() if self.known(i)]
        block = draft.block
        if block is None:
            if cited:
                yield self.problem(len(draft.text.rstrip("\n")), "sources-missing",
                                   "the draft cites sources but has no Sources block",
                                   tuple(cited), _RENDER_HINT)
            return
        if len(draft.blocks) > 1 or block.end is None:
            problem = "several Sources blocks" if len(draft.blocks) > 1 else \
                "a Sources block without its end marker"
            yield self.problem(block.start, "sources-stale", f"the draft has {problem}", (),
                               "keep one complete block, then render again")
            return
        listed: dict[int, int] = {}
        offset = block.body_start
        for line in block.lines(draft.text):
            match = _ENTRY.match(line)
            if match:
                number = int(match.group(1) or match.group(2))
                listed.setdefault(self.citations.ledger_id(number), offset)
            offset += len(line) + 1
        missing = [i for i in cited if i not in listed]
        for source_id in missing:
            marker = self._first_marker(source_id)
            yield self.problem(marker.start if marker else block.start, "missing-from-sources",
                               f"{self.shown(source_id)} is cited but not in the Sources block",
                               (source_id,), _RENDER_HINT)
        uncited = [i for i in listed if i not in self.citations.cited_ids()]
        for source_id in uncited:
            yield self.problem(listed[source_id], "sources-uncited",
                               f"the Sources block lists {self.shown(source_id)}, which the "
                               "draft does not cite", (source_id,), _RENDER_HINT)
        if not missing and not uncited and self._stale():
            yield self.problem(block.start, "sources-stale",
                               "the Sources block differs from what the ledger says now "
                               "(titles, dates, pages or numbering)", tuple(cited),
                               _RENDER_HINT)

    def _first_marker(self, source_id: int) -> Marker | None:
        for marker in self.draft.markers:
            if source_id in (self.citations.ledger_id(n) for n in marker.ids):
                return marker
        return None

    def _stale(self) -> bool:
        """Would rendering again (in the block's own style and options) change it?"""
        draft = self.draft
        block = draft.block
        assert block is not None and block.end is not None
        body = draft.text[block.start : block.end]
        lines = block.lines(draft.text)
        if any(line.startswith("[^") for line in lines):
            style = "footnotes"
        elif any(line.startswith('- "') or line.startswith("- no quote") for line in lines):
            style = "evidence"
        elif "Sources" in lines:
            style = "plain"
        else:
            style = "markdown"
        renumber = any(n != i for n, i in draft.renumbered.items())
        try:
            rendered = render_citations(self.view, self.citations, style=style,
                                        renumber=renumber,
                                        text_fragments=":~:text=" in body)
        except BadInput:
            return False
        return rendered.text != draft.text


def _marker_runs(paragraph: Paragraph) -> list[list[tuple[int, int, Marker]]]:
    """Markers of a paragraph grouped into runs (glued or separated by spaces)."""
    runs: list[list[tuple[int, int, Marker]]] = []
    for item in paragraph.markers:
        if runs and not paragraph.prose[runs[-1][-1][1] : item[0]].strip(" \t"):
            runs[-1].append(item)
        else:
            runs.append([item])
    return runs


def _word_before(prose: str, end: int) -> str:
    start = end
    while start > 0 and not prose[start - 1].isspace():
        start -= 1
    return prose[start:end]


def _clip(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
