"""The WARC 1.1 export, written as crawlers write one, so that replay tools (pywb,
OpenWayback, ReplayWeb.page) serve the page and not fetchledger's records.

Per version of a web or HTTP source, every exchange the fetch made, redirect hops
first: a ``response`` record (the status line and headers as received, secrets
redacted), then its ``request`` record (``WARC-Concurrent-To`` the response, as
warcio and pywb's recorder write them; pywb joins a request to the response
before it and keys a non-GET exchange apart from the page). Files and command
output, which no HTTP exchange produced, are ``resource`` records; so is the
DOM of a browser render, which is not what the server sent.

The stored text (``conversion``) and the ledger's facts (``metadata``, JSON) get
their own ``urn:fetchledger:`` URIs and point at the capture with
``WARC-Refers-To``: replay tools index every record by its target URI, so records
sharing the page's URI would be indexed (and served) as captures of the page.
"""

from __future__ import annotations

import http
import io
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import quote as percent_encode
from urllib.parse import urlsplit

from .._version import __version__
from ..models import Source, json_text
from .entries import source_url
from .outputs import Selection

if TYPE_CHECKING:
    from warcio.recordloader import ArcWarcRecord
    from warcio.warcwriter import WARCWriter

    from ..ledger import Ledger

__all__ = ["write_warc"]

# The payload is the body as the ledger keeps it: decoded and de-chunked, so the
# headers that described the encoding on the wire would make replay decode it again.
_WIRE_ONLY = frozenset({"content-encoding", "transfer-encoding", "content-length"})
# What a response record of a version without recorded exchanges (a ledger written
# before fetchledger kept them) says it is.
RECONSTRUCTED = "WARC-Fetchledger-Headers"


def write_warc(ledger: Ledger, chosen: Selection, out: IO[bytes], *, gzip: bool,
               name: str) -> None:
    from warcio.warcwriter import WARCWriter

    writer = WARCWriter(out, gzip=gzip, warc_version="1.1")
    writer.write_record(writer.create_warcinfo_record(name, {
        "software": f"fetchledger/{__version__}",
        "format": "WARC File Format 1.1",
        "description": "fetchledger sources: the HTTP exchanges as received (secrets "
                       "redacted), files and command output, stored text, ledger metadata",
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
            facts = {
                "fetchledger_id": source.id, "version": number, "kind": source.kind,
                "locator": source.locator, "title": source.title, "site": source.site,
                "author": source.author, "date": source.date,
                "retrieved_at": version["retrieved_at"], "sha256": version["sha256"],
                "raw_sha256": version["raw_sha256"], "raw_size": version["raw_size"],
                "raw_stored": version["raw_stored"], "extractor": version["extractor"],
                "extractor_version": version["extractor_version"], "meta": version["meta"],
                "aliases": list(details.aliases),
                "search": [hit.to_json() for hit in details.searches],
                "quotes": quotes_by_version.get((source.id, number), []),
            }
            _VersionRecords(writer, source, version, ledger.raw(source.id, number)).write(
                texts[number], facts)


@dataclass
class _VersionRecords:
    """The records of one version: its capture, then its text and its facts."""

    writer: WARCWriter
    source: Source
    version: dict[str, Any]
    raw: bytes

    @property
    def meta(self) -> dict[str, Any]:
        return dict(self.version["meta"])

    @property
    def date(self) -> str:
        return str(self.version["retrieved_at"])

    @property
    def truncated(self) -> bool:
        return bool(self.version["raw_stored"] < self.version["raw_size"])

    def urn(self, part: str) -> str:
        return f"urn:fetchledger:source:{self.source.id}:version:{self.version['version']}:{part}"

    def write(self, text: str, facts: dict[str, Any]) -> None:
        capture = self.capture()
        refers = {"WARC-Refers-To": capture} if capture else {}
        encoded = text.encode("utf-8")
        conversion = self.record(self.urn("text"), "conversion", encoded,
                                 content_type="text/plain; charset=utf-8", headers=refers)
        payload = json_text(facts).encode("utf-8")
        self.record(self.urn("metadata"), "metadata", payload, content_type="application/json",
                    headers={"WARC-Refers-To": capture or conversion})

    def capture(self) -> str | None:
        """Write what was retrieved; the record id of the final capture (None when the
        ledger kept no bytes and no exchange for it)."""
        if self.source.kind not in ("web", "http"):
            return self.resource(_local_uri(self.source)) if self.raw else None
        exchanges = self.meta.get("exchanges")
        rendered = self.version["extractor"] == "browser"
        if not isinstance(exchanges, list) or not exchanges:
            return self.reconstructed_response(rendered)
        for hop in exchanges[:-1]:
            self.exchange(hop, b"")
        if rendered:  # the DOM after scripts ran: not the body of the final response
            return self.resource(str(exchanges[-1]["url"]),
                                 content_type="text/html; charset=utf-8")  # as serialized
        final = exchanges[-1]
        # A HEAD's stored bytes are its headers as text: the response had no body.
        return self.exchange(final, b"" if final["method"] == "HEAD" else self.raw, final=True)

    def exchange(self, stored: dict[str, Any], body: bytes, *, final: bool = False) -> str:
        """A response with the headers as received (the payload as the ledger keeps it),
        then the request that asked for it."""
        from warcio.statusandheaders import StatusAndHeaders

        received = [(str(n), str(v)) for n, v in stored["headers"]]
        headers = [(n, v) for n, v in received if n.lower() not in _WIRE_ONLY]
        headers.append(("Content-Length", str(len(body))))
        warc_headers: dict[str, str] = {}
        if final and self.truncated:
            warc_headers["WARC-Truncated"] = "length"
        elif not final and _declares_body(received):
            warc_headers["WARC-Truncated"] = "unspecified"  # a hop's body is not kept
        status = f"{stored['status']} {stored['reason'] or _phrase(stored['status'])}"
        response = self.record(
            str(stored["url"]), "response", body, headers=warc_headers,
            http_headers=StatusAndHeaders(status, headers, protocol=stored["http_version"]))
        target = urlsplit(str(stored["url"]))
        query = f"?{target.query}" if target.query else ""
        sent = [(str(n), str(v)) for n, v in stored["request_headers"]]
        request_headers = {"WARC-Concurrent-To": response}
        if _declares_body(sent):
            request_headers["WARC-Truncated"] = "unspecified"  # a request body is not kept
        line = f"{stored['method']} {target.path or '/'}{query} {stored['http_version']}"
        self.record(str(stored["url"]), "request", b"", headers=request_headers,
                    http_headers=StatusAndHeaders(line, sent, is_http_request=True))
        return response

    def reconstructed_response(self, rendered: bool) -> str | None:
        """A version from before exchanges were recorded: the final response from the
        facts the ledger kept (status, type, validators), marked as reconstructed; its
        redirect hops stay in the metadata record (their statuses were not kept)."""
        from warcio.statusandheaders import StatusAndHeaders

        uri = _web_uri(self.source, self.meta)
        if not self.raw:
            return None
        if rendered or not uri.startswith(("http://", "https://")):
            return self.resource(uri)
        meta = self.meta
        headers = [("Content-Type", _content_type(meta))]
        for field, name in (("last_modified", "Last-Modified"), ("etag", "ETag")):
            if meta.get(field):
                headers.append((name, str(meta[field])))
        headers.append(("Content-Length", str(len(self.raw))))
        status = int(meta.get("http_status") or meta.get("status") or 200)
        warc_headers = {RECONSTRUCTED: "reconstructed"}
        if self.truncated:
            warc_headers["WARC-Truncated"] = "length"
        return self.record(uri, "response", self.raw, headers=warc_headers,
                           http_headers=StatusAndHeaders(f"{status} {_phrase(status)}", headers,
                                                         protocol="HTTP/1.1"))

    def resource(self, uri: str, content_type: str | None = None) -> str:
        headers = {"WARC-Truncated": "length"} if self.truncated else {}
        return self.record(uri, "resource", self.raw, headers=headers,
                           content_type=content_type or _content_type(self.meta))

    def record(self, uri: str, kind: str, payload: bytes, *, headers: dict[str, str],
               content_type: str | None = None, http_headers: Any = None) -> str:
        """Write one record dated at the retrieval; its WARC-Record-ID."""
        record: ArcWarcRecord = self.writer.create_warc_record(
            uri, kind, payload=io.BytesIO(payload), length=len(payload),
            warc_content_type=content_type, http_headers=http_headers,
            warc_headers_dict={"WARC-Date": self.date, **headers})
        self.writer.write_record(record)
        return str(record.rec_headers.get_header("WARC-Record-ID"))


def _declares_body(headers: list[tuple[str, str]]) -> bool:
    for name, value in headers:
        if name.lower() == "transfer-encoding" or (
                name.lower() == "content-length" and value.strip() not in ("", "0")):
            return True
    return False


def _phrase(status: object) -> str:
    try:
        return http.HTTPStatus(int(str(status))).phrase
    except ValueError:
        return ""


def _content_type(meta: dict[str, Any]) -> str:
    content_type = str(meta.get("content_type") or "application/octet-stream")
    charset = meta.get("charset")
    return f"{content_type}; charset={charset}" if charset else content_type


def _web_uri(source: Source, meta: dict[str, Any]) -> str:
    url = meta.get("final_url") or source_url(source)
    return url if isinstance(url, str) and url else _local_uri(source)


def _local_uri(source: Source) -> str:
    if source.kind == "file":
        return Path(source.locator).as_uri() if source.locator.startswith("/") \
            else "file:" + percent_encode(source.locator)
    return f"urn:fetchledger:{source.kind}:{source.id}:" + percent_encode(source.locator, safe="")
