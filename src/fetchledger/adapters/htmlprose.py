"""An HTML tree made ready for main-text extraction: the page's prose as a reader sees it.

Run on the parsed page before trafilatura sees it (DESIGN promise 7):

- **Citation apparatus goes.** A source's own reference marks are not its
  evidence, and a ``[16]`` left in stored text would read as a ledger citation
  in a draft that quotes it. Dropped: MediaWiki reference superscripts
  (``sup.reference``), inline maintenance templates (``[citation needed]``,
  ``[clarification needed]``, ... — ``.Inline-Template``), ``[edit]`` section
  links (``.mw-editsection``) and the ``^``/``a b`` back-links of reference
  lists (``.mw-cite-backlink``); the footnote marks of other sites
  (``role="doc-noteref"``/``doc-backlink``, pandoc's ``a.footnote-ref``,
  GitHub's ``data-footnote-ref``, any ``<sup>`` that is only a link to a
  note on the page, any bracketed ``<sup>[…]</sup>``), and the note links any
  site makes, found by their shape (:mod:`.htmlnotes`). The reference list
  itself is content and stays, one entry per line.
- **Formulas keep their words**, once (:mod:`.htmlmath`): a formula becomes its
  ``alttext`` or TeX, so a sentence with a formula stays whole instead of
  having a hole.
- **Whitespace renders as in a browser** where trafilatura would keep a line
  break of the HTML source (text around a ``<br>``, quotations): a run of
  spaces, tabs and newlines is one space there (not in ``<pre>``, ``<code>``,
  ``<textarea>``), so a source line break never splits a sentence. Elsewhere
  trafilatura collapses whitespace itself; text lengths it weighs stay as they are.
- **A ``<br>`` in running prose is a soft break.** It joins the two lines when
  the one before it goes on in the next, by the rules that join wrapped lines
  of a PDF (:func:`fetchledger.adapters.pdftext.continues`); verse, addresses
  and lists (three or more short lines), and a line that ends a sentence, keep
  their breaks.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterator

import lxml.etree
import lxml.html

from .htmlmath import formulas_as_text
from .htmlnotes import drop_note_marks, remove_keeping_tail
from .pdftext import continues, text_width

__all__ = ["formulas_as_text", "join_soft_breaks", "prepare_prose", "split_block_items",
           "table_row", "unwrap_layout_tables"]

def _has_class(name: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


# Each kind of apparatus markup: the word its page source must hold, and where it is
# (a page without the word skips the search: most pages hold none of them).
_APPARATUS = (
    ("reference", lxml.etree.XPath(
        f"//sup[contains(@class, 'reference')][{_has_class('reference')}]")),
    ("Inline-Template", lxml.etree.XPath("//*[contains(@class, 'Inline-Template')]")),
    ("mw-editsection", lxml.etree.XPath(
        f"//*[contains(@class, 'mw-editsection')][{_has_class('mw-editsection')}]")),
    ("mw-cite-backlink", lxml.etree.XPath(
        f"//*[contains(@class, 'mw-cite-backlink')][{_has_class('mw-cite-backlink')}]")),
    ("doc-", lxml.etree.XPath("//*[@role='doc-noteref' or @role='doc-backlink']")),
    ("ootnote", lxml.etree.XPath(
        f"//a[{_has_class('footnote-ref')} or {_has_class('footnote-back')}"
        f" or {_has_class('footnoteRef')} or @data-footnote-ref or @data-footnote-backref]")),
)
# A superscript that is only a link to a note on the same page, or anything bracketed.
_MAYBE_NOTE = lxml.etree.XPath(
    "//sup[a[starts-with(@href, '#')] or starts-with(normalize-space(.), '[')]"
    " | //a[starts-with(@href, '#')][sup]")
_NOTE_MARK = re.compile(
    r"^(?:\[[^\[\]]{1,40}\]"
    r"|\[?(?:\d{1,4}|[a-zA-Z]{1,2}|[ivxlc]{1,5}|[*†‡§¶]{1,3})(?:\s*[,–-]\s*\d{1,4})*\]?)$")
_SUP_SIGNS = ("<sup", "<SUP", "<Sup")
_BREAKS = lxml.etree.XPath(".//br")
_CAPTIONS = lxml.etree.XPath("//figure/figcaption")
_CAPTION_WORDS = 6
_CAPTION_CREDITS = lxml.etree.XPath(
    ".//*[contains(translate(@class, 'CREDITOPYRHS', 'creditopyrhs'), 'credit')"
    " or contains(translate(@class, 'CREDITOPYRHS', 'creditopyrhs'), 'copyright')"
    " or contains(translate(@itemprop, 'CREDITOPYRHS', 'creditopyrhs'), 'copyright')"
    " or contains(translate(@itemprop, 'CREDITOPYRHS', 'creditopyrhs'), 'credit')]")
_CREDIT = re.compile(r"^[(\[]?(?:credit|photo|foto|image|bild|quelle|source|picture|©|\(c\))",
                     re.IGNORECASE)
_TEI_BREAKS = lxml.etree.XPath(".//lb")
_QUOTES = lxml.etree.XPath("//blockquote[not(ancestor::pre)] | //q[not(ancestor::pre)]")
_WHITESPACE_NODES = lxml.etree.XPath(
    ".//text()[not(ancestor::pre or ancestor::code or ancestor::textarea or ancestor::script"
    " or ancestor::style)][contains(., '\n') or contains(., '\t') or contains(., '  ')"
    " or contains(., '\r')]")
_HTML_SPACES = re.compile(r"[ \t\n\r\f]+")  # not U+00A0: a browser keeps those
_BLOCKS = frozenset(
    "address article aside blockquote body caption center dd details dialog div dl dt "
    "fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr html li main "
    "nav ol p pre section summary table tbody td tfoot th thead tr ul".split())
_TEI_BLOCKS = frozenset("body doc main p head item list quote cell row table".split())
_NOT_PROSE = frozenset({"pre", "script", "style", "textarea", "code", "template", "svg"})
_SHORT_LINE = 50  # characters: a block of lines this short is verse, an address or a list


def prepare_prose(tree: lxml.html.HtmlElement, source: str | None = None) -> None:
    """Drop the apparatus and render quotation whitespace, in place (formulas go
    first, through :func:`formulas_as_text`, before hidden elements are removed).
    ``source``, the page's HTML, lets a page skip the searches for markup it lacks."""
    _drop_apparatus(tree, source)
    for quote in _QUOTES(tree):
        _collapse_whitespace(quote)
    if source is None or "<figcaption" in source or "<FIGCAPTION" in source:
        _captions_as_paragraphs(tree)


def _captions_as_paragraphs(tree: lxml.html.HtmlElement) -> None:
    """A figure's caption that says something is the page's words (trafilatura drops
    every ``<figure>``): the figure becomes a block and its caption a paragraph, its
    credit (an element classed ``credit``/``copyright``) left out. A caption of a few
    words or a credit line ("Credit: AFP", "Foto: dpa") is furniture and goes with the
    figure, as before."""
    for caption in _CAPTIONS(tree):
        for credit in _CAPTION_CREDITS(caption):
            if credit.getparent() is not None:
                _replace_with_text(credit, "")
        words = caption.text_content().split()
        if len(words) < _CAPTION_WORDS or _CREDIT.match(" ".join(words)):
            continue
        caption.tag = "p"
        figure = caption.getparent()
        if figure is not None and figure.tag == "figure":
            figure.tag = "div"


def join_soft_breaks(root: lxml.etree._Element, *, tei: bool = False) -> bool:
    """Join the soft line breaks of ``root`` (see above), in place; True when anything
    changed (a break joined, or whitespace around one rendered).
    ``tei``: ``root`` is trafilatura's output (``<lb/>`` breaks, ``<p>``/``<head>``/
    ``<item>``/``<cell>`` blocks), which is where extracted pages are joined, so that
    trafilatura's choice of the main text never depends on it."""
    breaks = _TEI_BREAKS(root) if tei else _BREAKS(root)
    if not breaks:
        return False
    blocks_of = _TEI_BLOCKS if tei else _BLOCKS
    blocks: dict[int, lxml.etree._Element] = {}
    for br in breaks:
        block = _block_of(br, blocks_of, root)
        if block is not None:
            blocks.setdefault(id(block), block)
    changed = False
    for block in blocks.values():
        changed = _join_block(block, blocks_of) or changed
    return changed


# --- apparatus ---------------------------------------------------------------------------


def _drop_apparatus(tree: lxml.html.HtmlElement, source: str | None) -> None:
    marks: list[lxml.etree._Element] = []
    for sign, where in _APPARATUS:
        if source is None or sign in source:
            marks.extend(where(tree))
    if source is None or any(sign in source for sign in _SUP_SIGNS):
        for element in _MAYBE_NOTE(tree):
            text = " ".join(element.text_content().split())
            if _NOTE_MARK.match(text):
                marks.append(element)
    for element in marks:
        if element.getparent() is not None:
            _replace_with_text(element, "")
    drop_note_marks(tree)


def _replace_with_text(element: lxml.etree._Element, text: str) -> None:
    """Remove ``element`` (and its content), leaving ``text`` and its tail in its place."""
    remove_keeping_tail(element, text)


# --- line breaks -------------------------------------------------------------------------


def _join_block(block: lxml.etree._Element, blocks_of: frozenset[str]) -> bool:
    changed = _collapse_whitespace(block)
    lines = list(_visual_lines(block, blocks_of))
    texts = [" ".join(text.split()) for text, _ in lines]
    filled = [t for t in texts if t]
    if _stanza(filled):
        return changed  # verse, an address, a list: every break stays
    width = text_width(filled) if len(filled) >= 3 else None
    joined = False
    for (_, br), previous, line in zip(lines, texts, texts[1:], strict=False):
        if br is None or not previous or not line or not continues(previous, line, width):
            continue
        _replace_with_text(br, "" if previous.endswith(("-", "\u2010")) else " ")
        joined = True
    if joined:
        _collapse_whitespace(block)  # the space put in may meet one of the text's
    return changed or joined


def _stanza(lines: list[str]) -> bool:
    """Three or more short lines that each start afresh (not in lower case): verse,
    an address, a list. Prose broken by ``<br>`` goes on in lower case."""
    if len(lines) < 3 or statistics.median(len(t) for t in lines) >= _SHORT_LINE:
        return False
    fresh = sum(1 for t in lines[1:] if not t[0].islower())
    return fresh >= 2 * (len(lines) - 1) / 3


def _block_of(element: lxml.etree._Element, blocks_of: frozenset[str],
              root: lxml.etree._Element) -> lxml.etree._Element | None:
    """The block a break is in, never above ``root`` (trafilatura's output stays
    attached to the page it came from)."""
    for ancestor in element.iterancestors():
        tag = ancestor.tag if isinstance(ancestor.tag, str) else ""
        if tag in _NOT_PROSE:
            return None
        if tag in blocks_of or ancestor is root:
            return ancestor
    return None


def _visual_lines(block: lxml.etree._Element, blocks_of: frozenset[str],
                  ) -> Iterator[tuple[str, lxml.etree._Element | None]]:
    """The block's lines: ``(text, the <br> that ends it)``; None where a nested block
    (which is a line of its own) or the block's end ends it."""
    current: list[str] = []

    def walk(element: lxml.etree._Element) -> Iterator[tuple[str, lxml.etree._Element | None]]:
        if element.text:
            current.append(element.text)
        for child in element:
            tag = child.tag if isinstance(child.tag, str) else ""
            if tag in ("br", "lb"):
                yield "".join(current), child
                current.clear()
            elif tag in blocks_of:
                yield "".join(current), None
                current.clear()
            elif tag and tag not in _NOT_PROSE:
                yield from walk(child)
            if child.tail:
                current.append(child.tail)

    yield from walk(block)
    yield "".join(current), None


# --- whitespace and tables ---------------------------------------------------------------

_TEI_BLOCK_CHILDREN = frozenset({"p", "head", "list", "quote", "table", "code"})


def unwrap_layout_tables(body: lxml.etree._Element) -> bool:
    """Tables used for layout in trafilatura's output (a cell that holds paragraphs,
    headings or lists) become their blocks, so each paragraph is a line of its own and
    not a piece of one giant "row". True when any was unwrapped."""
    changed = False
    for table in list(body.iter("table")):
        cells = list(table.iter("cell"))
        if table.getparent() is None or not any(_holds_a_page(cell) for cell in cells):
            continue
        blocks: list[lxml.etree._Element] = []
        for cell in cells:
            if cell.text and cell.text.strip():
                paragraph = lxml.etree.Element("p")
                paragraph.text = cell.text
                blocks.append(paragraph)
            for child in cell:
                if child.tag in _TEI_BLOCK_CHILDREN or not isinstance(child.tag, str):
                    blocks.append(child)
                else:  # an inline element: a paragraph of its own
                    paragraph = lxml.etree.Element("p")
                    paragraph.append(child)
                    blocks.append(paragraph)
        parent, tail = table.getparent(), table.tail
        at = parent.index(table)
        parent.remove(table)
        for offset, block in enumerate(blocks):
            parent.insert(at + offset, block)
        if tail and blocks:
            blocks[-1].tail = (blocks[-1].tail or "") + tail
        changed = True
    return changed


_CELL_PAGE_BLOCKS = frozenset({"head", "list", "quote", "table", "code"})
_CELL_PROSE = 300  # characters: a cell with paragraphs of this much text is a page column


def _holds_a_page(cell: lxml.etree._Element) -> bool:
    """A cell of a layout table: it holds headings, lists, quotations, tables or code, or
    several paragraphs of prose. A data cell may hold a paragraph or two (trafilatura
    makes a ``<br>`` inside a cell a paragraph): that row stays one line."""
    blocks = [c for c in cell if isinstance(c.tag, str) and c.tag in _TEI_BLOCK_CHILDREN]
    if any(block.tag in _CELL_PAGE_BLOCKS for block in blocks):
        return True
    return len(blocks) >= 2 and len("".join(cell.itertext())) >= _CELL_PROSE


def _collapse_whitespace(root: lxml.etree._Element) -> bool:
    """Whitespace runs in text as one space (see above); True when any changed."""
    # XPath finds the text nodes; lxml's .text/.tail (which join adjacent text nodes,
    # as trafilatura's output has) are what is rewritten, each once.
    done: set[tuple[int, bool]] = set()
    changed = False
    for node in _WHITESPACE_NODES(root):
        parent = node.getparent()
        if parent is None or (id(parent), node.is_text) in done:
            continue
        done.add((id(parent), node.is_text))
        value = parent.text if node.is_text else parent.tail
        if not value or not value.strip():
            continue  # layout between tags: trafilatura reads it as such
        collapsed = _HTML_SPACES.sub(" ", value)
        if collapsed == value:
            continue
        changed = True
        if node.is_text:
            parent.text = collapsed
        else:
            parent.tail = collapsed
    return changed


def split_block_items(body: lxml.etree._Element) -> bool:
    """List items of trafilatura's output that hold headings or paragraphs (a card:
    ``<li><h2>WebIDE</h2><p>Develop…</p></li>``) become one item per block, so a
    heading never runs into the sentence after it. True when any was split."""
    changed = False
    for item in list(body.iter("item")):
        parent = item.getparent()
        if parent is None or not any(child.tag in ("head", "p") for child in item):
            continue
        pieces: list[lxml.etree._Element] = []
        current = lxml.etree.Element("item")
        current.text = item.text
        for child in list(item):
            if child.tag not in ("head", "p"):
                current.append(child)  # inline content stays with its neighbours
                continue
            pieces.append(current)
            block = lxml.etree.Element("item")
            block.text = child.text
            block.extend(list(child))
            pieces.append(block)
            current = lxml.etree.Element("item")
            current.text = child.tail
        pieces.append(current)
        pieces = [p for p in pieces if len(p) or (p.text and p.text.strip())]
        at = parent.index(item)
        tail = item.tail
        parent.remove(item)
        for offset, piece in enumerate(pieces):
            parent.insert(at + offset, piece)
        if pieces:
            pieces[-1].tail = tail
        changed = True
    return changed


_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_RULE_CELL = re.compile(r"^:?-{3,}:?$")
_CELL_SPACES = re.compile(r"[\s\u00a0\u2000-\u200a\u202f\u205f\u3000]+")


def table_row(line: str) -> str | None:
    """A table row as trafilatura writes it (``| a | b |``) as stored text: its cells
    trimmed, inner runs of spaces (padding) collapsed, empty cells left out, joined by
    `` | ``. ``""`` for a rule row (``|---|---|``) or a row of empty cells; None when
    ``line`` is not a table row."""
    if len(line) < 2 or not (line.startswith("|") and line.endswith("|")):
        return None
    cells = [_CELL_SPACES.sub(" ", cell).strip().replace("\\|", "|")
             for cell in _CELL_SPLIT.split(line[1:-1])]
    cells = [cell for cell in cells if cell]
    if all(_RULE_CELL.match(cell) for cell in cells):
        return ""
    return " | ".join(cells)
