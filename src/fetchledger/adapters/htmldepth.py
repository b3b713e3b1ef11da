"""Deeply nested HTML, flattened so that libxml2 keeps all of it.

libxml2's HTML parser stops building the tree at a depth of 256 elements and
silently drops everything after that point: a page with 300 unclosed ``<b>``
tags, or a hostile 100,000-deep nest, would lose every word that follows.
:func:`cap_depth` rewrites such a page with the standard library's tokenizer
(no tree, no depth limit): elements deeper than ``max_depth`` lose their tags
but keep their text, except hidden elements and non-text containers
(``<script>``, ``<template>``...), which are dropped whole, so flattening
never makes hidden text visible.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser

import lxml.etree
import lxml.html

__all__ = ["LIBXML_MAX_DEPTH", "cap_depth", "is_hidden", "too_deep"]

LIBXML_MAX_DEPTH = 256  # libxml2's limit without XML_PARSE_HUGE (which only raises it)
_KEPT_DEPTH = 200  # how deep a flattened page nests: well under the limit
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_VOID = frozenset("area base br col embed hr img input keygen link meta param source track "
                  "wbr".split())
_SKIPPED = frozenset({"script", "style", "noscript", "template", "svg", "canvas", "iframe",
                      "object", "head", "title", "textarea", "select"})
_BLOCKS = frozenset(
    "p div li h1 h2 h3 h4 h5 h6 tr blockquote pre section article header footer td th dd dt "
    "figcaption caption table ul ol main aside nav form".split())


def is_hidden(get: Callable[[str], str | None]) -> bool:
    """True for an element a reader cannot see: ``hidden``, ``aria-hidden="true"``,
    ``display:none`` or ``visibility:hidden`` (``get`` reads one attribute)."""
    return (get("hidden") is not None
            or (get("aria-hidden") or "").strip().lower() == "true"
            or bool(_HIDDEN_STYLE.search(get("style") or "")))


# An element this deep means the parser may have reached its limit (root = depth 1).
_AT_THE_LIMIT = lxml.etree.XPath("boolean(/*" + "/*" * (LIBXML_MAX_DEPTH - 3) + ")")


def too_deep(tree: lxml.html.HtmlElement) -> bool:
    """True when the parsed tree reaches libxml2's depth limit (so it may be cut short)."""
    return bool(_AT_THE_LIMIT(tree))


class _DepthCapper(HTMLParser):
    def __init__(self, max_depth: int) -> None:
        super().__init__(convert_charrefs=False)
        self.max_depth = max_depth
        self.out: list[str] = []
        # Open elements: (tag, emitted); a dropped subtree is marked by skip_from.
        self.stack: list[tuple[str, bool]] = []
        self.open_count: dict[str, int] = {}
        self.kept = 0  # open elements whose tags were emitted
        self.skip_from: int | None = None  # stack size when a dropped subtree began

    def _emit(self, text: str) -> None:
        if self.skip_from is None:
            self.out.append(text)

    def _break(self) -> None:
        """A line break where a flattened block began or ended (one for a run of them)."""
        if not self.out or self.out[-1] != "<br>":
            self.out.append("<br>")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            self._emit(self.get_starttag_text() or "")
            return
        values = {name.lower(): value if value is not None else "" for name, value in attrs}
        emitted = False
        if self.skip_from is None:
            if self.kept < self.max_depth:
                self.out.append(self.get_starttag_text() or "")
                emitted = True
                self.kept += 1
            elif tag in _SKIPPED or is_hidden(values.get):
                self.skip_from = len(self.stack)  # drop it whole, text and all
            elif tag in _BLOCKS:
                self._break()
        self.stack.append((tag, emitted))
        self.open_count[tag] = self.open_count.get(tag, 0) + 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._emit(self.get_starttag_text() or "")

    def handle_endtag(self, tag: str) -> None:
        if not self.open_count.get(tag):
            return  # a stray end tag closes nothing
        while self.stack:
            name, emitted = self.stack.pop()
            self.open_count[name] -= 1
            if emitted:
                self.kept -= 1
                self._emit(f"</{name}>")
            elif self.skip_from is None and name in _BLOCKS:
                self._break()
            if self.skip_from is not None and len(self.stack) <= self.skip_from:
                self.skip_from = None
            if name == tag:
                return

    def handle_data(self, data: str) -> None:
        self._emit(data)

    def handle_entityref(self, name: str) -> None:
        self._emit(f"&{name};")

    def handle_charref(self, name: str) -> None:
        self._emit(f"&#{name};")

    def handle_decl(self, decl: str) -> None:
        self._emit(f"<!{decl}>")


def cap_depth(html: str, max_depth: int = _KEPT_DEPTH) -> str:
    """``html`` with elements nested deeper than ``max_depth`` flattened (see above)."""
    capper = _DepthCapper(max_depth)
    capper.feed(html)
    capper.close()
    return "".join(capper.out)
