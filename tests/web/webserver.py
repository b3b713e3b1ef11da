"""A real HTTP server on loopback for the web tests, serving authored pages.

``LoopbackServer`` is a threaded ``http.server`` (backlog raised, daemon
threads) that records every request it receives, so tests can assert that a
refused request never reached it. Routes cover what a web fetcher meets:
articles with navigation and cookie banners (``tests/web/site/``), redirects and
loops, gzip/deflate/brotli, chunked bodies, slow and stalled responses,
wrong charsets, huge bodies, decompression bombs, and pages built by JavaScript
(``/app/*``: a single-page app, one that reaches out to another host every way
it can, one that never finishes loading, one whose script never yields).

Run it by hand with ``python tests/web/webserver.py`` (prints its address).
"""

from __future__ import annotations

import gzip
import json
import socket
import ssl
import sys
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import brotli

SITE = Path(__file__).parent / "site"


@dataclass
class Hit:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


def make_pdf(pages: list[list[str]], title: str = "") -> bytes:
    """A small valid PDF with a text layer: one list of lines per page."""
    objects: list[bytes] = []
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for number, lines in enumerate(pages):
        text = "BT /F1 12 Tf 72 720 Td 16 TL " + " ".join(
            "(" + line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ") '"
            for line in lines) + " ET"
        stream = text.encode("latin-1")
        content_id = 5 + 2 * number
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources "
                       f"<< /Font << /F1 3 0 R >> >> /Contents {content_id} 0 R >>".encode())
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    info_id = len(objects) + 1
    objects.append(f"<< /Title ({title}) >>".encode("latin-1"))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for index, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % index + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += (b"trailer\n<< /Size %d /Root 1 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n"
            % (len(objects) + 1, info_id, xref))
    return bytes(out)


PDF_PAGES = [
    ["Tide tables for Kessel Point", "High water on 1 March falls at 06:42 and 19:05."],
    ["Spring tides reach 4.1 metres above chart datum.",
     "Neap tides stay below 2.3 metres."],
]


def site_page(name: str) -> str:
    return (SITE / name).read_text(encoding="utf-8")


@cache
def bomb(kind: str) -> bytes:
    """Decompression bombs: a few hundred KB that expand to 1 GiB (multi-member gzip)."""
    member = gzip.compress(b"\0" * (1 << 20), 9)
    many = member * 1024  # 1 GiB decoded, ~1 MB encoded
    if kind == "gzip":
        return many
    if kind == "gzip-gzip":
        return gzip.compress(many, 9)  # a few KB
    if kind == "deflate":
        compressor = zlib.compressobj(9)
        chunk = b"\0" * (1 << 20)
        parts = [compressor.compress(chunk) for _ in range(256)]  # 256 MiB decoded
        return b"".join(parts) + compressor.flush()
    if kind == "br":
        return brotli.compress(b"\0" * (256 << 20), quality=4)
    raise KeyError(kind)


Route = Callable[["Handler", dict[str, list[str]]], None]


@dataclass
class Reply:
    """A configurable reply for a path (tests set these on the running server)."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: LoopbackServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _dispatch(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        self.server.record(Hit(self.command, self.path, dict(self.headers.items()), body))
        query = parse_qs(parts.query)
        route = self.server.route_for(parts.path)
        if route is None:
            self.send_body(404, b"<html><body><p>Not found.</p></body></html>", "text/html")
            return
        route(self, query)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _dispatch

    # --- helpers used by routes ---

    def send_body(self, status: int, body: bytes, content_type: str | None = None,
                  headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_chunked(self, chunks: Any, content_type: str, delay: float = 0.0,
                     headers: dict[str, str] | None = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for chunk in chunks:
                if delay:
                    time.sleep(delay)
                if chunk:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def redirect(self, status: int, location: str) -> None:
        self.send_body(status, b"", headers={"Location": location})


def _page(name: str, content_type: str = "text/html; charset=utf-8",
          encoding: str = "utf-8") -> Route:
    def route(handler: Handler, _: dict[str, list[str]]) -> None:
        handler.send_body(200, site_page(name).encode(encoding), content_type)
    return route


def _compressed(coding: str, page: str = "article.html") -> Route:
    def route(handler: Handler, _: dict[str, list[str]]) -> None:
        raw = site_page(page).encode()
        body = {"gzip": gzip.compress, "deflate": zlib.compress,
                "raw-deflate": lambda b: zlib.compress(b)[2:-4],
                "br": brotli.compress, "gzip-br": lambda b: brotli.compress(gzip.compress(b)),
                }[coding](raw)
        header = {"raw-deflate": "deflate", "gzip-br": "gzip, br"}.get(coding, coding)
        handler.send_body(200, body, "text/html; charset=utf-8", {"Content-Encoding": header})
    return route


def _bomb(kind: str) -> Route:
    def route(handler: Handler, _: dict[str, list[str]]) -> None:
        coding = {"gzip-gzip": "gzip, gzip"}.get(kind, kind)
        try:
            handler.send_body(200, bomb(kind), "text/html", {"Content-Encoding": coding})
        except (BrokenPipeError, ConnectionResetError):
            handler.close_connection = True
    return route


def _redirect_chain(handler: Handler, query: dict[str, list[str]]) -> None:
    count = int(handler.path.rstrip("/").rsplit("/", 1)[-1].split("?")[0])
    target = f"/redirect/{count - 1}" if count > 1 else "/pages/article"
    handler.redirect(302, target)


def _redirect_to(handler: Handler, query: dict[str, list[str]]) -> None:
    status = int(query.get("status", ["302"])[0])
    handler.redirect(status, query["url"][0])


def _slow(handler: Handler, query: dict[str, list[str]]) -> None:
    """Drips the article out in small pieces: well-formed, just slow."""
    delay = float(query.get("delay", ["0.2"])[0])
    body = site_page("article.html").encode()
    pieces = [body[i : i + 200] for i in range(0, len(body), 200)]
    handler.send_chunked(pieces, "text/html; charset=utf-8", delay=delay)


def _stall(handler: Handler, query: dict[str, list[str]]) -> None:
    """Headers and a first piece of body, then nothing until the server stops."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/html")
    handler.send_header("Content-Length", "100000")
    handler.end_headers()
    handler.wfile.write(b"<html><body><p>The beginning of a page that never ends")
    handler.wfile.flush()
    handler.server.stopping.wait(30)
    handler.close_connection = True


def _stall_headers(handler: Handler, query: dict[str, list[str]]) -> None:
    handler.server.stopping.wait(30)
    handler.close_connection = True


def _huge(handler: Handler, query: dict[str, list[str]]) -> None:
    total = int(query.get("bytes", ["30000000"])[0])
    line = b"<p>" + b"All work and no play makes a long page. " * 20 + b"</p>\n"
    count = total // len(line) + 1
    handler.send_chunked((line * 50 for _ in range(count // 50 + 1)), "text/html")


def _announce_huge(handler: Handler, query: dict[str, list[str]]) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/html")
    handler.send_header("Content-Length", str(10**10))
    handler.end_headers()
    handler.wfile.write(b"<html>")
    handler.close_connection = True


def _reset(handler: Handler, query: dict[str, list[str]]) -> None:
    """Close the connection without a response."""
    handler.close_connection = True
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
    handler.connection.close()


def _status(handler: Handler, query: dict[str, list[str]]) -> None:
    code = int(handler.path.split("?")[0].rsplit("/", 1)[-1])
    body = f"<html><body><h1>Error {code}</h1><p>Something went wrong here.</p></body></html>"
    handler.send_body(code, body.encode(), "text/html")


def _echo(handler: Handler, query: dict[str, list[str]]) -> None:
    """The request as JSON (method, path, headers, body): what a client really sent."""
    hit = handler.server.hits[-1]
    data = {"method": hit.method, "path": hit.path, "headers": hit.headers,
            "body": hit.body.decode("utf-8", "replace")}
    handler.send_body(200, json.dumps(data, indent=1).encode(), "application/json")


def _set_cookie(handler: Handler, query: dict[str, list[str]]) -> None:
    handler.send_body(302, b"", headers={"Location": "/needs-cookie",
                                         "Set-Cookie": "consent=yes; Path=/"})


def _needs_cookie(handler: Handler, query: dict[str, list[str]]) -> None:
    if "consent=yes" in (handler.headers.get("cookie") or ""):
        _page("news.html")(handler, query)
    else:
        handler.redirect(302, "/set-cookie")


@dataclass
class Versioned:
    """A page whose content tests change; served with validators as asked, and answered
    304 Not Modified when a conditional request names the current one."""

    body: bytes
    content_type: str = "text/html; charset=utf-8"
    etag: bool = True
    last_modified: str | None = None  # an HTTP date, sent as Last-Modified

    @property
    def tag(self) -> str:
        import hashlib

        return '"' + hashlib.sha256(self.body).hexdigest()[:16] + '"'


def _versioned(handler: Handler, query: dict[str, list[str]]) -> None:
    page = handler.server.versioned.get(handler.path.split("?")[0].rsplit("/", 1)[-1])
    if page is None:
        handler.send_body(404, b"<html><body><p>Gone.</p></body></html>", "text/html")
        return
    headers = {"ETag": page.tag} if page.etag else {}
    if page.last_modified:
        headers["Last-Modified"] = page.last_modified
    match = handler.headers.get("if-none-match")
    since = handler.headers.get("if-modified-since")
    if (page.etag and match == page.tag) or (
            match is None and since is not None and since == page.last_modified):
        handler.send_body(304, b"", None, headers)
        return
    handler.send_body(200, page.body, page.content_type, headers)


def _hostile(handler: Handler, query: dict[str, list[str]]) -> None:
    """A script-built page that reaches out to ``?other=HOST:PORT`` every way it can."""
    page = site_page("app-hostile.html").replace("{{OTHER}}", query["other"][0])
    handler.send_body(200, page.encode(), "text/html; charset=utf-8")


def _reply(name: str) -> Route:
    def route(handler: Handler, _: dict[str, list[str]]) -> None:
        reply = handler.server.replies[name]
        handler.send_body(reply.status, reply.body, None, reply.headers)
    return route


ROUTES: dict[str, Route] = {
    "/pages/article": _page("article.html"),
    "/pages/news": _page("news.html"),
    "/pages/accents-cp1252": _page("accents.html", "text/html; charset=windows-1252",
                                   "cp1252"),
    "/pages/accents-wrong-header": _page("accents.html", "text/html; charset=utf-8", "cp1252"),
    "/pages/accents-utf8-as-latin1": _page("accents.html", "text/html; charset=iso-8859-1"),
    "/pages/accents-no-charset": _page("accents.html", "text/html", "cp1252"),
    "/pages/japanese": _page("japanese.html", "text/html", "shift_jis"),
    "/pages/js-shell": _page("js-shell.html"),
    "/app/shell": _page("app-shell.html"),
    "/app/app.js": _page("app.js", "text/javascript; charset=utf-8"),
    "/app/worker.js": _page("app.js", "text/javascript; charset=utf-8"),
    "/app/entries.json": _page("app-entries.json", "application/json"),
    "/app/hostile": _hostile,
    "/app/never": _page("app-never.html"),
    "/app/busy": _page("app-busy.html"),
    "/pages/notes": _page("notes.txt", "text/plain; charset=utf-8"),
    "/pages/readme": _page("readme.md", "text/markdown; charset=utf-8"),
    "/pages/data": _page("data.json", "application/json"),
    "/pages/untyped": _page("article.html", ""),
    "/empty": lambda h, q: h.send_body(200, b"", "text/html"),
    "/image": lambda h, q: h.send_body(200, b"\x89PNG\r\n\x1a\n" + b"\0" * 64, "image/png"),
    "/pdf": lambda h, q: h.send_body(200, make_pdf(PDF_PAGES, "Tide tables"),
                                     "application/pdf"),
    "/gzip": _compressed("gzip"),
    "/deflate": _compressed("deflate"),
    "/raw-deflate": _compressed("raw-deflate"),
    "/br": _compressed("br"),
    "/gzip-br": _compressed("gzip-br"),
    "/pages/news-br": _compressed("br", "news.html"),
    "/zstd": lambda h, q: h.send_body(200, b"(\xb5/\xfd", "text/html",
                                      {"Content-Encoding": "zstd"}),
    "/chunked": lambda h, q: h.send_chunked(
        [site_page("news.html").encode()[i : i + 300] for i in range(0, 2313, 300)],
        "text/html; charset=utf-8"),
    "/bomb/gzip": _bomb("gzip"),
    "/bomb/gzip-gzip": _bomb("gzip-gzip"),
    "/bomb/deflate": _bomb("deflate"),
    "/bomb/br": _bomb("br"),
    "/redirect-to": _redirect_to,
    # a redirect naming a secret the first request did not carry (a session handed out)
    "/redirect-secret/query": lambda h, q: h.redirect(
        302, "/echo?q=bees&access_token=r3dir3cted-value"),
    "/redirect-secret/path": lambda h, q: h.redirect(
        302, "/echo;jsessionid=r3dir3cted-value?q=bees"),
    # a page whose headers hand out secrets (relative URLs, a fragment, a refresh)
    "/header-secrets": lambda h, q: h.send_body(200, b"<p>Headers only.</p>", "text/html", {
        "Link": "</p?token=h3ad3rS3cret>; rel=next", "Refresh": "5; url=/cb?sig=r3fr3shS3cret",
        "Content-Location": "/a#id_token=fr4gm3ntS3cret"}),
    # a session handed out on the way: set by a redirect, sent back by the client
    "/session-then-echo": lambda h, q: h.send_body(302, b"", headers={
        "Location": "/echo?q=bees", "Set-Cookie": "sessionid=s3ss10nS3cretV; Path=/"}),
    "/loop/a": lambda h, q: h.redirect(302, "/loop/b"),
    "/loop/b": lambda h, q: h.redirect(302, "/loop/a"),
    "/no-location": lambda h, q: h.send_body(302, b""),
    "/slow": _slow,
    "/stall": _stall,
    "/stall-headers": _stall_headers,
    "/huge": _huge,
    "/announce-huge": _announce_huge,
    "/reset": _reset,
    "/echo": _echo,
    "/set-cookie": _set_cookie,
    "/needs-cookie": _needs_cookie,
    "/mutable": _reply("mutable"),
    "/robots.txt": _reply("robots"),
}


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for localhost and 127.0.0.1, and its key (EC P-256)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([
            x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


class LoopbackServer(ThreadingHTTPServer):
    """The test server. ``base`` is its URL; ``hits`` every request it received."""

    request_queue_size = 128  # socketserver's backlog of 5 stalls concurrent clients
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, host: str = "127.0.0.1", tls: tuple[Path, Path] | None = None) -> None:
        if ":" in host:
            self.address_family = socket.AF_INET6
        super().__init__((host, 0), Handler)
        self.scheme = "http"
        if tls is not None:  # (certificate, key): serve https
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.socket = context.wrap_socket(self.socket, server_side=True)
            self.scheme = "https"
        self.hits: list[Hit] = []
        self.connections = 0
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self.replies: dict[str, Reply] = {}
        self.versioned: dict[str, Versioned] = {}  # /versioned/NAME
        self.reset_replies()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients the tests cut off (timeouts, caps, closed keep-alives, refused TLS)
        are expected; anything else still prints its traceback."""
        if not isinstance(sys.exc_info()[1], (ConnectionError, ssl.SSLError, TimeoutError)):
            super().handle_error(request, client_address)
        self._thread: threading.Thread | None = None

    def reset_replies(self) -> None:
        self.versioned.clear()
        self.replies["mutable"] = Reply(200, {"Content-Type": "text/html"},
                                        b"<html><body><p>The first edition of this page says "
                                        b"the bridge opens in May.</p></body></html>")
        self.replies["robots"] = Reply(404, {"Content-Type": "text/plain"}, b"")

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def host(self) -> str:
        host = str(self.server_address[0])
        return f"[{host}]" if ":" in host else host

    @property
    def base(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    def url(self, path: str) -> str:
        return self.base + path

    def route_for(self, path: str) -> Route | None:
        if path.startswith("/redirect/"):
            return _redirect_chain
        if path.startswith("/status/"):
            return _status
        if path.startswith("/versioned/"):
            return _versioned
        if path.startswith(("/echo/", "/services/", "/api/webhooks/", "/bot", "/hooks/")):
            return _echo  # capability URLs (webhooks, bots): the secret is in the path
        return ROUTES.get(path.split(";", 1)[0])  # path parameters (;jsessionid=) ignored

    def record(self, hit: Hit) -> None:
        with self._lock:
            self.hits.append(hit)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._lock:
            self.connections += 1
        super().process_request(request, client_address)

    def start(self) -> LoopbackServer:
        self._thread = threading.Thread(target=self.serve_forever, daemon=True,
                                        kwargs={"poll_interval": 0.05})
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.shutdown()
        self.server_close()


if __name__ == "__main__":
    server = LoopbackServer().start()
    print(server.base, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
