"""Export the ledger: an evidence pack, CSL-JSON, BibTeX, or a WARC 1.1 archive.

- ``pack``: a folder with ``sources.json`` (every source, version and alias),
  ``quotes.jsonl`` (every quote handed out, one JSON object a line),
  ``sources.md`` (a Sources list of every source) and ``texts/ID-vN.txt``
  (the stored text of each version, byte for byte). :func:`read_pack` reads
  one back.
- ``csl-json``: a JSON array of CSL items; ``bibtex``: one ``@misc`` entry per
  source.
- ``warc``: per version, a ``response`` (web/http) or ``resource`` (file,
  command) record of the raw bytes the ledger kept, a ``conversion`` record
  of the stored text that refers to it, and a ``metadata`` record with the
  ledger's facts; written with warcio, gzipped per record for ``.gz`` names.

Exports only read the ledger. Outputs are written to a temporary name first
and moved into place, so a failed export leaves nothing half-written.
"""

from __future__ import annotations

import hashlib
import http
import io
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import quote as percent_encode

from .._version import __version__
from ..errors import InvalidArgument, InvalidPath
from ..models import Source
from ..store.protocol import utc_now
from .bibliography import bibtex_entry, csl_item
from .entries import Entry, entry_parts, pages_text, source_url
from .evidence import Support

if TYPE_CHECKING:
    from ..ledger import Ledger

__all__ = ["FORMATS", "ExportSummary", "Pack", "export", "read_pack"]

FORMATS = ("pack", "csl-json", "bibtex", "warc")
PACK_FORMAT = "fetchledger-pack"
PACK_VERSION = 1


@dataclass(frozen=True)
class ExportSummary:
    format: str
    path: Path
    sources: int
    versions: int
    quotes: int

    def to_json(self) -> dict[str, Any]:
        return {"format": self.format, "path": str(self.path), "sources": self.sources,
                "versions": self.versions, "quotes": self.quotes}

    def line(self) -> str:
        return (f"exported {self.sources} source{'' if self.sources == 1 else 's'} "
                f"({self.versions} version{'' if self.versions == 1 else 's'}, "
                f"{self.quotes} quote{'' if self.quotes == 1 else 's'}) as {self.format} "
                f"to {self.path}")


def export(ledger: Ledger, format: str, path: str | os.PathLike[str]) -> ExportSummary:
    """Write the whole ledger to ``path`` in ``format`` (one of :data:`FORMATS`)."""
    if format not in FORMATS:
        raise InvalidArgument(f"unknown export format {format!r}",
                              hint="one of: " + ", ".join(FORMATS))
    target = Path(path)
    if not target.parent.is_dir():
        raise InvalidPath(f"no such folder: {target.parent}")
    sources = ledger.sources()
    quotes = ledger.recorded_quotes()
    versions = sum(s.versions for s in sources)
    if format == "pack":
        _write_pack(ledger, sources, target)
    elif format == "warc":
        with _atomic_file(target) as out:
            _write_warc(ledger, sources, out, gzip=target.name.endswith(".gz"),
                        name=target.name)
    else:
        with _atomic_file(target) as out:
            out.write(_bibliography(ledger, sources, format).encode("utf-8"))
    return ExportSummary(format, target, len(sources), versions, len(quotes))


# --- bibliographies -------------------------------------------------------------------


def _entries(ledger: Ledger, sources: list[Source]) -> list[Entry]:
    by_source: dict[int, list[Support]] = {}
    for quote in ledger.recorded_quotes():
        by_source.setdefault(quote.source_id, []).append(Support(quote, handed_out=True))
    return [Entry(s.id, s, tuple(by_source.get(s.id, ()))) for s in sources]


def _bibliography(ledger: Ledger, sources: list[Source], format: str) -> str:
    entries = _entries(ledger, sources)
    if format == "csl-json":
        items = [csl_item(e.source, key=f"fetchledger-{e.number}",
                          pages=pages_text(e.pages()).partition(" ")[2] or None)
                 for e in entries]
        return json.dumps(items, ensure_ascii=False, indent=2) + "\n"
    return "".join(bibtex_entry(e.source, key=f"fetchledger-{e.number}",
                                pages=pages_text(e.pages()).partition(" ")[2] or None) + "\n\n"
                   for e in entries)


# --- pack -------------------------------------------------------------------------------


def _text_name(source_id: int, version: int) -> str:
    return f"texts/{source_id}-v{version}.txt"


def _write_pack(ledger: Ledger, sources: list[Source], target: Path) -> None:
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise InvalidArgument(f"{target} exists and is not an empty folder",
                              hint="a pack is written to a new (or empty) folder")
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        work.chmod(0o777 & ~_umask())
        (work / "texts").mkdir()
        records = []
        for source in sources:
            details = ledger.details(source.id)
            texts = ledger.texts(source.id)
            versions = []
            for version in details.versions:
                number = version["version"]
                name = _text_name(source.id, number)
                (work / name).write_bytes(texts[number].encode("utf-8"))
                pages = [[p.start, p.end, p.number, p.label]
                         for p in ledger.pages(source.id, number)]
                versions.append({**version, "text_file": name, "pages": pages})
            record = details.to_json()
            record["versions"] = versions
            records.append(record)
        manifest = {"format": PACK_FORMAT, "pack_version": PACK_VERSION,
                    "exported_at": utc_now(), "fetchledger": __version__,
                    "sources": records}
        (work / "sources.json").write_text(
            json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        with (work / "quotes.jsonl").open("w", encoding="utf-8", newline="\n") as out:
            for quote in ledger.recorded_quotes():
                out.write(json.dumps({
                    "id": quote.source_id, "version": quote.version, "start": quote.start,
                    "end": quote.end, "page": quote.page, "page_label": quote.page_label,
                    "quote": quote.text, "first_at": quote.first_at}, ensure_ascii=False)
                    + "\n")
        lines = ["# Sources", ""]
        for entry in _entries(ledger, sources):
            lines.extend([f"[{entry.number}] " + " — ".join(entry_parts(entry, markdown=True)),
                          ""])
        (work / "sources.md").write_text("\n".join(lines), encoding="utf-8")
        if target.exists():
            target.rmdir()
        work.rename(target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


@dataclass(frozen=True)
class Pack:
    """An evidence pack read back: the manifest's sources, the quotes, and the texts
    keyed by ``(source id, version)``."""

    sources: list[dict[str, Any]]
    quotes: list[dict[str, Any]]
    texts: dict[tuple[int, int], str]
    sources_md: str


def read_pack(path: str | os.PathLike[str]) -> Pack:
    """Read a pack written by ``export --format pack``, checking each text's sha256
    and each quote against its text. Raises InvalidArgument when they disagree."""
    root = Path(path)
    try:
        manifest = json.loads((root / "sources.json").read_text(encoding="utf-8"))
        quotes = [json.loads(line) for line in
                  (root / "quotes.jsonl").read_text(encoding="utf-8").splitlines() if line]
        sources_md = (root / "sources.md").read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:
        raise InvalidPath(f"{root} is not a readable fetchledger pack: {exc}") from exc
    if manifest.get("format") != PACK_FORMAT:
        raise InvalidArgument(f"{root} is not a fetchledger pack")
    texts: dict[tuple[int, int], str] = {}
    for source in manifest["sources"]:
        for version in source["versions"]:
            text = (root / version["text_file"]).read_bytes().decode("utf-8")
            if hashlib.sha256(text.encode("utf-8")).hexdigest() != version["sha256"]:
                raise InvalidArgument(f"{version['text_file']} does not match its sha256")
            texts[(source["id"], version["version"])] = text
    for quote in quotes:
        text = texts.get((quote["id"], quote["version"]))
        if text is None or text[quote["start"] : quote["end"]] != quote["quote"]:
            raise InvalidArgument(f"a quote of [{quote['id']}] is not in its text")
    return Pack(manifest["sources"], quotes, texts, sources_md)


# --- WARC -------------------------------------------------------------------------------


def _target_uri(source: Source, meta: dict[str, Any]) -> str:
    url = meta.get("final_url") or source_url(source)
    if isinstance(url, str) and url:
        return url
    if source.kind == "file":
        return Path(source.locator).as_uri() if source.locator.startswith("/") \
            else "file:" + percent_encode(source.locator)
    return f"urn:fetchledger:{source.kind}:{source.id}:" + percent_encode(source.locator, safe="")


def _status_line(meta: dict[str, Any]) -> str:
    status = meta.get("status", meta.get("http_status", 200))
    try:
        code = int(status)
        return f"{code} {http.HTTPStatus(code).phrase}"
    except (TypeError, ValueError):
        return "200 OK"


def _write_warc(ledger: Ledger, sources: list[Source], out: IO[bytes], *, gzip: bool,
                name: str) -> None:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    writer = WARCWriter(out, gzip=gzip, warc_version="1.1")
    writer.write_record(writer.create_warcinfo_record(name, {
        "software": f"fetchledger/{__version__}",
        "format": "WARC File Format 1.1",
        "description": "fetchledger sources: raw bytes, stored text, ledger metadata",
    }))
    quotes_by_version: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for quote in ledger.recorded_quotes():
        quotes_by_version.setdefault((quote.source_id, quote.version), []).append({
            "start": quote.start, "end": quote.end, "page": quote.page, "quote": quote.text})
    for source in sources:
        details = ledger.details(source.id)
        texts = ledger.texts(source.id)
        for version in details.versions:
            number = version["version"]
            meta = version["meta"]
            uri = _target_uri(source, meta)
            date = version["retrieved_at"]
            raw = ledger.raw(source.id, number)
            refers: str | None = None
            if raw:
                headers = {"WARC-Date": date}
                if version["raw_stored"] < version["raw_size"]:
                    headers["WARC-Truncated"] = "length"
                content_type = str(meta.get("content_type") or "application/octet-stream")
                if source.kind in ("web", "http") and uri.startswith(("http://", "https://")):
                    http_headers = StatusAndHeaders(_status_line(meta), [
                        ("Content-Type", content_type), ("Content-Length", str(len(raw)))],
                        protocol="HTTP/1.1")
                    record = writer.create_warc_record(
                        uri, "response", payload=io.BytesIO(raw), length=len(raw),
                        http_headers=http_headers, warc_headers_dict=headers)
                else:
                    record = writer.create_warc_record(
                        uri, "resource", payload=io.BytesIO(raw), length=len(raw),
                        warc_content_type=content_type, warc_headers_dict=headers)
                writer.write_record(record)
                refers = record.rec_headers.get_header("WARC-Record-ID")
            text = texts[number].encode("utf-8")
            headers = {"WARC-Date": date}
            if refers:
                headers["WARC-Refers-To"] = refers
            conversion = writer.create_warc_record(
                uri, "conversion", payload=io.BytesIO(text), length=len(text),
                warc_content_type="text/plain; charset=utf-8", warc_headers_dict=headers)
            writer.write_record(conversion)
            facts = {
                "fetchledger_id": source.id, "version": number, "kind": source.kind,
                "locator": source.locator, "title": source.title, "site": source.site,
                "author": source.author, "date": source.date,
                "retrieved_at": date, "sha256": version["sha256"],
                "raw_sha256": version["raw_sha256"], "raw_size": version["raw_size"],
                "raw_stored": version["raw_stored"], "extractor": version["extractor"],
                "extractor_version": version["extractor_version"], "meta": meta,
                "aliases": list(details.aliases),
                "quotes": quotes_by_version.get((source.id, number), []),
            }
            payload = json.dumps(facts, ensure_ascii=False, indent=2).encode("utf-8")
            metadata = writer.create_warc_record(
                uri, "metadata", payload=io.BytesIO(payload), length=len(payload),
                warc_content_type="application/json",
                warc_headers_dict={"WARC-Date": date, "WARC-Refers-To":
                                   conversion.rec_headers.get_header("WARC-Record-ID")})
            writer.write_record(metadata)


@contextmanager
def _atomic_file(target: Path) -> Iterator[IO[bytes]]:
    """Write to a temporary file beside ``target``, then move it into place."""
    if target.is_dir():
        raise InvalidPath(f"{target} is a folder; give a file name")
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            yield out
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
