"""Bibliographies as real third-party tools print them: pandoc (citeproc, reading both
the BibTeX and the CSL-JSON export; skipped with a message when pandoc is absent),
citeproc-py and bibtexparser (always). Sources come from real fetches of the loopback
server: a news page with its site, author and date, a ``curl -X PUT -d`` whose URL
must stay the request URL, a JSON endpoint, and a page fetched with credentials."""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import bibtexparser
import pytest

from fetchledger import Ledger, Source
from fetchledger.cite import export, render

from .webserver import LoopbackServer

pytestmark = pytest.mark.both_backends

NEWS_TITLE = "Harbour town opens its restored lighthouse"


@dataclass(frozen=True)
class Cited:
    base: str  # the server's address
    news: Source
    put: Source
    data: Source
    secret: Source  # fetched with user-info in its URL
    pdf: Source  # a PDF from the web (its medium must not print as "Pdf.")

    @property
    def netloc(self) -> str:
        return self.base.split("://", 1)[1]


@pytest.fixture
def cited(ledger_path: Path, web: LoopbackServer) -> Cited:
    with Ledger(ledger_path, allow_private=True) as ledger:
        return Cited(
            web.base,
            news=ledger.fetch(web.url("/pages/news")).source,
            put=ledger.curl(["-X", "PUT", "-d", "x=1", web.url("/echo")]).source,
            data=ledger.fetch(web.url("/pages/data")).source,
            secret=ledger.fetch(web.url("/pages/article").replace(
                "://", "://reader:s3cret@")).source,
            pdf=ledger.fetch(web.url("/pdf")).source)


def _exports(ledger_path: Path, folder: Path) -> tuple[Path, Path]:
    with Ledger(ledger_path) as ledger:
        export(ledger, "bibtex", folder / "sources.bib")
        export(ledger, "csl-json", folder / "sources.json")
    return folder / "sources.bib", folder / "sources.json"


def _day(stamp: str) -> str:
    """``2026-12-01T…`` as Chicago prints it: ``December 1, 2026``."""
    day = datetime.date.fromisoformat(stamp[:10])
    return f"{day:%B} {day.day}, {day.year}"


def test_entries_name_the_request_url_and_keep_method_and_body_apart(
        cited: Cited, ledger_path: Path, tmp_path: Path) -> None:
    put = cited.put
    url = f"{cited.base}/echo"
    assert " body:sha256=" in put.locator  # identity keeps it
    draft = f"The echo answered.[{put.id}]\n"
    with Ledger(ledger_path) as ledger:
        blocks = {style: render(ledger, draft, style=style).block
                  for style in ("markdown", "plain", "footnotes", "csl-json", "bibtex")}
    for style, block in blocks.items():
        assert "%20body" not in block and " body:sha256" not in block, style
    assert f"<{url}> (PUT, body sha256 " in blocks["markdown"]
    assert f" {url} (PUT, body sha256 " in blocks["plain"]
    item = json.loads(blocks["csl-json"])[0]
    assert item["URL"] == url
    assert "HTTP PUT, body sha256 " + put.locator.rsplit("=", 1)[1] in item["note"]
    entry = bibtexparser.parse_string(blocks["bibtex"]).entries[0]
    assert entry.fields_dict["url"].value == url
    with Ledger(ledger_path) as ledger:
        export(ledger, "pack", tmp_path / "pack")
    listed = (tmp_path / "pack" / "sources.md").read_text(encoding="utf-8")
    assert f"<{url}> (PUT, body sha256 " in listed and "%20body" not in listed


def test_citeproc_py_prints_titles_urls_and_dates(cited: Cited,
                                                  ledger_path: Path, tmp_path: Path) -> None:
    from citeproc import (
        Citation,
        CitationItem,
        CitationStylesBibliography,
        CitationStylesStyle,
        formatter,
    )
    from citeproc.source.json import CiteProcJSON

    _, csl = _exports(ledger_path, tmp_path)
    items = json.loads(csl.read_text(encoding="utf-8"))
    style = CitationStylesStyle("harvard-cite-them-right", validate=False)
    bibliography = CitationStylesBibliography(style, CiteProcJSON(items), formatter.plain)
    for item in items:
        bibliography.register(Citation([CitationItem(item["id"])]))
    printed = "\n".join(str(entry) for entry in bibliography.bibliography())
    base = cited.base
    assert NEWS_TITLE in printed and "Coastline Daily" in printed
    assert f"Available at: {base}/pages/news" in printed
    assert "(Accessed: " + _day(cited.news.retrieved_at) + ")" in printed
    assert f"JSON from {cited.netloc}/pages/data" in printed
    assert f"Available at: {base}/echo (" in printed
    assert "REDACTED" not in printed and "reader" not in printed and "s3cret" not in printed
    assert f"Available at: {base}/pages/article" in printed
    assert "body" not in printed and "Pdf" not in printed
    assert cited.pdf.title and f"{cited.pdf.title}. Available at: {base}/pdf" in printed


def test_bibtexparser_reads_protected_titles_and_full_dates(
        cited: Cited, ledger_path: Path, tmp_path: Path) -> None:
    bib, _ = _exports(ledger_path, tmp_path)
    library = bibtexparser.parse_string(bib.read_text(encoding="utf-8"))
    assert not library.failed_blocks
    entries = {e.key: e.fields_dict for e in library.entries}
    news = entries[f"fetchledger-{cited.news.id}"]
    assert news["title"].value == "{" + NEWS_TITLE + "}"  # double braces: case kept
    assert news["date"].value == "2023-09-02"
    assert news["howpublished"].value == "Coastline Daily"  # the site, not 127.0.0.1
    assert news["urldate"].value == cited.news.retrieved_at[:10]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", news["urldate"].value)
    secret = entries[f"fetchledger-{cited.secret.id}"]
    assert secret["url"].value == f"{cited.base}/pages/article"


@pytest.fixture(scope="module")
def pandoc() -> str:
    """Debian's pandoc; the test is skipped without it, saying so (it fails instead under
    ``FETCHLEDGER_TEST_CLIENTS=1``, as in CI, where ``make test`` installs it)."""
    found = shutil.which("pandoc")
    if found is None:
        reason = ("pandoc is not installed (Debian package pandoc: apt-get install pandoc, "
                  "or `make pandoc` as root)")
        if os.environ.get("FETCHLEDGER_TEST_CLIENTS") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return found


@pytest.mark.parametrize("export_name", ["sources.bib", "sources.json"])
def test_pandoc_citeproc_prints_both_exports(cited: Cited, ledger_path: Path, pandoc: str,
                                             tmp_path: Path, export_name: str) -> None:
    _exports(ledger_path, tmp_path)
    draft = tmp_path / "draft.md"
    draft.write_text("---\nnocite: '@*'\n---\n\nA draft.\n", encoding="utf-8")
    printed = subprocess.run(
        [pandoc, "--citeproc", "--bibliography", str(tmp_path / export_name),
         "-t", "plain", "--wrap=none", str(draft)],
        capture_output=True, text=True, check=True, timeout=60).stdout
    base = cited.base
    lines = [line for line in printed.splitlines() if line.strip()]
    news = next(line for line in lines if "lighthouse" in line.lower())
    if export_name == "sources.bib":
        assert f"“{NEWS_TITLE}.”" in news  # protected: not title-cased
    assert "Coastline Daily" in news and "September 2, 2023" in news
    assert f"{base}/pages/news" in news and "Jonas Whitlock" in news
    data = next(line for line in lines if "/pages/data" in line)
    assert f"JSON from {cited.netloc}/pages/data" in data  # a made-up title keeps case
    assert "Accessed " + _day(cited.data.retrieved_at) in data
    put = next(line for line in lines if f"{base}/echo" in line)
    assert put.startswith(f"“JSON from {cited.netloc}/echo.”")
    assert put.rstrip(".").endswith(f"{base}/echo")
    assert "body" not in printed and "REDACTED" not in printed and "s3cret" not in printed
    assert "Pdf." not in printed
    pdf = next(line for line in lines if f"{base}/pdf" in line)
    assert cited.pdf.title
    if export_name == "sources.bib":  # protected; CSL-JSON titles are the style's to case
        assert f"“{cited.pdf.title}.”" in pdf
    assert cited.pdf.title.lower() in pdf.lower()
