"""HTML to stored text: the one extraction function files and web pages share.

Main text and metadata come from trafilatura; when it finds no main text,
a plain-text fallback over the cleaned tree keeps what is readable. Hidden
elements (``hidden``, ``aria-hidden="true"``, ``display:none``,
``visibility:hidden``) and inert ones (``<template>``, ``<noscript>``) are
removed before either sees the page, so text a reader cannot see is never quoted;
the page's citation apparatus goes too, and soft line breaks join
(:mod:`.htmlprose`). Table rows are stored one per line, cells trimmed.
"""

from __future__ import annotations

import contextlib
import logging
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import lxml.etree
import lxml.html

from ..errors import CorruptContent
from ..text.normalize import clean_lines, decode_bytes, one_line
from .htmldepth import cap_depth, too_deep
from .htmlprose import (
    formulas_as_text,
    join_soft_breaks,
    prepare_prose,
    split_block_items,
    table_row,
    unwrap_layout_tables,
)

if TYPE_CHECKING:
    import trafilatura.settings

__all__ = ["Extracted", "decode_html", "extract_html", "extractor_version"]

_META_CHARSET = re.compile(
    rb"""<meta[^>]+?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE
)
# As trafilatura parses: HTML comments and processing instructions would otherwise
# split text nodes and change what its extraction keeps.
_PARSER = lxml.html.HTMLParser(collect_ids=False, default_doctype=False, remove_comments=True,
                               remove_pis=True)
_HUGE_PARSER = lxml.html.HTMLParser(collect_ids=False, default_doctype=False,
                                    remove_comments=True, remove_pis=True, huge_tree=True)
# trafilatura logs "discarding data" for every page without a main text: here that is
# an outcome (the fallback text, or empty_content), not news for the caller's log.
logging.getLogger("trafilatura.core").setLevel(logging.ERROR)
_HUGE_TEXT_NODE = 10_000_000  # bytes: libxml2's limit on one text node without huge_tree
# <template> is never rendered; <noscript> only without JavaScript (and mostly says so).
_INERT = ("template", "noscript")
_NOSCRIPT = re.compile(r"<noscript\b[^>]*>.*?</noscript\s*>", re.IGNORECASE | re.DOTALL)
_MAYBE_HIDDEN_XPATH = "//*[@hidden or @aria-hidden or @style] | //template | //noscript"
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_NOT_TEXT = ("script", "style", "noscript", "template", "svg", "canvas", "iframe", "object")
_BLOCKS = frozenset(
    "p div li h1 h2 h3 h4 h5 h6 tr br blockquote pre section article header footer "
    "td th dd dt figcaption caption table ul ol main aside nav form".split()
)


@dataclass(frozen=True)
class Extracted:
    """Stored text and metadata of one HTML page."""

    text: str
    title: str | None
    site: str | None
    author: str | None
    date: str | None
    canonical: str | None
    language: str | None
    extractor: str


# Bumped whenever what this module stores for the same bytes changes, so a version
# records which extraction made its text (``reextract`` compares it).
EXTRACTION_REVISION = 3


@lru_cache(maxsize=1)
def extractor_version() -> str:
    """trafilatura's version and this module's revision: ``2.3.1+fetchledger.3``."""
    import trafilatura

    return f"{trafilatura.__version__}+fetchledger.{EXTRACTION_REVISION}"


def decode_html(raw: bytes, declared: str | None = None, *, locator: str = "") -> str:
    """Decode HTML bytes: BOM, declared charset, ``<meta charset>``, UTF-8, detection."""
    if not declared:
        match = _META_CHARSET.search(raw[:8192])
        if match:
            declared = match.group(1).decode("ascii", "replace")
    return decode_bytes(raw, declared, locator=locator)


def _trafilatura_tree(html: str) -> lxml.html.HtmlElement | None:
    """The tree trafilatura itself would build (it repairs faulty markup first), so that
    extraction here sees what trafilatura alone sees; None for fragments and failures."""
    from trafilatura.utils import load_html

    try:
        tree = load_html(html)
    except Exception:  # lxml or the repair step on hostile markup
        return None
    return tree if tree is not None and tree.tag == "html" else None


def _tree(html: str, locator: str) -> lxml.html.HtmlElement:
    # libxml2 silently drops a text node over 10 MB, and everything after it, unless
    # told to parse a huge tree; a page that may hold one (UTF-8: <= 4 bytes a
    # character) is parsed so, without trafilatura's small-page repairs.
    huge = len(html) >= _HUGE_TEXT_NODE // 4
    tree = None if huge else _trafilatura_tree(html)
    if tree is None:
        try:
            tree = lxml.html.document_fromstring(html, parser=_HUGE_PARSER if huge else _PARSER)
        except (lxml.etree.ParserError, ValueError) as exc:
            raise CorruptContent(f"cannot parse the HTML: {exc}", locator=locator) from exc
    return tree


def _parse(html: str, locator: str) -> lxml.html.HtmlElement:
    # lxml refuses str input with an XML encoding declaration; strip it.
    html = re.sub(r"^\s*<\?xml[^>]*>", "", html, count=1)
    # A browser running scripts reads <noscript> content as raw text up to
    # </noscript>; lxml parses it as markup, so `<noscript><div></noscript>`
    # would swallow the rest of the page into the noscript element.
    html = _NOSCRIPT.sub("", html)
    tree = _tree(html, locator)
    if too_deep(tree):  # libxml2 dropped everything past a depth of 256
        tree = _tree(cap_depth(html), locator)
    formulas_as_text(tree, html)  # before hidden elements go: MediaWiki hides its MathML
    for element in tree.xpath(_MAYBE_HIDDEN_XPATH):
        hidden = (element.tag in _INERT or element.get("hidden") is not None
                  or element.get("aria-hidden", "").strip().lower() == "true"
                  or _HIDDEN_STYLE.search(element.get("style") or ""))
        if hidden and element.getparent() is not None and element.tag not in ("html", "body"):
            element.drop_tree()
    prepare_prose(tree, html)
    return tree


def _main_text(found: trafilatura.settings.Document) -> str:
    """trafilatura's text, layout tables unwrapped, list items holding blocks split
    and the soft line breaks of its paragraphs joined."""
    from trafilatura.xml import xmltotxt

    body = found.body
    if body is None:
        return found.text or ""
    unwrapped = unwrap_layout_tables(body)
    unwrapped = split_block_items(body) or unwrapped
    if join_soft_breaks(body, tei=True) or unwrapped:
        return xmltotxt(body, False)
    return found.text or ""


def _stored_lines(text: str) -> str:
    """Extracted text as stored text: lines cleaned, table rows as cells (see above)."""
    lines = []
    for line in clean_lines(text).split("\n"):
        row = table_row(line)
        if row is None or row:  # a rule row or a row of empty cells leaves no line
            lines.append(line if row is None else row)
    return "\n".join(lines)


def _metadata(tree: lxml.html.HtmlElement, url: str | None) -> dict[str, str | None]:
    """Title, site, author and date, from trafilatura's own pieces: meta tags, JSON-LD,
    the title element, htmldate's quick search. Its full metadata pass also guesses
    bylines from the body, searches dates in the text, and reads categories, tags and
    license: three quarters of its cost, for facts a ledger does not store."""
    from htmldate import find_date
    from trafilatura.metadata import examine_meta, extract_meta_json, extract_sitename

    found = examine_meta(tree)
    if found.author and " " not in found.author:  # a handle, not a name (as trafilatura)
        found.author = None
    with contextlib.suppress(Exception):  # its JSON-LD reader fails on some pages
        found = extract_meta_json(tree, found)
    site = found.sitename or extract_sitename(tree)
    if site:
        site = site.lstrip("@")
        if site and "." not in site and not site[0].isupper():
            site = site.title()
    try:
        date = find_date(tree, extensive_search=False, original_date=True, url=url)
    except Exception:  # htmldate on malformed markup
        date = None
    return {"title": found.title or _page_title(tree), "sitename": site or None,
            "author": found.author, "date": date}


_TITLE_WORD = re.compile(r"\w+")


def _page_title(tree: lxml.html.HtmlElement) -> str | None:
    """Without a title in the meta tags or JSON-LD: trafilatura's title from the body
    (a lone ``<h1>``, title-like elements) when the ``<title>`` agrees with it, else the
    ``<title>``: a lone ``<h1>`` is often a site banner or a promotion ("Hi, I'm ...")."""
    from trafilatura.metadata import examine_title_element, extract_title

    from_body = extract_title(tree)
    element, _, _ = examine_title_element(tree)
    if not element or (from_body and _agrees(from_body, element)):
        return from_body or element or None
    return element


def _agrees(heading: str, title: str) -> bool:
    """Most words of the heading are words of the title (or the other way round)."""
    a = set(_TITLE_WORD.findall(heading.casefold()))
    b = set(_TITLE_WORD.findall(title.casefold()))
    if not a or not b:
        return False
    shared = len(a & b)
    return shared >= 0.6 * len(a) or shared >= 0.6 * len(b)


def _head_facts(tree: lxml.html.HtmlElement) -> tuple[str | None, str | None, str | None]:
    """``<title>``, ``<link rel=canonical>`` and ``<html lang>`` of the page."""
    titles = tree.xpath("//title//text()")
    title = one_line(" ".join(titles)) or None
    links = tree.xpath("//link[translate(@rel, 'CANONICAL', 'canonical')='canonical']/@href")
    canonical = str(links[0]).strip() if links else None
    lang = tree.get("lang") or None
    return title, canonical, lang


def _fallback_text(tree: lxml.html.HtmlElement) -> str:
    """Readable text of the body, one block element per line."""
    body = tree.find("body")
    root = body if body is not None else tree
    join_soft_breaks(root)
    for element in root.iter(*_NOT_TEXT):
        if element.getparent() is not None:
            element.drop_tree()
    parts: list[str] = []
    for event, element in lxml.etree.iterwalk(root, events=("start", "end")):
        if not isinstance(element.tag, str):
            continue
        tag = element.tag.lower()
        if event == "start":
            if tag in _BLOCKS:
                parts.append("\n")
            if element.text:
                parts.append(element.text)
        else:
            if tag in _BLOCKS:
                parts.append("\n")
            if element.tail:
                parts.append(element.tail)
    return clean_lines(" ".join("".join(parts).split(" ")))


def extract_html(html: str, url: str | None = None, *, locator: str = "") -> Extracted:
    """Main text (one paragraph per line) and metadata of an HTML page."""
    import trafilatura

    tree = _parse(html, locator or url or "")
    head_title, canonical, lang = _head_facts(tree)
    metadata = _metadata(tree, url)
    result = trafilatura.bare_extraction(
        tree, url=url, with_metadata=False, include_comments=False, include_tables=True,
        deduplicate=False,
    )
    found = result if isinstance(result, trafilatura.settings.Document) else None
    text = _stored_lines(_main_text(found)) if found is not None else ""
    extractor = "trafilatura"
    if not text:  # trafilatura changed the tree: parse again for the fallback
        text, extractor = _fallback_text(_parse(html, locator)), "html-text"

    def fact(name: str) -> str | None:
        value = metadata.get(name) or (getattr(found, name, None) if found is not None
                                       else None)
        return one_line(str(value)) or None if value else None

    return Extracted(
        text=text,
        title=fact("title") or head_title,
        site=fact("sitename"),
        author=fact("author"),
        date=fact("date"),
        canonical=canonical,
        language=fact("language") or lang,
        extractor=extractor,
    )
