"""CSL-JSON items and BibTeX entries for ledger sources (render styles and exports)."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from ..models import Source
from ..text.normalize import one_line, printable
from .entries import http_method, source_url

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


def _summary(source: Source, pages: str | None) -> str:
    facts = [f"fetchledger source [{source.id}]", f"retrieved {source.retrieved_at}",
             f"text sha256 {source.sha256}"]
    if source.kind == "command" and "exit_code" in source.meta:
        facts.append(f"exit code {source.meta['exit_code']}")
    if pages:
        facts.append(pages)
    return "; ".join(facts)


def csl_item(source: Source, *, key: str, pages: str | None = None,
             url: str | None = None) -> dict[str, Any]:
    """One CSL-JSON item. ``pages`` is a page list such as ``4, 12–14``."""
    title = one_line(source.title or "") or source.label
    item: dict[str, Any] = {"id": key, "type": csl_type(source), "title": title}
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
    if source.kind == "file":
        item["archive_location"] = source.locator
        item["medium"] = PurePosixPath(source.locator).suffix.lstrip(".") or "file"
    if source.kind == "command":
        item["medium"] = "command output"
        item["archive_location"] = source.locator
    if source.kind == "http" and http_method(source) not in (None, "GET"):
        item["medium"] = f"HTTP {http_method(source)} response"
    if pages:
        item["page"] = pages
    item["note"] = _summary(source, None)
    return item


_BIBTEX_SPECIAL = re.compile(r"([&%$#_{}])")


def _bibtex_text(text: str) -> str:
    text = printable(text).replace("\\", r"\textbackslash{}")
    text = _BIBTEX_SPECIAL.sub(r"\\\1", text)
    return text.replace("~", r"\textasciitilde{}").replace("^", r"\textasciicircum{}")


def _bibtex_url(url: str) -> str:
    # url fields are read verbatim; only braces (and spaces) would break the entry
    return url.replace("{", "%7B").replace("}", "%7D").replace(" ", "%20")


def bibtex_entry(source: Source, *, key: str, pages: str | None = None,
                 url: str | None = None) -> str:
    """One ``@misc`` entry (``url``/``urldate`` for web sources, as biblatex and
    natbib read them; ``howpublished`` names the host, file or command)."""
    title = one_line(source.title or "") or source.label
    fields: list[tuple[str, str]] = [("title", "{" + _bibtex_text(title) + "}")]
    if source.author:
        fields.append(("author", "{{" + _bibtex_text(one_line(source.author)) + "}}"))
    issued = parse_date(source.date)
    if issued:
        fields.append(("year", str(issued[0])))
        if len(issued) > 1:
            fields.append(("month", str(issued[1])))
    fields.append(("howpublished", "{" + _bibtex_text(source.label) + "}"))
    link = url or source_url(source)
    if link:
        fields.append(("url", "{" + _bibtex_url(link) + "}"))
    fields.append(("urldate", "{" + source.retrieved_at[:10] + "}"))
    if pages:
        fields.append(("pages", "{" + _bibtex_text(pages.replace("–", "--")) + "}"))
    if source.kind in ("file", "command"):
        fields.append(("addendum", "{" + _bibtex_text(one_line(source.locator)) + "}"))
    fields.append(("note", "{" + _bibtex_text(_summary(source, None)) + "}"))
    body = ",\n".join(f"  {name} = {value}" for name, value in fields)
    return f"@misc{{{key},\n{body}\n}}"
