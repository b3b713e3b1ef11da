"""CSL-JSON items and BibTeX entries for ledger sources (render styles and exports)."""

from __future__ import annotations

import html
import re
from typing import Any

from ..models import Source
from ..text.normalize import one_line, printable
from .entries import citation_title, request_text, source_url

__all__ = ["bibtex_entry", "csl_item", "csl_type", "parse_date"]


def csl_type(source: Source) -> str:
    """webpage (web pages), dataset (JSON/CSV from an API), report (PDF files),
    document (other files), software (command output)."""
    content_type = str(source.meta.get("content_type") or "").lower()
    if source.kind == "command":
        return "software"
    if source.kind in ("web", "http"):
        if "json" in content_type or "csv" in content_type:
            return "dataset"
        return "webpage"
    if "pdf" in content_type or source.locator.lower().endswith(".pdf"):
        return "report"
    return "document"


def parse_date(value: str | None) -> list[int] | None:
    """``2024``, ``2024-05`` or ``2024-05-01`` (and longer ISO stamps) as date parts."""
    if not value:
        return None
    match = re.match(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?", value.strip())
    if not match:
        return None
    return [int(part) for part in match.groups() if part]


def _summary(source: Source) -> str:
    """The ledger's facts an entry's note carries: id, request, retrieval, text hash."""
    facts = [f"fetchledger source [{source.id}]"]
    sent = request_text(source, full=True)
    if sent:
        facts.append(f"HTTP {sent}")
    facts.extend([f"retrieved {source.retrieved_at}", f"text sha256 {source.sha256}"])
    if source.kind == "command" and "exit_code" in source.meta:
        facts.append(f"exit code {source.meta['exit_code']}")
    return "; ".join(facts)


def csl_item(source: Source, *, key: str, pages: str | None = None,
             url: str | None = None) -> dict[str, Any]:
    """One CSL-JSON item. ``pages`` is a page list such as ``4, 12–14``. The request
    of an http source (method, body hash) is in ``note``, never in ``URL``."""
    title = citation_title(source)
    # a made-up title keeps its case: citeproc would title-case "JSON from Api.example.org"
    shown = f'<span class="nocase">{html.escape(title.text, quote=False)}</span>' \
        if title.generated else title.text
    item: dict[str, Any] = {"id": key, "type": csl_type(source), "title": shown}
    link = url or source_url(source)
    if link:
        item["URL"] = link
    accessed = parse_date(source.retrieved_at)
    if accessed:
        item["accessed"] = {"date-parts": [accessed]}
    issued = parse_date(source.date)
    if issued:
        item["issued"] = {"date-parts": [issued]}
    elif source.date:
        item["issued"] = {"raw": source.date}
    if source.author:
        item["author"] = [{"literal": one_line(source.author)}]
    if source.site and source.kind in ("web", "http"):
        item["container-title"] = one_line(source.site)
    if source.kind in ("file", "command"):
        item["archive_location"] = source.locator
    if pages:
        item["page"] = pages
    item["note"] = _summary(source)
    return item


_BIBTEX_SPECIAL = re.compile(r"([&%$#_{}\\~^<>])")
_BIBTEX_WORDS = {"\\": r"\textbackslash{}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                 "<": r"\textless{}", ">": r"\textgreater{}"}


def _bibtex_text(text: str) -> str:
    # one pass, so that the braces of ``\\textbackslash{}`` are not escaped again (they
    # printed ``\\{}``); ``<``/``>`` as commands: no markup
    text = _BIBTEX_SPECIAL.sub(lambda m: _BIBTEX_WORDS.get(m.group(1), "\\" + m.group(1)),
                               printable(text))
    return re.sub("-(?=-)", "-{}", text)  # `--` would print as a dash


def _bibtex_url(url: str) -> str:
    # url fields are read verbatim; only braces (and spaces) would break the entry
    return url.replace("{", "%7B").replace("}", "%7D").replace(" ", "%20")


def bibtex_entry(source: Source, *, key: str, pages: str | None = None,
                 url: str | None = None) -> str:
    """One ``@online`` (web and http sources) or ``@misc`` entry, read alike by
    biblatex, pandoc and BibTeX (which takes ``@online`` as ``@misc``): the title in
    double braces (its case kept), ``date`` (biblatex) beside ``year``/``month``,
    ``url`` and ``urldate = {YYYY-MM-DD}``; ``howpublished`` names the site when known,
    else the host, file or command."""
    title = citation_title(source).text
    fields: list[tuple[str, str]] = [("title", "{{" + _bibtex_text(title) + "}}")]
    if source.author:
        fields.append(("author", "{{" + _bibtex_text(one_line(source.author)) + "}}"))
    issued = parse_date(source.date)
    if issued:
        fields.append(("date", "{" + "-".join(f"{part:02d}" for part in issued) + "}"))
        fields.append(("year", str(issued[0])))
        if len(issued) > 1:
            fields.append(("month", str(issued[1])))
    site = one_line(source.site or "") if source.kind in ("web", "http") else ""
    fields.append(("howpublished", "{" + _bibtex_text(site or source.label) + "}"))
    link = url or source_url(source)
    if link:
        fields.append(("url", "{" + _bibtex_url(link) + "}"))
    fields.append(("urldate", "{" + source.retrieved_at[:10] + "}"))
    if pages:
        fields.append(("pages", "{" + _bibtex_text(pages).replace("–", "--") + "}"))
    if source.kind in ("file", "command"):
        fields.append(("addendum", "{" + _bibtex_text(one_line(source.locator)) + "}"))
    fields.append(("note", "{" + _bibtex_text(_summary(source)) + "}"))
    body = ",\n".join(f"  {name} = {value}" for name, value in fields)
    kind = "online" if source.kind in ("web", "http") else "misc"
    return f"@{kind}{{{key},\n{body}\n}}"
