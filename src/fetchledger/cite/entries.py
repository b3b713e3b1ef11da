"""One Sources entry per cited source, in each text style, from ledger facts only.

An entry reads: title — host, file name or command — locator — retrieval
date — pages of the cited quotes. Every part comes from the ledger; nothing
a writer typed can reach an entry.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from urllib.parse import quote as percent_encode

from ..models import Source
from ..text.normalize import one_line, printable
from .evidence import Support

__all__ = [
    "Entry",
    "entry_parts",
    "escape_markdown",
    "http_method",
    "pages_text",
    "source_url",
    "text_fragment_url",
]


@dataclass(frozen=True)
class Entry:
    """A cited source as the Sources block shows it under ``number``."""

    number: int
    source: Source
    supports: tuple[Support, ...]
    text_fragments: bool = False

    @property
    def cited(self) -> tuple[Support, ...]:
        """The quotes the draft draws on (those matched to a sentence or quoted)."""
        return tuple(s for s in self.supports if s.lines)

    def pages(self) -> list[tuple[int, str | None]]:
        """Pages of the cited quotes; of every quote handed out when none is known."""
        chosen = self.cited or tuple(s for s in self.supports if s.handed_out)
        found = {(s.quote.page, s.quote.page_label) for s in chosen if s.quote.page is not None}
        return sorted((page, label) for page, label in found if page is not None)

    def url(self) -> str | None:
        """The source's URL (web and http sources), with a text fragment for each
        cited quote when asked and the source is a web page."""
        url = source_url(self.source)
        if url and self.text_fragments and self.source.kind == "web":
            quotes = [s.quote.text for s in self.cited]
            if quotes:
                return text_fragment_url(url, quotes)
        return url


def http_method(source: Source) -> str | None:
    """The method of an ``http`` source's request, when its locator names one."""
    if source.kind == "http":
        first, _, rest = source.locator.partition(" ")
        if rest and re.fullmatch(r"[A-Z]+", first):
            return first
    return None


def source_url(source: Source) -> str | None:
    if source.kind == "web":
        return source.locator
    if source.kind == "http":
        return source.locator.partition(" ")[2] if http_method(source) else source.locator
    return None


def pages_text(pages: list[tuple[int, str | None]]) -> str:
    """``p. 4``, ``pp. 4, 12–14``, ``p. 12 (printed xii)``; empty without pages."""
    if not pages:
        return ""
    parts: list[str] = []
    numbered = [(p, lbl) for p, lbl in pages]
    for _, run in itertools.groupby(enumerate(numbered), key=lambda x: x[1][0] - x[0]):
        group = [item for _, item in run]
        plain = all(lbl is None or lbl == str(p) for p, lbl in group)
        if plain and len(group) > 1:
            parts.append(f"{group[0][0]}–{group[-1][0]}")
            continue
        for page, label in group:
            printed = f" (printed {one_line(label)})" if label and label != str(page) else ""
            parts.append(f"{page}{printed}")
    single = len(pages) == 1
    return ("p. " if single else "pp. ") + ", ".join(parts)


def text_fragment_url(url: str, quotes: list[str]) -> str:
    """``url#:~:text=...`` highlighting each quote (long ones as ``start,end``)."""
    directives = []
    for text in dict.fromkeys(quotes):
        words = text.split()
        if len(words) > 10:
            start, end = " ".join(words[:5]), " ".join(words[-5:])
            directive = f"{_fragment_part(start)},{_fragment_part(end)}"
        else:
            directive = _fragment_part(text)
        directives.append("text=" + directive)
    joiner = ":~:" if "#" in url else "#:~:"
    return url + joiner + "&".join(directives)


def _fragment_part(text: str) -> str:
    # '-', ',' and '&' delimit text-fragment parts: they must be percent-encoded too
    return percent_encode(text, safe="").replace("-", "%2D")


def entry_parts(entry: Entry, *, markdown: bool) -> list[str]:
    """title — label — locator — retrieved date — pages (parts that repeat dropped)."""
    source = entry.source
    title = printable(one_line(source.title or ""))
    label = printable(source.label)
    parts: list[str] = []
    for text in (title, label):
        if text and text not in parts:
            parts.append(text)
    shown = [escape_markdown(p) if markdown else p for p in parts]
    locator = _locator(entry, markdown=markdown)
    if locator and _bare(locator) not in parts:
        shown.append(locator)
    shown.append(f"retrieved {source.retrieved_at[:10]}")
    pages = pages_text(entry.pages())
    if pages:
        shown.append(escape_markdown(pages) if markdown else pages)
    return shown


def _bare(locator: str) -> str:
    return locator.strip("`<> ")


def _locator(entry: Entry, *, markdown: bool) -> str:
    source = entry.source
    url = entry.url()
    if url is not None:
        method = http_method(source)
        prefix = f"{method} " if method and method != "GET" else ""
        url = printable(url)
        if markdown:
            safe = url.replace(" ", "%20").replace("<", "%3C").replace(">", "%3E")
            return f"{prefix}<{safe}>"
        return prefix + url
    locator = printable(source.locator)
    return _code(locator) if markdown else locator


def _code(text: str) -> str:
    """A markdown code span holding ``text`` whatever backticks it contains."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|])")


def escape_markdown(text: str) -> str:
    """``text`` with markdown's special characters backslash-escaped: it shows as written
    (page text such as ``<script>`` or ``<!--`` stays text in every style)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)
