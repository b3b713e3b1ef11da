"""The WARC export as real archive tools read it: pywb 2.10 (its own indexer and its
WSGI replay app, run in pywb's virtualenv by ``tests/web/pywb_replay.py``), warcio's
checker and FastWARC (digests verified). Sources come from real fetches of the
loopback server: a page behind two redirects, a brotli-coded page, a page fetched
with credentials and a secret query parameter, a cookie set on a redirect, a
``curl -X PUT``, a JSON endpoint, a file and a command.

Each client is skipped, saying so, when it is not installed; under
``FETCHLEDGER_TEST_CLIENTS=1`` (CI, where ``make test`` installs them) it fails
instead."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fetchledger import Ledger, Source
from fetchledger.cite import export

from .webserver import LoopbackServer, site_page

pytestmark = pytest.mark.both_backends

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("pywb_replay.py")
SECRET = "s3cret-pass"
TOKEN = "tok-5f6e7d8c9b"


def _missing(reason: str) -> None:
    if os.environ.get("FETCHLEDGER_TEST_CLIENTS") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


@dataclass(frozen=True)
class Archived:
    base: str
    warc: Path
    article: Source  # fetched through /redirect/2 -> /redirect/1 -> /pages/article
    news_br: Source  # brotli on the wire
    secret: Source  # user-info and ?token= in the URL
    cookie: Source  # /needs-cookie -> /set-cookie (Set-Cookie) -> /needs-cookie
    put: Source  # curl -X PUT -d x=1 /echo
    echo: Source  # GET /echo (after the PUT)
    data: Source  # application/json
    raws: dict[int, bytes]


@pytest.fixture
def archived(ledger_path: Path, web: LoopbackServer, tmp_path: Path) -> Archived:
    notes = tmp_path / "notes.txt"
    notes.write_text("Field notes.\nThe tide came in at six.\n", encoding="utf-8")
    secret_url = web.url(f"/pages/article?token={TOKEN}").replace(
        "://", f"://reader:{SECRET}@")
    with Ledger(ledger_path, allow_private=True) as ledger:
        sources = {
            "article": ledger.fetch(web.url("/redirect/2")).source,
            "news_br": ledger.fetch(web.url("/pages/news-br")).source,
            "secret": ledger.fetch(secret_url).source,
            "cookie": ledger.fetch(web.url("/needs-cookie")).source,
            "put": ledger.curl(["-X", "PUT", "-d", "x=1", web.url("/echo")]).source,
            "echo": ledger.fetch(web.url("/echo")).source,
            "data": ledger.fetch(web.url("/pages/data")).source,
        }
        ledger.curl(["-I", web.url("/pages/notes")])
        ledger.read(notes)
        ledger.run([sys.executable, "-c", "print('tide at six')"])
        warc = tmp_path / "ledger.warc.gz"
        export(ledger, "warc", warc)
        raws = {s.id: ledger.raw(s.id) for s in sources.values()}
    return Archived(web.base, warc, raws=raws, **sources)


def _records(warc: Path) -> list[tuple[str, Any, bytes]]:
    from warcio.archiveiterator import ArchiveIterator

    with warc.open("rb") as stream:
        return [(r.rec_type, r, r.content_stream().read()) for r in ArchiveIterator(stream)]


def test_exchanges_are_written_as_a_crawler_writes_them(archived: Archived) -> None:
    records = _records(archived.warc)
    page = f"{archived.base}/pages/article"
    chain = [f"{archived.base}/redirect/2", f"{archived.base}/redirect/1", page]
    hops = [(t, r) for t, r, _ in records if r.rec_headers.get_header("WARC-Target-URI")
            in chain and t in ("response", "request")]
    # each hop: its response, then the request that asked for it, linked
    assert [(t, r.rec_headers.get_header("WARC-Target-URI")) for t, r in hops] == [
        (t, u) for u in chain for t in ("response", "request")]
    for (_, response), (_, request) in zip(hops[::2], hops[1::2], strict=True):
        assert request.rec_headers.get_header("WARC-Concurrent-To") == \
            response.rec_headers.get_header("WARC-Record-ID")
        assert request.http_headers.protocol == "GET"
        assert request.http_headers.statusline.endswith(" HTTP/1.1")  # a full request line
    statuses = [r.http_headers.get_statuscode() for _, r in hops[::2]]
    assert statuses == ["302", "302", "200"]
    assert hops[0][1].http_headers.get_header("Location") == "/redirect/1"
    final = next(r for t, r, _ in records if t == "response"
                 and r.rec_headers.get_header("WARC-Target-URI") == page)
    assert final.http_headers.get_header("Content-Type") == "text/html; charset=utf-8"
    assert final.http_headers.get_header("Server")  # headers as received, not rebuilt
    assert [n for n, _ in final.http_headers.headers][:3] == ["Server", "Date", "Content-Type"]
    request = hops[-1][1]
    assert request.http_headers.get_header("User-Agent").startswith("fetchledger/")
    assert request.http_headers.get_header("Host") == archived.base.split("://")[1]
    # the text and the facts are no captures of the page: their own URIs, pointing at it
    for kind, part in (("conversion", "text"), ("metadata", "metadata")):
        own = [r for t, r, _ in records if t == kind and r.rec_headers.get_header(
            "WARC-Refers-To") == final.rec_headers.get_header("WARC-Record-ID")]
        assert [r.rec_headers.get_header("WARC-Target-URI") for r in own] == [
            f"urn:fetchledger:source:{archived.article.id}:version:1:{part}"]


def test_decoded_body_drops_the_wire_encoding(archived: Archived) -> None:
    records = _records(archived.warc)
    response = next(r for t, r, _ in records if t == "response" and r.rec_headers.get_header(
        "WARC-Target-URI") == f"{archived.base}/pages/news-br")
    body = next(b for _, r, b in records if r is response)
    assert body == site_page("news.html").encode() == archived.raws[archived.news_br.id]
    assert response.http_headers.get_header("Content-Encoding") is None
    assert response.http_headers.get_header("Content-Length") == str(len(body))


def test_no_credential_is_written(archived: Archived) -> None:
    data = _gunzipped(archived.warc)
    basic = base64.b64encode(f"reader:{SECRET}".encode()).decode()
    for secret in (SECRET, TOKEN, basic):
        assert secret.encode() not in data, secret
    records = _records(archived.warc)
    request = next(r for t, r, _ in records if t == "request" and "/pages/article?token="
                   in r.rec_headers.get_header("WARC-Target-URI"))
    assert request.http_headers.get_header("Authorization") == "REDACTED"
    assert request.rec_headers.get_header("WARC-Target-URI").endswith("?token=REDACTED")
    set_cookie = next(r for t, r, _ in records if t == "response" and r.rec_headers.get_header(
        "WARC-Target-URI").endswith("/set-cookie"))
    assert set_cookie.http_headers.get_header("Set-Cookie") == "REDACTED"
    sent = [r for t, r, _ in records if t == "request" and r.http_headers.get_header("Cookie")]
    assert sent and all(r.http_headers.get_header("Cookie") == "REDACTED" for r in sent)


def test_non_web_sources_are_resources_and_put_keeps_its_method(archived: Archived) -> None:
    records = _records(archived.warc)
    resources = [r.rec_headers.get_header("WARC-Target-URI") for t, r, _ in records
                 if t == "resource"]
    assert any(u.startswith("file:///") and u.endswith("/notes.txt") for u in resources)
    assert any(u.startswith("urn:fetchledger:command:") for u in resources)
    put = next(r for t, r, _ in records if t == "request" and r.http_headers.protocol == "PUT")
    assert put.rec_headers.get_header("WARC-Target-URI") == f"{archived.base}/echo"
    assert put.rec_headers.get_header("WARC-Truncated") == "unspecified"  # body not kept
    # a HEAD: its headers, no body (the ledger's text of it is the headers as text)
    head = next(b for t, r, b in records if t == "request" and r.http_headers.protocol == "HEAD")
    assert head == b""
    head_response = next((r, b) for t, r, b in records if t == "response" and
                         r.rec_headers.get_header("WARC-Target-URI").endswith("/pages/notes"))
    assert head_response[1] == b""
    assert head_response[0].http_headers.get_header("Content-Type").startswith("text/plain")


def _gunzipped(warc: Path) -> bytes:
    import gzip

    return gzip.decompress(warc.read_bytes())


# --- the real clients ------------------------------------------------------------------


def _pywb_python() -> str:
    found = os.environ.get("FETCHLEDGER_PYWB_PYTHON") or str(ROOT / ".venv-pywb/bin/python")
    if not Path(found).is_file():
        _missing(f"pywb is not installed ({found} is missing: `make pywb` makes pywb's own "
                 f"virtualenv with pywb 2.10 and webtest)")
    return found


def _replay(warc: Path, folder: Path, urls: list[str]) -> dict[str, Any]:
    done = subprocess.run([_pywb_python(), str(DRIVER), str(warc), str(folder), *urls],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_pywb_indexes_one_capture_per_exchange_and_replays_the_page(
        archived: Archived, tmp_path: Path) -> None:
    page = f"{archived.base}/pages/article"
    urls = [page, f"{archived.base}/redirect/2", f"{archived.base}/echo",
            f"{archived.base}/pages/data"]
    found = _replay(archived.warc, tmp_path, urls)
    # the strict indexer read every record, requests included
    assert len(found["verified"]) == sum(1 for t, _, _ in _records(archived.warc)
                                         if t != "warcinfo")
    index = [{"urlkey": line.split(" ", 1)[0], **json.loads(line.split(" ", 2)[2])}
             for line in found["index"]]
    captures = [e for e in index if e["url"] == page]
    assert [(e["mime"], e["status"]) for e in captures] == [("text/html", "200")]
    # every capture of a web URL is an HTTP response (conversion and metadata records,
    # which have no status, are under their own urn: URIs)
    assert all("status" in e for e in index if e["url"].startswith("http")), index
    keys = sorted(e["urlkey"].split(")", 1)[1] for e in index
                  if e["url"] == f"{archived.base}/echo")
    assert keys == ["/echo", "/echo?__wb_method=put"], keys
    assert any(e["url"].startswith("urn:fetchledger:source:") for e in index)
    raw = archived.raws[archived.article.id].decode("utf-8")
    exact = found["replies"][page]["id_"]
    assert exact["status"] == 200
    assert exact["body"] == raw
    assert _header(exact, "Content-Type").startswith("text/html"), exact["headers"]
    assert "fetchledger_id" not in exact["body"]
    shown = found["replies"][page]["mp_"]  # as a visitor's browser gets it
    assert shown["status"] == 200 and "<title>" in shown["body"]
    assert archived.article.title and archived.article.title in shown["body"]
    # the first URL of the chain replays its redirect, to the next hop in the archive
    hop = found["replies"][f"{archived.base}/redirect/2"]["id_"]
    assert hop["status"] == 302
    assert _header(hop, "Location").endswith("/redirect/1"), hop["headers"]
    # the PUT is keyed apart (pywb appends the method): a GET of /echo replays the GET
    echo = found["replies"][f"{archived.base}/echo"]["id_"]
    assert echo["status"] == 200 and json.loads(echo["body"])["method"] == "GET"
    assert echo["body"].encode() == archived.raws[archived.echo.id]
    data = found["replies"][f"{archived.base}/pages/data"]["id_"]
    assert data["status"] == 200
    assert data["body"].encode() == archived.raws[archived.data.id]


def _header(reply: dict[str, Any], name: str) -> str:
    return next((v for k, v in reply["headers"] if k.lower() == name.lower()), "")


def test_warcio_check_passes(archived: Archived) -> None:
    checked = subprocess.run([sys.executable, "-m", "warcio.cli", "check", "-v",
                              str(archived.warc)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "digest pass" in checked.stdout
    assert "fail" not in checked.stdout.lower()


def test_fastwarc_reads_every_record_and_verifies_its_digests(archived: Archived) -> None:
    try:
        from fastwarc.warc import ArchiveIterator, WarcRecordType
    except ImportError:
        _missing("FastWARC is not installed (pip install fastwarc; it is in the dev extra)")
    ours = _records(archived.warc)
    # the block digest is checked on the unparsed record, the payload digest after its
    # HTTP headers were parsed (FastWARC's own rule)
    for parse_http in (False, True):
        with archived.warc.open("rb") as stream:
            theirs = []
            for record in ArchiveIterator(stream, record_types=WarcRecordType.any_type,
                                          parse_http=parse_http):
                if parse_http and record.record_type == WarcRecordType.response:
                    assert record.verify_payload_digest(), record.record_id
                elif not parse_http:
                    assert record.verify_block_digest(), record.record_id
                theirs.append((str(record.record_type), record.headers.get("WARC-Target-URI")))
        assert theirs == [(t, r.rec_headers.get_header("WARC-Target-URI")) for t, r, _ in ours]
    checked = subprocess.run([str(Path(sys.executable).with_name("fastwarc")), "check",
                              str(archived.warc)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"{len(ours)} records were verified successfully" in checked.stdout
