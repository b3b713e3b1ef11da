"""One Sources entry per cited source, in each text style, from ledger facts only.

An entry reads: title — host, file name or command — locator — retrieval
date — pages of the cited quotes. Every part comes from the ledger; nothing
a writer typed can reach an entry.
"""

from __future__ import annotations

import itertools
import posixpath
import re
from dataclasses import dataclass
from urllib.parse import quote as percent_encode
from urllib.parse import unquote, urlsplit

from ..identity.urls import RequestLocator, split_http_locator, without_userinfo
from ..models import Source
from ..text.normalize import one_line, printable
from .evidence import Support

__all__ = [
    "Entry",
    "Title",
    "citation_title",
    "entry_parts",
    "escape_markdown",
    "http_method",
    "pages_text",
    "request",
    "request_text",
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


def request(source: Source) -> RequestLocator | None:
    """The request of an ``http`` source (method, URL, body hash), when its locator
    names one."""
    return split_http_locator(source.locator) if source.kind == "http" else None


def http_method(source: Source) -> str | None:
    """The method of an ``http`` source's request, when its locator names one."""
    sent = request(source)
    return sent.method if sent else None


def source_url(source: Source) -> str | None:
    """The address to follow: the request URL of web and http sources (never the
    method or body hash beside it in the locator), without user-info."""
    if source.kind not in ("web", "http"):
        return None
    sent = request(source)
    return without_userinfo(sent.url if sent else source.locator)


def request_text(source: Source, *, full: bool = False) -> str | None:
    """``PUT, body sha256 1f206b11c23e…`` for a request other than a plain GET (the
    whole hash with ``full``); None otherwise."""
    sent = request(source)
    if sent is None or (sent.method == "GET" and sent.body_sha256 is None):
        return None
    if sent.body_sha256 is None:
        return sent.method
    digest = sent.body_sha256 if full else sent.body_sha256[:12] + "…"
    return f"{sent.method}, body sha256 {digest}"


@dataclass(frozen=True)
class Title:
    """What an entry prints as the title; ``generated`` when fetchledger made it up
    (a file name, a command line, ``JSON from host/path``): its case is no style's to
    change."""

    text: str
    generated: bool


def citation_title(source: Source) -> Title:
    """The source's own title; for a JSON resource of the web named only by its last
    path segment (or nothing), ``JSON from host/path``; else the host, file name or
    command line."""
    title = one_line(source.title or "")
    url = source_url(source)
    content_type = str(source.meta.get("content_type") or "").lower()
    if url and "json" in content_type:
        parts = urlsplit(url)
        segment = unquote(parts.path.rstrip("/").rsplit("/", 1)[-1])
        if not title or title == one_line(segment):
            return Title(f"JSON from {parts.netloc}{parts.path.rstrip('/')}", generated=True)
    if not title:
        return Title(source.label, generated=True)
    return Title(title, generated=title in (source.label, posixpath.basename(source.locator)))


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
            printed = (f" (printed {printable(one_line(label))})"  # a label the source controls
                       if label and label != str(page) else "")
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
    """title — label — locator — retrieved date — pages (parts that repeat dropped, and
    the label when a made-up title already names it)."""
    source = entry.source
    title = citation_title(source)
    parts = [printable(title.text)] if title.text else []
    label = source.label
    if label and label != title.text and not (title.generated and label in title.text):
        parts.append(printable(label))
    shown = [escape_markdown(p) if markdown else escape_markup(p) for p in parts]
    locator = _locator(entry, markdown=markdown)
    if locator and _bare(locator) not in parts:
        shown.append(locator)
    shown.append(f"retrieved {source.retrieved_at[:10]}")
    pages = pages_text(entry.pages())
    if pages:
        shown.append(escape_markdown(pages) if markdown else escape_markup(pages))
    return shown


def _bare(locator: str) -> str:
    return locator.strip("`<> ")


def _locator(entry: Entry, *, markdown: bool) -> str:
    source = entry.source
    url = entry.url()
    if url is not None:
        sent = request_text(source)
        suffix = f" ({printable(sent)})" if sent else ""
        url = printable(url)
        if markdown:
            safe = url.replace(" ", "%20").replace("<", "%3C").replace(">", "%3E")
            return f"<{safe}>{suffix}"
        return escape_markup(url + suffix)
    locator = printable(source.locator)
    return _code(locator) if markdown else escape_markup(locator)


def _code(text: str) -> str:
    """A markdown code span holding ``text`` whatever backticks it contains."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|])")


def escape_markup(text: str) -> str:
    """``text`` with ``<`` and ``>`` backslash-escaped, for the plain style: no tag or
    comment of a source (``<script>``, an unterminated ``<!--``, the block's own end
    marker) opens in a draft that is later read as HTML or Markdown, nor a link
    (``[x](javascript:…)``: the ``(`` after ``]`` escaped)."""
    return _LINK_TARGET.sub(r"]\\(", _MARKUP.sub(r"\\\1", text))


_MARKUP = re.compile(r"([<>])")
# ``[x](javascript:…)`` of a title would be a link in a draft read as Markdown: ``]\(``
# is text there (a plain URL's own ``[::1]`` stays as written)
_LINK_TARGET = re.compile(r"\]\(")


def escape_markdown(text: str) -> str:
    """``text`` with markdown's special characters backslash-escaped: it shows as written
    (page text such as ``<script>`` or ``<!--`` stays text in every style)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)
