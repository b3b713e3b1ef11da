"""Exports: CSL-JSON checked against the CSL data model and read by citeproc-py, BibTeX
parsed, WARC read back with warcio (and its checker), the pack read back."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import bibtexparser
import jsonschema
import pytest

from fetchledger import BadInput, Ledger
from fetchledger.cite.export import export, read_pack

from cite_sources import seed
from conftest import table_counts

pytestmark = pytest.mark.both_backends

# The CSL 1.0.2 item types, and the parts of the CSL-JSON item schema fetchledger fills.
CSL_TYPES = [
    "article", "article-journal", "article-magazine", "article-newspaper", "bill", "book",
    "broadcast", "chapter", "classic", "collection", "dataset", "document", "entry",
    "entry-dictionary", "entry-encyclopedia", "event", "figure", "graphic", "hearing",
    "interview", "legal_case", "legislation", "manuscript", "map", "motion_picture",
    "musical_score", "pamphlet", "paper-conference", "patent", "performance", "periodical",
    "personal_communication", "post", "post-weblog", "regulation", "report", "review",
    "review-book", "software", "song", "speech", "standard", "thesis", "treaty", "webpage",
]
_DATE = {
    "type": "object",
    "properties": {
        "date-parts": {"type": "array", "minItems": 1, "maxItems": 2, "items": {
            "type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "integer"}}},
        "raw": {"type": "string"},
        "literal": {"type": "string"},
    },
    "additionalProperties": False,
}
CSL_ITEM_SCHEMA = {
    "type": "object",
    "required": ["id", "type"],
    "properties": {
        "id": {"type": ["string", "number"]},
        "type": {"enum": CSL_TYPES},
        "title": {"type": "string"},
        "URL": {"type": "string", "pattern": "^https?://"},
        "accessed": _DATE,
        "issued": _DATE,
        "author": {"type": "array", "items": {"type": "object", "properties": {
            "literal": {"type": "string"}, "family": {"type": "string"},
            "given": {"type": "string"}}, "additionalProperties": False}},
        "container-title": {"type": "string"},
        "archive_location": {"type": "string"},
        "medium": {"type": "string"},
        "page": {"type": "string"},
        "note": {"type": "string"},
    },
    "additionalProperties": False,
}


@pytest.fixture
def seeded(ledger_path: Path) -> Path:
    with Ledger(ledger_path) as ledger:
        seed(ledger)
        ledger.quotes("boiling water", k=4)  # more quotes handed out, on several sources
    return ledger_path


def test_csl_json_items_are_valid(seeded: Path, tmp_path: Path) -> None:
    out = tmp_path / "sources.json"
    with Ledger(seeded) as ledger:
        summary = export(ledger, "csl-json", out)
        sources = ledger.sources()
    items = json.loads(out.read_text(encoding="utf-8"))
    assert summary.sources == len(items) == len(sources) == 6
    jsonschema.validate(items, {"type": "array", "items": CSL_ITEM_SCHEMA})
    by_id = {item["id"]: item for item in items}
    web = by_id["fetchledger-1"]
    assert web["type"] == "webpage"
    assert web["URL"] == "https://example.org/boiling"
    day = [int(x) for x in sources[0].retrieved_at[:10].split("-")]
    assert web["accessed"] == {"date-parts": [day]}
    assert web["issued"] == {"date-parts": [[2021, 3, 3]]}
    assert web["author"] == [{"literal": "A. Writer"}]
    assert by_id["fetchledger-2"]["type"] == "report"
    assert by_id["fetchledger-4"]["type"] == "software"
    assert by_id["fetchledger-5"]["type"] == "dataset"
    assert by_id["fetchledger-6"]["type"] == "document"
    assert all("accessed" in item for item in items)


def test_csl_json_is_read_by_citeproc(seeded: Path, tmp_path: Path) -> None:
    from citeproc import (
        Citation,
        CitationItem,
        CitationStylesBibliography,
        CitationStylesStyle,
        formatter,
    )
    from citeproc.source.json import CiteProcJSON

    out = tmp_path / "sources.json"
    with Ledger(seeded) as ledger:
        export(ledger, "csl-json", out)
    source = CiteProcJSON(json.loads(out.read_text(encoding="utf-8")))
    style = CitationStylesStyle("harvard-cite-them-right", validate=False)
    bibliography = CitationStylesBibliography(style, source, formatter.plain)
    for key in ("fetchledger-1", "fetchledger-2"):
        bibliography.register(Citation([CitationItem(key)]))
    rendered = [str(entry) for entry in bibliography.bibliography()]
    web = next(entry for entry in rendered if "Boiling point" in entry)
    assert "https://example.org/boiling" in web and "Accessed" in web
    assert any("Cooking at altitude" in entry for entry in rendered)


def test_bibtex_parses(seeded: Path, tmp_path: Path) -> None:
    out = tmp_path / "sources.bib"
    with Ledger(seeded) as ledger:
        export(ledger, "bibtex", out)
    library = bibtexparser.parse_string(out.read_text(encoding="utf-8"))
    assert not library.failed_blocks
    assert [e.key for e in library.entries] == [f"fetchledger-{i}" for i in range(1, 7)]
    # web and http sources are @online (biblatex's type, pandoc's webpage); others @misc
    assert [e.entry_type for e in library.entries] == [
        "online", "misc", "online", "misc", "online", "misc"]
    web = library.entries[0].fields_dict
    assert web["url"].value == "https://example.org/boiling"
    assert web["year"].value == "2021"
    notes = library.entries[5].fields_dict
    assert notes["howpublished"].value == r"field\_notes.txt"


def test_warc_reads_back_with_warcio(seeded: Path, tmp_path: Path) -> None:
    from warcio.archiveiterator import ArchiveIterator

    out = tmp_path / "ledger.warc.gz"
    with Ledger(seeded) as ledger:
        export(ledger, "warc", out)
        texts = {s.id: ledger.text(s.id) for s in ledger.sources()}
        raws = {s.id: ledger.raw(s.id) for s in ledger.sources()}
    records = []
    with out.open("rb") as stream:
        for record in ArchiveIterator(stream, check_digests=True):
            headers = record.rec_headers
            body = record.content_stream().read()
            assert headers.protocol == "WARC/1.1"
            assert record.digest_checker.passed is not False
            records.append((record.rec_type, headers, body))
    kinds = [r[0] for r in records]
    assert kinds[0] == "warcinfo"
    assert kinds.count("conversion") == kinds.count("metadata") == 6
    assert kinds.count("response") == 3  # two web pages and one HTTP response
    assert kinds.count("resource") == 3  # the PDF, the command output, the text file
    by_id: dict[str, tuple[str, object, bytes]] = {
        str(h.get_header("WARC-Record-ID")): (t, h, b) for t, h, b in records}
    for rec_type, headers, body in records:
        if rec_type != "metadata":
            continue
        facts = json.loads(body)
        urn = f"urn:fetchledger:source:{facts['fetchledger_id']}:version:{facts['version']}"
        assert headers.get_header("WARC-Target-URI") == f"{urn}:metadata"
        conversion = next(r for r in records if r[0] == "conversion"
                          and r[1].get_header("WARC-Target-URI") == f"{urn}:text")
        assert conversion[2].decode("utf-8") == texts[facts["fetchledger_id"]]
        assert hashlib.sha256(conversion[2]).hexdigest() == facts["sha256"]
        # both point at the capture they were made from: its own record, the raw bytes
        original = by_id[headers.get_header("WARC-Refers-To")]
        assert conversion[1].get_header("WARC-Refers-To") == headers.get_header("WARC-Refers-To")
        assert original[0] in ("response", "resource")
        assert original[2] == raws[facts["fetchledger_id"]]
    response = next(h for t, h, _ in records if t == "response")
    assert response.get_header("WARC-Target-URI") == "https://example.org/boiling"
    # registered without recorded exchanges: the headers are rebuilt, and say so
    assert response.get_header("WARC-Fetchledger-Headers") == "reconstructed"
    pdf = next(h for t, h, _ in records if t == "resource")
    assert pdf.get_header("WARC-Target-URI") == "file:///data/altitude_report.pdf"


@pytest.mark.parametrize("name", ["ledger.warc", "ledger.warc.gz"])
def test_warc_passes_warcio_check(seeded: Path, tmp_path: Path, name: str) -> None:
    out = tmp_path / name
    with Ledger(seeded) as ledger:
        export(ledger, "warc", out)
    checked = subprocess.run([sys.executable, "-m", "warcio.cli", "check", "-v", str(out)],
                             capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "digest pass" in checked.stdout
    assert "fail" not in checked.stdout.lower()


def test_warc_marks_truncated_raw_bytes(ledger_path: Path, tmp_path: Path) -> None:
    from warcio.archiveiterator import ArchiveIterator

    from fetchledger import Document, Limits

    with Ledger(ledger_path, limits=Limits(max_raw_stored=10)) as ledger:
        ledger.register(Document(kind="web", locator="https://example.org/long",
                                 display="https://example.org/long", text="Long page text.",
                                 raw=b"<p>Long page text.</p>",
                                 meta={"status": 200, "content_type": "text/html"}))
        export(ledger, "warc", tmp_path / "t.warc")
    with (tmp_path / "t.warc").open("rb") as stream:
        response = next(r for r in ArchiveIterator(stream) if r.rec_type == "response")
        assert response.rec_headers.get_header("WARC-Truncated") == "length"
        assert response.content_stream().read() == b"<p>Long pag"[:10]


def test_warc_keeps_a_browser_render_as_a_resource(ledger_path: Path, tmp_path: Path) -> None:
    """The DOM after scripts ran is not what the server sent: a resource record at the
    page's URL (replayed as the page), the redirect hop before it a real response."""
    from warcio.archiveiterator import ArchiveIterator

    from fetchledger import Document

    def exchange(url: str, status: int, headers: list[list[str]]) -> dict[str, object]:
        return {"method": "GET", "url": url, "request_headers": [["Host", "example.org"]],
                "http_version": "HTTP/1.1", "status": status, "reason": "", "headers": headers}

    dom = b"<html><body><p>Rendered tide table.</p></body></html>"
    with Ledger(ledger_path) as ledger:
        ledger.register(Document(
            kind="web", locator="https://example.org/app", display="https://example.org/app",
            text="Rendered tide table.", raw=dom, extractor="browser",
            meta={"http_status": 200, "content_type": "text/html",
                  "final_url": "https://example.org/app/", "exchanges": [
                      exchange("https://example.org/app", 301, [["Location", "/app/"]]),
                      exchange("https://example.org/app/", 200,
                               [["Content-Type", "text/html"], ["Content-Length", "120"]])]}))
        export(ledger, "warc", tmp_path / "r.warc")
    with (tmp_path / "r.warc").open("rb") as stream:
        records = [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI"),
                    r.http_headers.get_statuscode() if r.http_headers else None,
                    r.content_stream().read()) for r in ArchiveIterator(stream)]
    captures = [r for r in records if r[0] in ("response", "request", "resource")]
    assert captures == [("response", "https://example.org/app", "301", b""),
                        ("request", "https://example.org/app", "/app", b""),  # GET /app
                        ("resource", "https://example.org/app/", None, dom)]


def test_pack_round_trips(seeded: Path, tmp_path: Path) -> None:
    out = tmp_path / "pack"
    with Ledger(seeded) as ledger:
        ledger.register(Document_v2())  # a second version of source [6]
        summary = export(ledger, "pack", out)
        pack = read_pack(out)
        sources = ledger.sources()
        quotes = ledger.recorded_quotes()
        assert sorted(p.name for p in out.iterdir()) == [
            "quotes.jsonl", "sources.json", "sources.md", "texts"]
        assert len(pack.sources) == len(sources) == summary.sources
        for source, packed in zip(sources, pack.sources, strict=True):
            assert packed["id"] == source.id and packed["locator"] == source.locator
            assert [v["version"] for v in packed["versions"]] == list(
                range(1, source.versions + 1))
            for version in packed["versions"]:
                assert pack.texts[(source.id, version["version"])] == ledger.text(
                    source.id, version["version"])
        assert len(pack.texts) == summary.versions == 7
        assert [(q["id"], q["version"], q["start"], q["end"], q["quote"]) for q in pack.quotes] \
            == [(q.source_id, q.version, q.start, q.end, q.text) for q in quotes]
    assert pack.sources[1]["versions"][0]["pages"][2] == [pack.sources[1]["versions"][0][
        "pages"][2][0], len(pack.texts[(2, 1)]), 3, "iii"]
    entries = [line for line in pack.sources_md.splitlines() if line.startswith("[")]
    assert [int(line[1 : line.index("]")]) for line in entries] == [1, 2, 3, 4, 5, 6]
    # a text file changed by hand no longer reads back
    (out / "texts" / "1-v1.txt").write_text("tampered", encoding="utf-8")
    with pytest.raises(BadInput, match="sha256"):
        read_pack(out)


def Document_v2() -> object:
    from fetchledger import Document

    return Document(kind="file", locator="/notes/field_notes.txt",
                    display="/notes/field_notes.txt",
                    text="Field notes\nAt the camp the kettle boiled at 85 °C on 13 May 2023.",
                    raw=b"v2", meta={"content_type": "text/plain"})


def test_pack_refuses_a_folder_with_content(seeded: Path, tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    with Ledger(seeded) as ledger, pytest.raises(BadInput, match="not an empty folder"):
        export(ledger, "pack", tmp_path / "full")
    assert [p.name for p in (tmp_path / "full").iterdir()] == ["keep.txt"]
    with Ledger(seeded) as ledger:
        export(ledger, "pack", tmp_path / "empty-ok")  # a new folder is fine
    assert (tmp_path / "empty-ok" / "sources.json").exists()


def test_exports_only_read_the_ledger(seeded: Path, tmp_path: Path) -> None:
    before = table_counts(seeded)
    with Ledger(seeded) as ledger:
        for fmt, name in (("pack", "p"), ("csl-json", "a.json"), ("bibtex", "a.bib"),
                          ("warc", "a.warc.gz")):
            export(ledger, fmt, tmp_path / name)
    assert table_counts(seeded) == before
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert leftovers == []
