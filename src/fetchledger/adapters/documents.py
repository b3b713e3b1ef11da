"""One builder for the documents of HTML and of text, fetched (:mod:`.web`) or read
from a file (:mod:`.files`): a page is the same page whichever way it came.

- :func:`html_document`: main text and metadata through
  :func:`~.extract.extract_html`; ``<link rel=canonical>`` (absolute, secrets
  redacted) and the page's language are recorded as metadata.
- :func:`text_document`: decoded text in one of the text *forms*: ``markdown``
  (stored as its text, :mod:`.markdown`), ``text`` (prose: wrapped lines joined
  into paragraphs), ``lines`` and
  ``csv`` (one stored line per line), ``json`` (pretty-printed, one member per
  line).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from ..document import Document
from ..errors import CorruptContent, EmptyContent, InvalidURL
from ..identity import Identity
from ..identity.urls import redact_url
from ..text.normalize import clean_lines, join_wrapped_lines, text_extractor_version
from .extract import decode_html, extract_html, extractor_version
from .markdown import markdown_text

__all__ = ["TextForm", "html_document", "looks_like_html", "text_document"]

TextForm = Literal["markdown", "text", "lines", "csv", "json"]

_HTML_START = re.compile(rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b",
                         re.IGNORECASE | re.DOTALL)


def looks_like_html(raw: bytes) -> bool:
    """Whether the bytes start as an HTML document does (comments aside)."""
    return _HTML_START.match(raw[:2048]) is not None


def html_document(raw: bytes, identity: Identity, meta: dict[str, Any], *,
                  charset: str | None = None, url: str | None = None,
                  what: str = "page") -> Document:
    """The main text and metadata of an HTML page; ``url`` (secrets redacted) is where
    it came from, for metadata and a relative canonical link. EmptyContent when it has
    no readable text (``what`` names it in the message)."""
    html = decode_html(raw, charset, locator=identity.display)
    extracted = extract_html(html, url, locator=identity.display)
    if not extracted.text:
        needs_script = "<script" in html.lower()
        raise EmptyContent(
            f"the {what} has no readable text" + (" (it may be built by JavaScript, which "
                                                  "was not run)" if needs_script
                                                  else ""), locator=identity.display)
    meta = dict(meta)
    if extracted.canonical:
        canonical = _absolute(extracted.canonical, url) if url else extracted.canonical
        if canonical:
            meta["canonical_url"] = canonical
    if extracted.language:
        meta["language"] = extracted.language
    return Document(
        kind=identity.kind, locator=identity.locator, display=identity.display,
        text=extracted.text, raw=raw, title=extracted.title, site=extracted.site,
        author=extracted.author, date=extracted.date, extractor=extracted.extractor,
        extractor_version=extractor_version(), meta=meta)


def text_document(decoded: str, form: TextForm, raw: bytes, identity: Identity,
                  meta: dict[str, Any], *, title: str | None = None,
                  what: str = "body") -> Document:
    """Decoded text stored in its form; Markdown's first top-level heading (else its
    first heading) is its title (else ``title``). CorruptContent for JSON that does
    not parse; EmptyContent when nothing but whitespace is left (``what`` names it in
    the message)."""
    if form == "json":
        try:
            data = json.loads(decoded)
            shown = json.dumps(data, indent=2, ensure_ascii=False)
        except ValueError as exc:
            raise CorruptContent(f"the {what} is not valid JSON: {exc}",
                                 locator=identity.display) from exc
        except RecursionError as exc:  # a page's [[[[…: the parser's depth, not a crash
            raise CorruptContent(f"the {what} is JSON nested too deeply to read",
                                 locator=identity.display) from exc
        text = clean_lines(shown)
    elif form == "markdown":
        converted = markdown_text(decoded)
        text, title = converted.text, converted.title or title
    elif form == "text":
        text = join_wrapped_lines(decoded, markdown=False)
    else:
        text = clean_lines(decoded)
    if not text:
        raise EmptyContent(f"the {what} holds only whitespace", locator=identity.display)
    return Document(
        kind=identity.kind, locator=identity.locator, display=identity.display, text=text,
        raw=raw, title=title, extractor=form, extractor_version=text_extractor_version(),
        meta=meta)


def _absolute(href: str, base: str) -> str | None:
    import httpx  # only for a page that names a canonical URL

    try:
        return redact_url(httpx.URL(base).join(href.strip()))
    except (InvalidURL, httpx.InvalidURL, ValueError, UnicodeError):
        return None
