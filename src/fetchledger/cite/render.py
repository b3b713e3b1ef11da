"""``render``: the Sources block of exactly the ids a draft cites, from the ledger.

The block sits between ``<!-- fetchledger:sources -->`` and
``<!-- /fetchledger:sources -->``; rendering again replaces only it, so an
author's own sections are never touched and rendering twice changes nothing.
Every title, locator and date in it comes from the ledger. ``render`` reads
the ledger only: it never fetches and never registers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..errors import InvalidArgument, UnknownSource
from ..models import Source, json_text, page_suffix
from ..text.normalize import printable
from ..text.passages import display_line
from .bibliography import bibtex_entry, csl_item
from .citations import Citations, read_citations
from .entries import Entry, entry_parts, escape_markdown, pages_text
from .evidence import SourceView, supports
from .markdown import BLOCK_END, BLOCK_START

if TYPE_CHECKING:
    from ..ledger import Ledger

__all__ = ["DOCUMENT_STYLES", "STYLES", "Rendered", "check_known", "render", "render_citations"]

STYLES = ("markdown", "plain", "footnotes", "bibtex", "csl-json", "evidence")
DOCUMENT_STYLES = ("markdown", "plain", "footnotes", "evidence")
_HEADINGS = {"markdown": "## Sources", "plain": "Sources", "evidence": "## Sources"}


@dataclass(frozen=True)
class Rendered:
    """The draft with its Sources block (``text``), and the block alone (``block``) as
    ``render`` prints it without ``--in-place``. ``numbers`` maps each number shown
    in the draft to its ledger id."""

    text: str
    block: str
    sources: tuple[Source, ...]  # the cited sources, in the block's order
    numbers: dict[int, int]
    style: str
    original: str

    @property
    def ids(self) -> tuple[int, ...]:
        return tuple(source.id for source in self.sources)

    @property
    def changed(self) -> bool:
        """Does the rendered draft differ from the draft as given?"""
        return self.text != self.original

    def to_json(self, *, with_text: bool = True) -> dict[str, Any]:
        """The style, whether the draft changed, the numbers shown (as strings) and their
        ids, the cited sources and the block; with ``with_text`` the rendered draft too."""
        data: dict[str, Any] = {
            "style": self.style, "changed": self.changed,
            "numbers": {str(k): v for k, v in self.numbers.items()},
            "sources": [source.to_json() for source in self.sources], "block": self.block,
        }
        if with_text:
            data["text"] = self.text
        return data


def render(
    ledger: Ledger,
    text: str,
    *,
    style: str = "markdown",
    renumber: bool = False,
    text_fragments: bool = False,
) -> Rendered:
    """Render the Sources block of ``text``. Raises UnknownSource (exit 2) when the
    draft cites an id the ledger does not have, and InvalidArgument for a bad style
    or a broken block; nothing is written either way (this only computes)."""
    crlf = "\r\n" in text
    rendered = render_citations(SourceView(ledger), read_citations(text.replace("\r\n", "\n")),
                                style=style, renumber=renumber, text_fragments=text_fragments)
    if not crlf:
        return rendered
    return replace(rendered, text=rendered.text.replace("\n", "\r\n"), original=text)


def render_citations(
    view: SourceView,
    citations: Citations,
    *,
    style: str = "markdown",
    renumber: bool = False,
    text_fragments: bool = False,
) -> Rendered:
    if style not in STYLES:
        raise InvalidArgument(f"unknown style {style!r}", hint="one of: " + ", ".join(STYLES))
    draft = citations.draft
    _check_block(citations)
    ids = citations.cited_ids()
    check_known(view, citations, ids)
    shown = {source_id: number for number, source_id in enumerate(ids, start=1)} if renumber \
        else {source_id: source_id for source_id in ids}
    if style == "footnotes":
        _check_footnote_labels(citations, shown)
    found = supports(view, citations)
    entries = [Entry(shown[source_id], source, tuple(found.get(source_id, ())), text_fragments)
               for source_id in ids if (source := view.source(source_id)) is not None]
    entries.sort(key=lambda e: e.number)
    numbers = {number: source_id for source_id, number in shown.items()}
    body = _body(view, entries, style)
    text = draft.text
    if style in DOCUMENT_STYLES:
        edits = _marker_edits(citations, shown, footnotes=style == "footnotes")
        block = _block(entries, body, style, numbers)
        if draft.block is not None:
            end = draft.block.end
            assert end is not None
            edits.append((draft.block.start, end, block))
        elif entries:
            _check_closed(citations)
            separator = "" if text.endswith("\n\n") or not text else \
                ("\n" if text.endswith("\n") else "\n\n")
            edits.append((len(text), len(text), separator + block))
        for start, end, new in sorted(edits, reverse=True):
            text = text[:start] + new + text[end:]
    stdout = "\n\n".join(body) if style in ("bibtex", "evidence") else "\n".join(body)
    return Rendered(text, stdout, tuple(e.source for e in entries), numbers, style, draft.text)


def _check_block(citations: Citations) -> None:
    blocks = citations.draft.blocks
    if len(blocks) > 1:
        lines = ", ".join(str(citations.draft.position(b.start)[0]) for b in blocks)
        raise InvalidArgument(
            f"the draft holds {len(blocks)} fetchledger Sources blocks (lines {lines})",
            hint="delete all but one; render replaces the one that is left")
    if blocks and blocks[0].end is None:
        line = citations.draft.position(blocks[0].start)[0]
        raise InvalidArgument(
            f"the Sources block that starts on line {line} has no end marker {BLOCK_END}",
            hint="restore the end marker line, or delete the block and render again")


def _check_closed(citations: Citations) -> None:
    """A block appended after an unclosed code fence or comment would be swallowed."""
    unclosed = citations.draft.unclosed
    if unclosed is not None:
        line = citations.draft.position(unclosed)[0]
        raise InvalidArgument(
            f"the draft ends inside a code block or HTML comment opened on line {line}",
            hint="close it, so that the Sources block can follow it")


def check_known(view: SourceView, citations: Citations, ids: list[int]) -> None:
    """UnknownSource (exit 2) naming where the draft cites each id the ledger lacks."""
    unknown = [source_id for source_id in ids if view.source(source_id) is None]
    if not unknown:
        return
    where = []
    for source_id in unknown:
        marker = next(m for m in citations.draft.markers
                      if source_id in (citations.ledger_id(n) for n in m.ids))
        line, column = citations.draft.position(marker.start)
        where.append(f"[{source_id}] (line {line}, column {column})")
    error = UnknownSource(unknown[0])
    error.message = ("the draft cites " + ", ".join(where) + ", which this ledger does not have;"
                     " nothing was written")
    error.args = (error.message,)
    raise error


def _check_footnote_labels(citations: Citations, shown: dict[int, int]) -> None:
    defined = citations.draft.footnote_labels
    clash = sorted(n for n in shown.values() if str(n) in defined)
    if clash:
        raise InvalidArgument(
            "footnotes style would write [^" + "], [^".join(map(str, clash)) +
            "], which the draft already defines as its own footnotes",
            hint="rename those footnotes of yours, or use another style")


def _marker_edits(citations: Citations, shown: dict[int, int], *,
                  footnotes: bool) -> list[tuple[int, int, str]]:
    """Rewrite markers whose form or number changes (renumbering, footnotes style,
    or a renumbered draft rendered back to ledger ids)."""
    edits: list[tuple[int, int, str]] = []
    draft = citations.draft
    for marker in draft.markers:
        numbers = [shown[citations.ledger_id(n)] for n in marker.ids]
        same_numbers = numbers == list(marker.ids)
        if marker.grouped and same_numbers and not footnotes:
            continue  # kept as written: check warns about it
        # `[^3][ref]` as `[3][ref]` (or `[3](x)`) would read as link text, no longer a
        # citation: a footnote-form marker right before `[` or `(` keeps its form.
        before_link = draft.text[marker.end : marker.end + 1] in ("[", "(")
        template = "[^{}]" if footnotes or (marker.footnote and before_link) else "[{}]"
        new = "".join(template.format(n) for n in numbers)
        if new != draft.text[marker.start : marker.end]:
            edits.append((marker.start, marker.end, new))
    return edits


def _body(view: SourceView, entries: list[Entry], style: str) -> list[str]:
    if style == "csl-json":
        items = [csl_item(e.source, key=f"fetchledger-{e.number}",
                          pages=pages_text(e.pages()).partition(" ")[2] or None, url=e.url())
                 for e in entries]
        return [json_text(items)] if entries else []
    if style == "bibtex":
        return [bibtex_entry(e.source, key=f"fetchledger-{e.number}",
                             pages=pages_text(e.pages()).partition(" ")[2] or None, url=e.url())
                for e in entries]
    if style == "footnotes":
        return [f"[^{e.number}]: " + " — ".join(entry_parts(e, markdown=True)) for e in entries]
    markdown = style != "plain"
    lines = [f"[{e.number}] " + " — ".join(entry_parts(e, markdown=markdown)) for e in entries]
    if style != "evidence":
        return lines
    return [line + "\n" + "\n".join(_evidence_lines(view, entry))
            for line, entry in zip(lines, entries, strict=True)]


def _evidence_lines(view: SourceView, entry: Entry) -> list[str]:
    """The quotes of one source: those the draft draws on first (with their lines),
    then the rest that were handed out."""
    ordered = sorted(entry.supports, key=lambda s: (not s.lines, min(s.lines, default=0)))
    if not ordered:
        return ["- no quote of this source was handed out or quoted in the draft"]
    lines = []
    for support in ordered:
        quote = support.quote
        text = view.texts(quote.source_id)[quote.version]
        shown = escape_markdown(printable(display_line(text, quote.start, quote.end)))
        # the page label is the source's too: escaped like its words
        line = f'- "{shown}"{escape_markdown(page_suffix(quote.page, quote.page_label))}'
        if support.lines:
            numbers = ", ".join(str(n) for n in sorted(support.lines))
            line += f" — cited at line{'s' if len(support.lines) > 1 else ''} {numbers}"
        if not support.handed_out:
            line += " (quoted in the draft, verbatim in the source)"
        lines.append(line)
    return lines


def _block(entries: list[Entry], body: list[str], style: str, numbers: dict[int, int]) -> str:
    lines = [BLOCK_START]
    renumbered = {n: i for n, i in numbers.items() if n != i}
    if renumbered:
        pairs = " ".join(f"{n}={i}" for n, i in sorted(numbers.items()))
        lines.append(f"<!-- fetchledger:renumbered {pairs} -->")
    if entries:
        heading = _HEADINGS.get(style)
        if heading:
            lines.extend([heading, ""])
        separator = "" if style in ("plain", "footnotes") else "\n"
        lines.append(("\n" + separator).join(body))
    lines.append(BLOCK_END)
    return "\n".join(lines) + "\n"
