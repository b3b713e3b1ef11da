"""The WARC 1.1 export."""

from __future__ import annotations

import http
import io
import json
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import quote as percent_encode

from .._version import __version__
from ..models import Source
from .entries import source_url
from .outputs import Selection

if TYPE_CHECKING:
    from ..ledger import Ledger

__all__ = ["write_warc"]



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


def write_warc(ledger: Ledger, chosen: Selection, out: IO[bytes], *, gzip: bool,
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
    for quote in chosen.quotes:
        quotes_by_version.setdefault((quote.source_id, quote.version), []).append({
            "start": quote.start, "end": quote.end, "page": quote.page, "quote": quote.text})
    for source in chosen.sources:
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
                "search": [hit.to_json() for hit in details.searches],
                "quotes": quotes_by_version.get((source.id, number), []),
            }
            payload = json.dumps(facts, ensure_ascii=False, indent=2).encode("utf-8")
            metadata = writer.create_warc_record(
                uri, "metadata", payload=io.BytesIO(payload), length=len(payload),
                warc_content_type="application/json",
                warc_headers_dict={"WARC-Date": date, "WARC-Refers-To":
                                   conversion.rec_headers.get_header("WARC-Record-ID")})
            writer.write_record(metadata)


