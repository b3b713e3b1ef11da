"""Where the prose of a markdown draft is: a small scanner for citation work.

It finds the citation markers (``[3]``, grouped ``[1, 2]``, and ``[^3]`` when
no footnote of the author's defines that label), the URLs typed in the draft,
the generated Sources block, and the paragraphs of prose with code spans and
link syntax taken out. Code blocks, code spans, HTML comments, markdown link
syntax, reference definitions and footnote definitions are not prose: markers
there are not citations. Nor is a ``[n]`` inside a quotation (``"…"``, ``“…”``,
a ``>`` blockquote): it is part of the quoted words, the source's own; only a
blockquote's attribution (a last line of markers, ``— [3]``, or the markers that
open the paragraph right after it) cites. Every character of a paragraph's prose keeps the
offset of the draft character it came from, for line and column numbers.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from .sentences import quote_spans

__all__ = [
    "BLOCK_END",
    "BLOCK_START",
    "PLACEHOLDER",
    "Draft",
    "Link",
    "Marker",
    "Paragraph",
    "SourcesBlock",
    "blockquote_citation",
    "scan",
]

BLOCK_START = "<!-- fetchledger:sources -->"
BLOCK_END = "<!-- /fetchledger:sources -->"
PLACEHOLDER = "\ufffc"  # stands in the prose for a code span, an autolink or a URL

_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
_LIST_ITEM = re.compile(r"^( {0,3})([-*+]|\d{1,9}[.)])(?=\s|$)\s*")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:\s+|$)")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
_THEMATIC = re.compile(r"^ {0,3}(?:(?:\*\s*){3,}|(?:-\s*){3,}|(?:_\s*){3,})$")
_TABLE_DELIMITER = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")
_QUOTE_PREFIX = re.compile(r"^(?: {0,3}> ?)+")
_REFERENCE_DEF = re.compile(r"^ {0,3}\[([^\]^][^\]]*)\]:[ \t]*(\S*)")
_FOOTNOTE_DEF = re.compile(r"^ {0,3}\[\^([^\]\s]+)\]:[ \t]?")
_RENUMBERED = re.compile(r"^<!-- fetchledger:renumbered ((?:\d+=\d+ ?)*)-->$")
_GROUP = re.compile(r"^\s*\d+(?:\s*[-–—,;]\s*\d+)+\s*$")
_SINGLE = re.compile(r"^\s*(\d+)\s*$")
_URL_SCHEMES = ("http://", "https://", "ftp://", "ftps://")
_BARE_URL = re.compile(r"(?:https?|ftps?)://[^\s<>\"'`]+|www\.[\w-]+(?:\.[\w-]+)+[^\s<>\"'`]*",
                       re.IGNORECASE)
_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*)>")
_EMAIL_AUTOLINK = re.compile(r"<[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)*>")
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_Q_TAG = re.compile(r"<(/?)q(?:\s[^<>]*)?>$", re.IGNORECASE)
# Where the inline scanner must look closer: escapes, code, angle brackets, brackets,
# and the start of a bare URL.
_SPECIAL = re.compile(r"[\\`<\[!]|(?<![\w/@.\-])(?:[hH][tT][tT][pP][sS]?|[fF][tT][pP][sS]?)://"
                      r"|(?<![\w/@.\-])[wW][wW][wW]\.")
_HTML_URL_ATTR = re.compile(r"""\b(?:href|src|action|cite)\s*=\s*["']?([^"'\s>]+)""",
                            re.IGNORECASE)


@dataclass(frozen=True)
class Marker:
    """One citation marker: ``[3]``, a grouped ``[1, 2]``/``[1-3]``, or ``[^3]``."""

    ids: tuple[int, ...]
    start: int  # offsets in the draft
    end: int
    grouped: bool = False
    footnote: bool = False


@dataclass(frozen=True)
class Link:
    """A URL typed in the draft. ``kind``: bare, autolink, link (markdown link or
    image target), definition (reference definition), html (an HTML attribute)."""

    url: str
    start: int
    end: int
    kind: str


@dataclass
class Paragraph:
    """One paragraph of prose (a heading, list item, table cell or block quote
    paragraph counts as its own). ``prose[i]`` came from draft offset ``origin[i]``."""

    kind: str  # text | heading | item | table
    prose: str
    origin: list[int]
    markers: list[tuple[int, int, Marker]] = field(default_factory=list)  # prose spans
    notes: list[int] = field(default_factory=list)  # prose offsets of the author's footnotes
    # Bracket numbers inside quotations: the quoted words, not citations.
    quoted_markers: list[tuple[int, int, Marker]] = field(default_factory=list)
    blockquote: int | None = None  # the blockquote it is part of (numbered in draft order)
    attribution: tuple[int, int] | None = None  # prose span of a blockquote's citing markers


@dataclass(frozen=True)
class SourcesBlock:
    """The generated block: ``text[start:end]`` from its first line to the end of its
    last line (with the newline after it, if any). ``end`` is None when unterminated."""

    start: int
    end: int | None
    body_start: int  # just after the start marker line

    def lines(self, text: str) -> list[str]:
        stop = self.end if self.end is not None else len(text)
        return text[self.body_start : stop].split("\n")


@dataclass
class Draft:
    """A scanned draft."""

    text: str
    paragraphs: list[Paragraph]
    markers: list[Marker]
    links: list[Link]
    blocks: list[SourcesBlock]
    renumbered: dict[int, int]  # display number -> ledger id, from the block
    line_starts: list[int]
    footnote_labels: set[str] = field(default_factory=set)  # the author's own footnotes
    unclosed: int | None = None  # offset of a code fence or comment still open at the end

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a draft offset (columns count code points)."""
        line = bisect.bisect_right(self.line_starts, offset) - 1
        return line + 1, offset - self.line_starts[line] + 1

    @property
    def block(self) -> SourcesBlock | None:
        return self.blocks[-1] if self.blocks else None


def _normalize_label(label: str) -> str:
    return " ".join(label.split()).casefold()


# --- blocks ---------------------------------------------------------------------------


@dataclass
class _Pending:
    kind: str
    segments: list[tuple[int, int]]
    blockquote: int | None = None


class _BlockScanner:
    """Line by line: fences, comments, the generated block, headings, lists, tables,
    definitions; collects each paragraph's content segments for the inline scanner."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.paragraphs: list[_Pending] = []
        self.footnotes: list[_Pending] = []
        self.reference_labels: set[str] = set()
        self.footnote_labels: set[str] = set()
        self.links: list[Link] = []
        self.blocks: list[SourcesBlock] = []
        self.renumbered: dict[int, int] = {}
        self.unclosed: int | None = None
        # state while scanning
        self.current: _Pending | None = None  # the open paragraph
        self.footnote: _Pending | None = None  # the open footnote definition
        self.fence: tuple[str, int] | None = None
        self.in_comment = False
        self.opened_at = 0  # where the open fence or comment started
        self.block_start: int | None = None
        self.block_body = 0
        self.in_list = False
        self.in_table = False
        self.previous_blank = True
        self.blockquote: int | None = None  # the blockquote the current line is in
        self.blockquotes = 0

    def run(self) -> None:
        offset = 0
        for index, line in enumerate(self.lines):
            self._line(index, line, offset, min(offset + len(line) + 1, len(self.text)))
            offset += len(line) + 1
        if self.block_start is not None:
            self.blocks.append(SourcesBlock(self.block_start, None, self.block_body))
        self.unclosed = self.opened_at if self.fence is not None or self.in_comment else None

    def _line(self, index: int, line: str, line_start: int, next_start: int) -> None:
        stripped = line.strip()
        if self.block_start is not None:  # inside the generated block
            if stripped == BLOCK_END:
                self.blocks.append(SourcesBlock(self.block_start, next_start, self.block_body))
                self.block_start = None
                self.previous_blank = True
            else:
                self._renumber_line(stripped)
            return
        if self.fence is not None:
            self._fenced(line)
            return
        if self.in_comment:
            self.in_comment = "-->" not in line
            return
        if stripped == BLOCK_START:
            self.current = self.footnote = None
            self.block_start, self.block_body = line_start, next_start
            return
        prefix = _QUOTE_PREFIX.match(line)
        content_at = prefix.end() if prefix else 0
        content = line[content_at:]
        lazy = prefix is None and self.current is not None and content.strip() \
            and self.current.blockquote is not None
        if prefix and self.blockquote is None:
            self.blockquotes += 1
            self.blockquote = self.blockquotes
            self.current = None  # a blockquote interrupts a paragraph
        elif not prefix and not lazy:
            self.blockquote = None
        if not content.strip():
            self.current = None
            self.previous_blank = True
            self.in_table = False
            if not prefix:
                self.blockquote = None
            return
        self.opened_at = line_start
        self._content(index, content, line_start + content_at, line_start + len(line))

    def _fenced(self, line: str) -> None:
        assert self.fence is not None
        match = _FENCE.match(_QUOTE_PREFIX.sub("", line))
        if match and match.group(2)[0] == self.fence[0] \
                and len(match.group(2)) >= self.fence[1] and not match.group(3).strip():
            self.fence = None

    def _content(self, index: int, content: str, start: int, line_end: int) -> None:
        """A non-blank line whose container prefix (``>``) starts before ``start``."""
        indent = len(content) - len(content.lstrip(" \t"))
        if indent == 0 and self.previous_blank and not _LIST_ITEM.match(content):
            self.in_list = False
        match = _FENCE.match(content)
        if match and (indent <= 3 or self.in_list):
            self.fence = (match.group(2)[0], len(match.group(2)))
            self.current = self.footnote = None
            return
        if content.lstrip().startswith("<!--") and "-->" not in content:
            self.in_comment = True
            self.current = None
            return
        starts_block = bool(_FOOTNOTE_DEF.match(content) or _REFERENCE_DEF.match(content)
                            or _ATX.match(content) or _LIST_ITEM.match(content))
        if self.footnote is not None and (
                indent >= 4 or (not self.previous_blank and not starts_block)):
            self.footnote.segments.append((start, line_end))
            self.previous_blank = False
            return
        self.footnote = None
        if indent >= 4 and self.current is None and not self.in_list and not self.in_table:
            self.previous_blank = False  # an indented code block
            return
        self.previous_blank = False
        if self.current is None and self._definition(content, start, line_end):
            return
        following = self.lines[index + 1] if index + 1 < len(self.lines) else ""
        self._structure(content, start, line_end, indent, following)

    def _definition(self, content: str, start: int, line_end: int) -> bool:
        """A footnote or reference definition (they cannot interrupt a paragraph)."""
        definition = _FOOTNOTE_DEF.match(content)
        if definition:
            self.footnote_labels.add(definition.group(1))
            self.footnote = _Pending("footnote", [(start + definition.end(), line_end)])
            self.footnotes.append(self.footnote)
            return True
        definition = _REFERENCE_DEF.match(content)
        if definition:
            self.reference_labels.add(_normalize_label(definition.group(1)))
            target = definition.group(2).strip("<>")
            if target.lower().startswith((*_URL_SCHEMES, "www.")):
                at = start + definition.start(2) + definition.group(2).find(target)
                self.links.append(Link(target, at, at + len(target), "definition"))
            return True
        return False

    def _structure(self, content: str, start: int, line_end: int, indent: int,
                   following: str) -> None:
        heading = _ATX.match(content)
        if heading:
            body = re.sub(r"\s+#+\s*$", "", content[heading.end():])
            begin = start + heading.end()
            self.paragraphs.append(_Pending("heading", [(begin, begin + len(body))],
                                            self.blockquote))
            self.current = None
            return
        if _SETEXT.match(content) and self.current is not None and self.current.kind == "text":
            self.current.kind = "heading"
            self.current = None
            return
        if _THEMATIC.match(content):
            self.current = None
            return
        if "|" in content and (self.in_table or (
                _TABLE_DELIMITER.match(following) and "|" in following)):
            self.in_table = True
            self.current = None
            if not _TABLE_DELIMITER.match(content):
                self._table_row(start, content)
            return
        item = _LIST_ITEM.match(content)
        if item:
            self.in_list = True
            begin = start + item.end()
            quoted = _QUOTE_PREFIX.match(content[item.end():])
            if quoted and self.blockquote is None:  # "- > words": a blockquote in the item
                self.blockquotes += 1
                self.blockquote = self.blockquotes
                begin += quoted.end()
            self.current = _Pending("item", [(begin, line_end)], self.blockquote)
            self.paragraphs.append(self.current)
            return
        segment = (start + indent, line_end)
        if self.current is None:
            self.current = _Pending("text", [segment], self.blockquote)
            self.paragraphs.append(self.current)
        else:
            self.current.segments.append(segment)

    def _renumber_line(self, stripped: str) -> None:
        match = _RENUMBERED.match(stripped)
        if match:
            for pair in match.group(1).split():
                shown, ledger_id = pair.split("=")
                self.renumbered[int(shown)] = int(ledger_id)

    def _table_row(self, start: int, row: str) -> None:
        """Each cell of a table row is a paragraph of its own."""
        cell_start = 0
        for match in re.finditer(r"(?<!\\)\||$", row):
            cell = row[cell_start : match.start()]
            lead = len(cell) - len(cell.lstrip())
            body = cell.strip()
            if body:
                begin = start + cell_start + lead
                self.paragraphs.append(_Pending("table", [(begin, begin + len(body))],
                                                self.blockquote))
            cell_start = match.end()


# --- inline ---------------------------------------------------------------------------


class _InlineScanner:
    """Turns a paragraph's segments into prose, markers and links."""

    def __init__(self, text: str, reference_labels: set[str], footnote_labels: set[str]) -> None:
        self.text = text
        self.reference_labels = reference_labels
        self.footnote_labels = footnote_labels

    def paragraph(self, pending: _Pending, links: list[Link]) -> Paragraph:
        raw_parts: list[str] = []
        origin: list[int] = []
        for number, (start, end) in enumerate(pending.segments):
            if number:
                raw_parts.append("\n")
                origin.append(start - 1)
            raw_parts.append(self.text[start:end])
            origin.extend(range(start, end))
        self.raw = "".join(raw_parts)
        self.raw_origin = origin
        self.out: list[str] = []
        self.out_origin: list[int] = []
        self.markers: list[tuple[int, int, Marker]] = []
        self.notes: list[int] = []
        self.links = links
        self._scan(0, len(self.raw), markers=True)
        prose = "".join(self.out).replace("\n", " ")
        return Paragraph(pending.kind, prose, self.out_origin, self.markers, self.notes,
                         blockquote=pending.blockquote)

    def _emit(self, chars: str, at: int) -> None:
        self.out.append(chars)
        self.out_origin.extend([self.raw_origin[at]] * len(chars))

    def _emit_range(self, start: int, end: int) -> None:
        self.out.append(self.raw[start:end])
        self.out_origin.extend(self.raw_origin[start:end])

    def _link(self, url: str, start: int, end: int, kind: str) -> None:
        self.links.append(Link(url, self.raw_origin[start], self.raw_origin[end - 1] + 1, kind))

    def _scan(self, start: int, end: int, *, markers: bool) -> None:
        raw = self.raw
        i = start
        while i < end:
            special = _SPECIAL.search(raw, i, end)
            plain_end = special.start() if special else end
            if plain_end > i:  # a run of plain text
                self._emit_range(i, plain_end)
                i = plain_end
                continue
            char = raw[i]
            if char == "\\" and i + 1 < end and raw[i + 1] in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~":
                self._emit_range(i + 1, i + 2)
                i += 2
            elif char == "`":
                i = self._code_span(i, end)
            elif char == "<":
                i = self._angle(i, end)
            elif char == "[" or (char == "!" and i + 1 < end and raw[i + 1] == "["):
                i = self._bracket(i, end, markers=markers)
            elif char in "hHfFwW" and (i == start or not (raw[i - 1].isalnum()
                                                          or raw[i - 1] in "/@.-_")):
                i = self._bare_url(i, end)
            else:
                self._emit_range(i, i + 1)
                i += 1

    def _code_span(self, i: int, end: int) -> int:
        raw = self.raw
        run = i
        while run < end and raw[run] == "`":
            run += 1
        ticks = run - i
        search = run
        while True:
            close = raw.find("`" * ticks, search, end)
            if close == -1:
                self._emit_range(i, run)
                return run
            after = close + ticks
            if after < end and raw[after] == "`":  # a longer run: not the closing one
                search = after
                while search < end and raw[search] == "`":
                    search += 1
                continue
            self._emit(PLACEHOLDER, i)
            return after

    def _angle(self, i: int, end: int) -> int:
        raw = self.raw
        if raw.startswith("<!--", i):
            close = raw.find("-->", i + 4, end)
            if close != -1:
                return close + 3
        window = raw[i:end]
        match = _AUTOLINK.match(window)
        if match:
            url = match.group(1)
            if url.lower().startswith(_URL_SCHEMES):
                self._link(url, i + 1, i + 1 + len(url), "autolink")
            self._emit(PLACEHOLDER, i)
            return i + match.end()
        match = _EMAIL_AUTOLINK.match(window)
        if match:
            self._emit(PLACEHOLDER, i)
            return i + match.end()
        match = _HTML_TAG.match(window)
        if match:
            quote = _Q_TAG.match(match.group(0))
            if quote:  # <q>…</q>: a quotation, as “…”
                self._emit("”" if quote.group(1) else "“", i)
            for attr in _HTML_URL_ATTR.finditer(match.group(0)):
                url = attr.group(1)
                if url.lower().startswith(_URL_SCHEMES):
                    self._link(url, i + attr.start(1), i + attr.end(1), "html")
            return i + match.end()
        self._emit_range(i, i + 1)
        return i + 1

    def _closing(self, i: int, end: int, *, link_target: bool = False) -> int:
        """Index of the delimiter that closes the one at ``i``: the ``]`` of a ``[``, or
        with ``link_target`` the ``)`` of an inline link target's ``(``; -1 if none.
        Escaped delimiters do not count, nor (in brackets) those inside a code span; a
        link target ends at a blank line."""
        opener, closer = ("(", ")") if link_target else ("[", "]")
        raw = self.raw
        depth = 0
        j = i
        while j < end:
            char = raw[j]
            if char == "\\":
                j += 2
                continue
            if char == "`" and not link_target:
                close = raw.find("`", j + 1, end)
                j = close + 1 if close != -1 else j + 1
                continue
            if char == opener:
                depth += 1
            elif char == closer:
                depth -= 1
                if depth == 0:
                    return j
            elif link_target and char == "\n" and raw[j - 1] == "\n":
                return -1
            j += 1
        return -1

    def _bracket(self, i: int, end: int, *, markers: bool) -> int:
        raw = self.raw
        image = raw[i] == "!"
        open_at = i + 1 if image else i
        close = self._closing(open_at, end)
        if close == -1:
            self._emit_range(i, i + 1)
            return i + 1
        label = raw[open_at + 1 : close]
        after = close + 1
        if not image and label.startswith("^"):
            name = label[1:]
            if name.isdigit() and name not in self.footnote_labels and markers:
                self._marker((int(name),), i, after, grouped=False, footnote=True)
            elif markers:
                self.notes.append(len(self.out_origin))
            return after  # an author's footnote reference is not prose
        if after < end and raw[after] == "(":
            target_close = self._closing(after, end, link_target=True)
            if target_close != -1:
                target = raw[after + 1 : target_close].strip()
                url = target.split()[0].strip("<>") if target else ""
                if url.lower().startswith(_URL_SCHEMES) or url.lower().startswith("www."):
                    at = raw.find(url, after)
                    self._link(url, at, at + len(url), "link")
                self._scan(open_at + 1, close, markers=False)
                return target_close + 1
        if after < end and raw[after] == "[":
            ref_close = self._closing(after, end)
            if ref_close != -1:
                ref = raw[after + 1 : ref_close]
                if _normalize_label(ref or label) in self.reference_labels:
                    self._scan(open_at + 1, close, markers=False)
                    return ref_close + 1
        if _normalize_label(label) in self.reference_labels:
            self._scan(open_at + 1, close, markers=False)
            return after
        if not image and markers:
            single = _SINGLE.match(label)
            if single:
                self._marker((int(single.group(1)),), i, after, grouped=False, footnote=False)
                return after
            if _GROUP.match(label):
                self._marker(_group_ids(label), i, after, grouped=True, footnote=False)
                return after
        self._emit_range(i, open_at + 1)
        return open_at + 1

    def _marker(self, ids: tuple[int, ...], start: int, end: int, *, grouped: bool,
                footnote: bool) -> None:
        marker = Marker(ids, self.raw_origin[start], self.raw_origin[end - 1] + 1, grouped,
                        footnote)
        prose_start = len(self.out_origin)
        self._emit_range(start, end)
        self.markers.append((prose_start, prose_start + (end - start), marker))

    def _bare_url(self, i: int, end: int) -> int:
        match = _BARE_URL.match(self.raw, i, end)
        if not match:
            self._emit_range(i, i + 1)
            return i + 1
        url = _trim_url(match.group(0))
        self._link(url, i, i + len(url), "bare")
        self._emit(PLACEHOLDER, i)
        return i + len(url)


def _trim_url(url: str) -> str:
    """Drop trailing punctuation that ends the sentence rather than the URL."""
    while url and url[-1] in ".,;:!?'\"*_":
        url = url[:-1]
    while url.endswith(")") and url.count("(") < url.count(")"):
        url = url[:-1]
    while url.endswith("]") and url.count("[") < url.count("]"):
        url = url[:-1]
    return url


def _group_ids(label: str) -> tuple[int, ...]:
    """``1, 2`` -> (1, 2); ``1-3`` -> (1, 2, 3); a reversed or huge range keeps its ends."""
    ids: list[int] = []
    for part in re.split(r"\s*[,;]\s*", label.strip()):
        bounds = [int(n) for n in re.split(r"\s*[-–—]\s*", part) if n]
        if len(bounds) == 2 and bounds[0] <= bounds[1] <= bounds[0] + 50:
            ids.extend(range(bounds[0], bounds[1] + 1))
        else:
            ids.extend(bounds)
    return tuple(dict.fromkeys(ids))


def scan(text: str) -> Draft:
    """Scan a markdown draft (any text is a valid draft)."""
    blocks = _BlockScanner(text)
    blocks.run()
    inline = _InlineScanner(text, blocks.reference_labels, blocks.footnote_labels)
    links = list(blocks.links)
    paragraphs = [inline.paragraph(p, links) for p in blocks.paragraphs]
    for footnote in blocks.footnotes:  # only their URLs matter
        inline.paragraph(footnote, links)
    _set_quoted_markers(text, paragraphs)
    markers = sorted((m for p in paragraphs for _, _, m in p.markers), key=lambda m: m.start)
    links.sort(key=lambda link: link.start)
    line_starts = [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]
    return Draft(text, paragraphs, markers, links, blocks.blocks, blocks.renumbered,
                 line_starts, blocks.footnote_labels, blocks.unclosed)


# --- markers inside quotations ----------------------------------------------------------

_ATTRIBUTION_LEAD = re.compile(r"^[\s\u2014\u2013\u2015\-]*$")  # spaces and dashes only


def _set_quoted_markers(text: str, paragraphs: list[Paragraph]) -> None:
    """Move the markers that stand inside a quotation to ``quoted_markers``: in a
    blockquote all but its attribution, elsewhere those between quotation marks."""
    for index, paragraph in enumerate(paragraphs):
        if paragraph.blockquote is None:
            spans = quote_spans(paragraph.prose)
            inside = [m for m in paragraph.markers
                      if any(a < m[0] and m[1] <= b for a, b in spans)]
        else:
            cites = _attribution_markers(text, paragraph)
            if cites is None and _last_of_blockquote(paragraphs, index):
                cites = _opening_markers(paragraphs, index + 1)
            inside = [m for m in paragraph.markers if cites is None or m not in cites]
            if cites and cites[0] in paragraph.markers:
                paragraph.attribution = (cites[0][0], cites[-1][1])
        if inside:
            paragraph.quoted_markers = inside
            paragraph.markers = [m for m in paragraph.markers if m not in inside]


def _attribution_markers(text: str, paragraph: Paragraph,
                         ) -> list[tuple[int, int, Marker]] | None:
    """The markers of a blockquote's last line when that line is only markers, with
    an optional dash before them (``> — [3]``)."""
    if not paragraph.markers:
        return None
    last = paragraph.markers[-1]
    run = [last]
    for marker in reversed(paragraph.markers[:-1]):
        if paragraph.prose[marker[1] : run[0][0]].strip():
            break
        run.insert(0, marker)
    if paragraph.prose[last[1] :].strip():
        return None
    line_start = text.rfind("\n", 0, run[0][2].start) + 1
    before = _QUOTE_PREFIX.sub("", text[line_start : run[0][2].start])
    return run if _ATTRIBUTION_LEAD.match(before) else None


def _last_of_blockquote(paragraphs: list[Paragraph], index: int) -> bool:
    following = paragraphs[index + 1] if index + 1 < len(paragraphs) else None
    return following is None or following.blockquote != paragraphs[index].blockquote


def _opening_markers(paragraphs: list[Paragraph], index: int,
                     ) -> list[tuple[int, int, Marker]] | None:
    """The markers that open the paragraph at ``index`` (after an optional dash): the
    citation that follows a blockquote."""
    if index >= len(paragraphs) or paragraphs[index].blockquote is not None:
        return None
    paragraph = paragraphs[index]
    run: list[tuple[int, int, Marker]] = []
    at = 0
    for marker in paragraph.markers:
        if not _ATTRIBUTION_LEAD.match(paragraph.prose[at : marker[0]]):
            break
        run.append(marker)
        at = marker[1]
    return run or None


def blockquote_citation(paragraphs: list[Paragraph], index: int,
                        ) -> list[tuple[int, int, Marker]]:
    """The markers that cite the blockquote the paragraph at ``index`` belongs to:
    its attribution, or the markers opening the paragraph right after it."""
    group = paragraphs[index].blockquote
    if group is None:
        return []
    last = index
    while last + 1 < len(paragraphs) and paragraphs[last + 1].blockquote == group:
        last += 1
    paragraph = paragraphs[last]
    if paragraph.attribution is not None:
        a, b = paragraph.attribution
        return [m for m in paragraph.markers if a <= m[0] and m[1] <= b]
    return _opening_markers(paragraphs, last + 1) or []
