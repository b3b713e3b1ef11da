"""Note marks of any site: the links to a page's own notes, found by what they are.

:mod:`.htmlprose` drops the apparatus it knows by name (MediaWiki's classes, ARIA
roles, pandoc's and GitHub's footnote links). The footnote and reference marks of
other sites — scholarly HTML (arXiv's ``ltx_cite``, PubMed Central's ``xref``,
publishers' ``ref-link`` anchors), Substack's and Medium's footnote anchors, older
wikis — are recognised by their shape instead:

- a **note link**: a link to an anchor on the same page (``href="#…"``) whose text
  is a mark (``12``, ``[12]``, ``a``, ``note 1``, ``nb 2``, ``iv``, ``*``) and that
  either stands in a superscript or says it is a reference (an attribute naming a
  ``ref``, ``bib``, ``cite``, ``note`` or ``fn``). A link to ``#s3`` reading ``3`` in
  "see Section 3" says neither and stays;
- a **group** of note links (``12,13``, ``5–7``) goes with its separators, and with
  the brackets around it when the group fills them (``[12]``, ``(1, 2)``); a
  wrapper (``<cite>``, ``<sup>``, ``<span>``) holding only the group goes whole;
- a **back-link**: a link to the same page reading only ``^``, ``↑`` or ``↩``,
  and a caret left as plain text at the start of a list item (``^ a b Smith…``);
- a **bare superscript number right after punctuation** (``100 °C.<sup>3</sup>``,
  ``alerts,<sup>22</sup>``): a footnote mark. After a letter, a digit or a bracket
  a superscript is an exponent or an ordinal (``m<sup>2</sup>``, ``1<sup>st</sup>``,
  ``(a + b)<sup>2</sup>``) and stays.

Where a mark goes, the space before it goes too when punctuation follows
(``failed <sup>14</sup>.`` → ``failed.``).
"""

from __future__ import annotations

import re

import lxml.etree

__all__ = ["drop_note_marks", "remove_keeping_tail"]

_MARK = r"(?:\d{1,4}|[a-zA-Z]{1,2}|[ivxlc]{1,6}|(?:note|nb|n|fn)\s?\d{1,4}|[*†‡§¶]{1,3})"
_ONE_MARK = re.compile(rf"^\[?\s*{_MARK}\s*\]?$")
_GROUP = re.compile(rf"^[\[(]?\s*{_MARK}(?:\s*[,;–—-]\s*{_MARK})*\s*[\])]?$")
_SEPARATORS = re.compile(r"^[\s,;–—-]*$")
# A word naming a note or reference, not a part of another word ("#preface" is no note).
_NOTE_WORDS = re.compile(r"(?:^|[^a-z])(?:ref|bib|cit|note|fn|foot|endnote)"
                         r"|(?:ref|bib|note|fn)(?:$|[^a-z])|bibr|xref|footnote|endnote",
                         re.IGNORECASE)
_NOTE_ATTRIBUTES = ("class", "href", "id", "rel", "role", "aria-label", "aria-describedby",
                    "data-track-action", "data-footnote-ref", "rid")
_BACK_LINK = re.compile(r"^[\^↑↩⤴\ufe0e\ufe0f\s]+$")
_IN_PAGE_LINKS = lxml.etree.XPath("//a[starts-with(@href, '#')]")
_BARE_SUPS = lxml.etree.XPath("//sup[not(*)]")
_CARET_ITEMS = lxml.etree.XPath(
    "//li[starts-with(normalize-space(text()), '^') or starts-with(normalize-space(text()), '↑')]")
_LEADING_CARET = re.compile(r"^\s*[\^↑](?=\s|$)\s*")
_BARE_NUMBERS = re.compile(r"^\d{1,3}(?:\s*[,–-]\s*\d{1,3})*$")
# Punctuation a note mark follows; not a bracket: "(a + b)<sup>2</sup>" is a square.
_AFTER_PUNCTUATION = re.compile(r"[.!?,;:\"”’]$")
_WRAPPERS = frozenset({"sup", "cite", "span", "b", "i", "small", "em", "strong"})
_PUNCTUATION_NEXT = re.compile(r"^[.,;:!?)\]]")


def drop_note_marks(tree: lxml.etree._Element) -> None:
    """Drop the note marks, note-link groups and back-links described above, in place."""
    for link in _IN_PAGE_LINKS(tree):
        if link.getparent() is None:
            continue  # went with a group already
        text = " ".join(link.text_content().split())
        if _BACK_LINK.match(text):
            remove_keeping_tail(_outermost_wrapper(link, _BACK_LINK), "")
        elif _ONE_MARK.match(text) and _says_note(link):
            _drop_group(link)
    for item in _CARET_ITEMS(tree):  # "^ a b Smith (2001)": the caret stays as text
        item.text = _LEADING_CARET.sub("", item.text or "", count=1)
    for sup in _BARE_SUPS(tree):
        text = (sup.text or "").strip()
        if sup.getparent() is not None and _BARE_NUMBERS.match(text) and \
                _AFTER_PUNCTUATION.search(_text_before(sup).rstrip()):
            remove_keeping_tail(sup, "")


def _says_note(link: lxml.etree._Element) -> bool:
    """The link stands in a superscript or one of its attributes names a note."""
    for ancestor in (link, *link.iterancestors()):
        if ancestor.tag == "sup":
            return True
        if ancestor.tag not in _WRAPPERS and ancestor is not link:
            break
    for element in (link, link.getparent()):
        if element is None:
            continue
        for name in _NOTE_ATTRIBUTES:
            value = element.get(name)
            if value and _NOTE_WORDS.search(value):
                return True
    return False


def _outermost_wrapper(element: lxml.etree._Element, shape: re.Pattern[str],
                       ) -> lxml.etree._Element:
    """The highest inline wrapper of ``element`` whose whole text still has ``shape``."""
    outer = element
    for ancestor in element.iterancestors():
        if ancestor.tag not in _WRAPPERS:
            break
        if not shape.match(" ".join(ancestor.text_content().split())):
            break
        outer = ancestor
    return outer


def _drop_group(link: lxml.etree._Element) -> None:
    wrapper = _outermost_wrapper(link, _GROUP)
    if wrapper is not link:
        remove_keeping_tail(wrapper, "")
        return
    parent = link.getparent()
    assert parent is not None
    siblings = list(parent)
    first = last = siblings.index(link)
    # Neighbouring note links, separated by nothing but commas, dashes and spaces.
    while first > 0 and _is_note_link(siblings[first - 1]) and \
            _SEPARATORS.match(siblings[first - 1].tail or ""):
        first -= 1
    while last + 1 < len(siblings) and _SEPARATORS.match(siblings[last].tail or "") and \
            _is_note_link(siblings[last + 1]):
        last += 1
    before = _text_before(siblings[first])
    after = siblings[last].tail or ""
    stripped_after = after.lstrip(" ,;–—-")
    bracketed = (before.rstrip().endswith("[") and stripped_after.startswith("]")) or \
        (before.rstrip().endswith("(") and stripped_after.startswith(")"))
    if bracketed:
        _set_text_before(siblings[first], before.rstrip()[:-1])
        after = stripped_after[1:]
    for element in siblings[first:last]:
        parent.remove(element)
    siblings[last].tail = after
    remove_keeping_tail(siblings[last], "")


def _is_note_link(element: lxml.etree._Element) -> bool:
    return (element.tag == "a" and (element.get("href") or "").startswith("#")
            and bool(_ONE_MARK.match(" ".join(element.text_content().split())))
            and _says_note(element))


def _text_before(element: lxml.etree._Element) -> str:
    previous = element.getprevious()
    if previous is not None:
        return previous.tail or ""
    parent = element.getparent()
    return (parent.text or "") if parent is not None else ""


def _set_text_before(element: lxml.etree._Element, text: str) -> None:
    previous = element.getprevious()
    if previous is not None:
        previous.tail = text
    else:
        parent = element.getparent()
        if parent is not None:
            parent.text = text


def remove_keeping_tail(element: lxml.etree._Element, text: str) -> None:
    """Remove ``element`` (and its content), leaving ``text`` and its tail in its place;
    when only punctuation follows a removed mark, the space before the mark goes too."""
    parent = element.getparent()
    if parent is None:
        return
    kept = text + (element.tail or "")
    previous = element.getprevious()
    before = previous.tail if previous is not None else parent.text
    before = before or ""
    if not text and _PUNCTUATION_NEXT.match(kept):
        before = before.rstrip(" \t\n\r")
    if previous is not None:
        previous.tail = before + kept
    else:
        parent.text = before + kept
    parent.remove(element)
