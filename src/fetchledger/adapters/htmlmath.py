"""Formulas as text: a sentence holding one stays whole, and says it once.

Pages show a formula in one of a few ways, each with twins for screen readers
or search engines; the stored text holds the formula once, as its TeX where the
page gives it (``alttext``, a TeX ``<annotation>``, MathJax's ``math/tex``
script), else as the MathML read linearly (``r^2``, ``x_i``, ``(a)/(b)``):

- **MediaWiki**: a hidden MathML span and a fallback ``<img alt="{\\displaystyle …}">``
  inside ``.mwe-math-element``;
- **KaTeX**: ``.katex`` holding ``.katex-mathml`` (MathML + TeX annotation) and
  ``.katex-html`` (the drawn glyphs, usually ``aria-hidden``, not always);
- **MathJax 3**: ``<mjx-container>`` holding the drawn ``<mjx-math>`` and an
  ``<mjx-assistive-mml>`` MathML twin;
- **MathJax 2**: a ``.MathJax_Preview``, the drawn ``.MathJax`` span (with an
  assistive MathML twin) and the source ``<script type="math/tex">``.

The whole group (the outermost wrapper) gives way to the one text.
"""

from __future__ import annotations

import re

import lxml.etree
import lxml.html

from .htmlnotes import remove_keeping_tail

__all__ = ["formulas_as_text"]

_SIGNS = ("math", "MATH", "Math", "katex", "mjx-")
_MATH = lxml.etree.XPath("//math")  # the HTML parser keeps no namespaces
_TEX = lxml.etree.XPath(".//annotation[contains(@encoding, 'tex')]")
_TEX_SCRIPTS = lxml.etree.XPath("//script[starts-with(@type, 'math/tex')]")
_DISPLAYSTYLE = re.compile(r"^\{\\(?:displaystyle|textstyle)\s*(.*)\}$", re.DOTALL)
_MATH_IMAGE = lxml.etree.XPath(
    "//img[contains(@class, 'mwe-math-fallback-image')][not(ancestor::*[contains(@class, "
    "'mwe-math-element')]//*[local-name()='math'])]")
# Class tokens (and tags) of the wrappers that hold a formula and its twins.
_WRAPPER_CLASSES = frozenset({"mwe-math-element", "katex", "katex-display", "MathJax",
                              "MathJax_Display", "MathJax_SVG", "MathJax_SVG_Display",
                              "MathJax_CHTML", "MathJax_MathML"})
_WRAPPER_TAGS = frozenset({"mjx-container"})
_WRAPPER_DEPTH = 4
# Operators written with a space on either side, as a reader would type them.
_SPACED_OPERATORS = frozenset("= ≠ < > ≤ ≥ ≈ ≡ + − - × · ÷ → ⇒ ⇔ ∈ ∉ ⊂ ⊆ ∪ ∩".split())
_MATHJAX_DRAWN = re.compile(r"^(?:MathJax|MJX)")


def formulas_as_text(tree: lxml.html.HtmlElement, source: str | None = None) -> None:
    """Each formula of the page as one text (see above), in place; ``source``, the
    page's HTML, lets a page without formulas skip the search."""
    if source is not None and not any(sign in source for sign in _SIGNS):
        return
    for script in _TEX_SCRIPTS(tree):
        _mathjax2(script)
    for math in _MATH(tree):
        if math.getparent() is None:
            continue  # its group went with an earlier twin
        # The wrapper may be hidden (MediaWiki's MathML span is display:none): the
        # formula text takes the place of the outermost wrapper, which is shown.
        remove_keeping_tail(_group_of(math), _formula(math))
    for image in _MATH_IMAGE(tree):
        remove_keeping_tail(image, _strip_displaystyle(image.get("alt") or ""))


def _group_of(math: lxml.etree._Element) -> lxml.etree._Element:
    """The outermost formula wrapper within a few levels of ``math`` (the twins sit in
    spans and divs of their own inside it), else ``math`` itself."""
    group = math
    for depth, ancestor in enumerate(math.iterancestors()):
        if depth >= _WRAPPER_DEPTH:
            break
        classes = set((ancestor.get("class") or "").split())
        if ancestor.tag in _WRAPPER_TAGS or classes & _WRAPPER_CLASSES:
            group = ancestor
    return group


def _mathjax2(script: lxml.etree._Element) -> None:
    """MathJax 2: the drawn spans and the preview before the script go; the script's
    TeX takes its place."""
    tex = " ".join((script.text or "").split())
    previous = script.getprevious()
    while previous is not None and _MATHJAX_DRAWN.match(previous.get("class") or "") \
            and not (previous.tail or "").strip():
        drawn, previous = previous, previous.getprevious()
        remove_keeping_tail(drawn, "")
    remove_keeping_tail(script, tex)


def _formula(math: lxml.etree._Element) -> str:
    alt = (math.get("alttext") or "").strip()
    if alt:
        return _strip_displaystyle(alt)
    tex = _TEX(math)
    if tex and (tex[0].text or "").strip():
        return _strip_displaystyle(tex[0].text or "")
    return " ".join(_linear(math).split())


def _linear(element: lxml.etree._Element) -> str:
    """MathML read in a line: scripts as ``^``/``_``, fractions as ``(a)/(b)``."""
    tag = element.tag if isinstance(element.tag, str) else ""
    parts = [_linear(child) for child in element if isinstance(child.tag, str)]
    if tag in ("annotation", "annotation-xml"):
        return ""
    if tag in ("mi", "mn", "mo", "mtext", "ms"):
        token = " ".join((element.text_content() or "").split())
        return f" {token} " if tag == "mo" and token in _SPACED_OPERATORS else token
    if tag == "msup" and len(parts) == 2:
        return f"{parts[0]}^{_grouped(parts[1])}"
    if tag == "msub" and len(parts) == 2:
        return f"{parts[0]}_{_grouped(parts[1])}"
    if tag == "msubsup" and len(parts) == 3:
        return f"{parts[0]}_{_grouped(parts[1])}^{_grouped(parts[2])}"
    if tag == "mfrac" and len(parts) == 2:
        return f"({parts[0]})/({parts[1]})"
    if tag == "msqrt":
        return f"√({''.join(parts)})"
    if tag == "semantics" and parts:
        return parts[0]
    return "".join(parts)


def _grouped(text: str) -> str:
    return text if len(text) <= 1 else f"({text})"


def _strip_displaystyle(tex: str) -> str:
    tex = " ".join(tex.split())
    match = _DISPLAYSTYLE.match(tex)
    return match.group(1).strip() if match else tex
