"""Markdown sources as stored text: the words a reader sees, as for an HTML page.

A Markdown file or response is rendered (CommonMark, with tables, through
markdown-it-py) and stored as its text: one paragraph, heading, list item,
quotation paragraph or table row per line; heading marks, emphasis, link
syntax and images removed, link text kept; code blocks keep their lines. A
soft line break inside a paragraph is a space; a hard one (``<br>``) joins or
stays by the rules of :func:`~fetchledger.adapters.htmlprose.join_soft_breaks`.
The title is the first top-level heading (else the first heading).
Footnotes are the document's own apparatus, as on a web page: a reference
``[^1]`` in the prose goes, and a definition ``[^1]: Text.`` stays as its text,
one line, like an entry of a reference list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import lxml.etree
import lxml.html

from ..text.normalize import clean_lines, one_line
from .htmlprose import join_soft_breaks

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

__all__ = ["MarkdownText", "markdown_text"]

_LINES = frozenset("p h1 h2 h3 h4 h5 h6 li dt dd tr caption figcaption".split())
_CONTAINERS = frozenset("ul ol dl blockquote table thead tbody tfoot div section".split())
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# Stands for a kept <br> while a line's text is read: a noncharacter (lxml refuses
# control characters in text), taken out of the source first.
_HARD_BREAK = "\ufdd0"
# A reference, and the spaces before it when punctuation follows ("word [^1]." -> "word.").
_FOOTNOTE_REF = re.compile(r"[ \t]*\[\^[^\]\s]{1,40}\](?=[.,;:!?)])|\[\^[^\]\s]{1,40}\]")
_FOOTNOTE_DEF = re.compile(r"^\s*\[\^[^\]\s]{1,40}\]:\s*")
# The next definition in the same paragraph (definitions on consecutive lines).
_NEXT_DEF = re.compile(r"\n[ \t]*\[\^[^\]\s]{1,40}\]:[ \t]*")
_CODE = frozenset({"code", "pre"})


@dataclass(frozen=True)
class MarkdownText:
    text: str
    title: str | None


@lru_cache(maxsize=1)
def _renderer() -> MarkdownIt:
    from markdown_it import MarkdownIt

    # Raw HTML in the source stays text: a Markdown file's words are what is stored.
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def markdown_text(source: str) -> MarkdownText:
    """The stored text and title of a Markdown document."""
    html = _renderer().render(source.replace(_HARD_BREAK, ""))
    if not html.strip():
        return MarkdownText("", None)
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    if "[^" in source:
        _drop_footnote_marks(root)
    join_soft_breaks(root)
    lines: list[str] = []
    _render(root, lines)
    title = None
    for tag in _HEADINGS:
        heading = root.find(f".//{tag}")
        if heading is not None:
            title = one_line(heading.text_content()) or None
            break
    return MarkdownText(clean_lines("\n".join(lines)), title)


def _drop_footnote_marks(root: lxml.etree._Element) -> None:
    """``[^label]`` references out of the prose, definitions' labels off their text,
    each definition a line of its own (never inside code)."""
    for element in list(root.iter()):
        if not isinstance(element.tag, str):
            continue
        if element.tag not in _CODE and element.text and not _in_code(element):
            text = element.text
            if element.tag == "p":
                text = _FOOTNOTE_DEF.sub("", text, count=1)
            first, *rest = _NEXT_DEF.split(text)
            element.text = _FOOTNOTE_REF.sub("", first)
            for at, piece in enumerate(rest):
                element.insert(at, _break(piece))
        parent = element.getparent()
        if element.tail and parent is not None and not _in_code(parent):
            first, *rest = _NEXT_DEF.split(element.tail)
            element.tail = _FOOTNOTE_REF.sub("", first)
            at = parent.index(element) + 1
            for offset, piece in enumerate(rest):
                parent.insert(at + offset, _break(piece))


def _break(tail: str) -> lxml.etree._Element:
    br = lxml.etree.Element("br")
    br.tail = _FOOTNOTE_REF.sub("", tail)
    return br


def _in_code(element: lxml.etree._Element | None) -> bool:
    while element is not None:
        if element.tag in _CODE:
            return True
        element = element.getparent()
    return False


def _render(element: lxml.etree._Element, lines: list[str]) -> None:
    for child in element:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag == "pre":
            lines.extend(child.text_content().split("\n"))
        elif tag == "tr":
            cells = [" ".join(cell.text_content().split()) for cell in child]
            lines.append(" | ".join(cell for cell in cells if cell))
        elif tag == "li" and any(isinstance(c.tag, str) and c.tag in _CONTAINERS | {"p", "pre"}
                                 for c in child):
            _render_item(child, lines)
        elif tag in _LINES:
            lines.append(_inline(child))
        elif tag in _CONTAINERS:
            _render(child, lines)
        elif tag == "hr":
            continue
        elif tag:
            lines.append(_inline(child))


def _render_item(item: lxml.etree._Element, lines: list[str]) -> None:
    """A list item holding blocks (a loose or nested list): its own text first."""
    if item.text and item.text.strip():
        lines.append(" ".join(item.text.split()))
    _render(item, lines)


def _inline(element: lxml.etree._Element) -> str:
    """One line of text: soft breaks are spaces, kept hard breaks end the line, an
    image is its alt text."""
    for br in element.iter("br"):
        br.tail = _HARD_BREAK + (br.tail or "")
    for image in element.iter("img"):
        image.tail = (image.get("alt") or "") + (image.tail or "")
    lines = element.text_content().split(_HARD_BREAK)  # a "\n" left is a soft break
    return "\n".join(" ".join(line.split()) for line in lines)
