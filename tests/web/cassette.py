"""Recorded HTTP exchanges (``cassettes/*.yaml``): recorder and respx replayer.

A cassette is human-readable YAML: for each hop of an exchange, the request
(method, URL, body) and the response (status, the headers that matter, and the
body). Text bodies are stored as text with the charset that turns them back
into the exact bytes received; binary bodies (PDF) as base64. The recorded
Content-Encoding is kept, and replay compresses the body again with it, so the
client's decoding runs as it did live.

Recording: the pages are authored (``tests/web/site/``) and served by the
loopback test server (``tests/web/webserver.py``). The recorder requests each
planned path hop by hop and writes the exchange with the loopback origin
replaced by the cassette's public-looking origin (``*.example``)::

    .venv/bin/python tests/web/cassette.py            # re-record every cassette
    .venv/bin/python tests/web/cassette.py article    # re-record one

Replay: :func:`replay` registers every hop on a respx router.
"""

from __future__ import annotations

import base64
import gzip
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import brotli
import httpx
import yaml

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes"
KEPT_HEADERS = ("content-type", "content-encoding", "location", "set-cookie", "last-modified",
                "etag")


@dataclass(frozen=True)
class Plan:
    """What to record: a path on the test server, shown under ``origin``."""

    name: str
    origin: str
    path: str
    description: str
    method: str = "GET"
    body: str | None = None
    headers: tuple[tuple[str, str], ...] = ()


PLANS = (
    Plan("article", "https://field-review.example", "/gzip",
         "An article with navigation, a cookie banner, related links and a footer (gzip)."),
    Plan("news-redirect", "https://coastline-daily.example",
         "/redirect-to?status=301&url=/pages/news-br",
         "A news page behind a 301 redirect, brotli-compressed."),
    Plan("accents-cp1252", "https://liege-cafes.example", "/pages/accents-cp1252",
         "A windows-1252 page declared in the Content-Type header."),
    Plan("accents-wrong-header", "https://liege-cafes.example",
         "/pages/accents-wrong-header",
         "A windows-1252 page whose header wrongly says UTF-8."),
    Plan("japanese-sjis", "https://fuji-weather.example", "/pages/japanese",
         "A Shift_JIS page declared only in <meta charset>."),
    Plan("data-json", "https://api.kessel-point.example", "/pages/data", "A JSON document."),
    Plan("notes-text", "https://tidepools.example", "/pages/notes",
         "Hard-wrapped plain text."),
    Plan("readme-markdown", "https://lanterns.example", "/pages/readme", "A Markdown file."),
    Plan("tide-tables-pdf", "https://kessel-point.example", "/pdf", "A two-page PDF."),
    Plan("js-shell", "https://dashboard.example", "/pages/js-shell",
         "An app shell that needs JavaScript: no readable text."),
    Plan("empty", "https://dashboard.example", "/empty", "A 200 with an empty body."),
    Plan("not-found", "https://field-review.example", "/status/404", "A 404 page."),
    Plan("gone", "https://field-review.example", "/status/410", "A 410 page."),
    Plan("server-error", "https://field-review.example", "/status/503", "A 503 page."),
    Plan("image", "https://field-review.example", "/image", "A PNG image."),
    Plan("redirect-loop", "https://loop.example", "/loop/a",
         "Two pages redirecting to each other."),
    Plan("cookie-wall", "https://coastline-daily.example", "/set-cookie",
         "A consent redirect that sets a cookie the next page requires."),
    Plan("api-post", "https://api.kessel-point.example", "/echo",
         "A JSON POST whose response echoes the request.", method="POST",
         body='{"station": "Kessel Point", "limit": 2}',
         headers=(("Content-Type", "application/json"),)),
)


def _body_fields(body: bytes, content_type: str) -> dict[str, Any]:
    """The body as text with the charset that re-creates the bytes, else base64."""
    if not body:
        return {"body": ""}
    declared = httpx.Headers({"content-type": content_type}).get("content-type", "")
    charsets = [part.split("=", 1)[1].strip().strip('"') for part in declared.split(";")[1:]
                if part.strip().lower().startswith("charset=")]
    for charset in (*charsets, "utf-8", "shift_jis", "cp1252"):
        try:
            text = body.decode(charset)
        except (LookupError, UnicodeDecodeError):
            continue
        if text.encode(charset) == body and "\x00" not in text:
            fields: dict[str, Any] = {"body": text}
            if charset.lower() not in ("utf-8", "utf8"):
                fields["charset"] = charset
            return fields
    return {"body_base64": base64.b64encode(body).decode("ascii")}


def record(plan: Plan, base: str) -> dict[str, Any]:
    """Record ``plan`` from the server at ``base``, hop by hop (cookies carried)."""
    interactions = []
    url = base + plan.path
    method, body = plan.method, plan.body
    netloc = base.split("://", 1)[1]
    origin_netloc = plan.origin.split("://", 1)[1]
    fixed = {"User-Agent": "fetchledger-cassette-recorder", "Accept-Encoding": "gzip, deflate, br"}
    with httpx.Client(follow_redirects=False, trust_env=False, headers=fixed) as client:
        for _ in range(6):
            response = client.request(method, url, content=body, headers=dict(plan.headers))
            shown_url = plan.origin + url.removeprefix(base)
            request: dict[str, Any] = {"method": method, "url": shown_url}
            if body is not None:
                request["body"] = body
            headers = {name: response.headers[name].replace(base, plan.origin)
                       for name in KEPT_HEADERS if name in response.headers}
            content = response.content  # decoded; replay encodes it again
            if plan.path == "/echo":
                content = content.replace(netloc.encode(), origin_netloc.encode())
            interactions.append({"request": request, "response": {
                "status": response.status_code, "headers": headers,
                **_body_fields(content, headers.get("content-type", ""))}})
            location = response.headers.get("location")
            if response.status_code not in (301, 302, 303, 307, 308) or not location:
                break
            url = str(httpx.URL(url).join(location))
            if not url.startswith(base):
                break
            if response.status_code == 303 or method == "POST":
                method, body = "GET", None
    return {"name": plan.name, "description": plan.description,
            "recorded_from": "tests/web/webserver.py on loopback, origin rewritten",
            "url": plan.origin + plan.path, "interactions": interactions}


def load(name: str) -> dict[str, Any]:
    data = yaml.safe_load((CASSETTES / f"{name}.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def response_bytes(response: dict[str, Any]) -> bytes:
    """The body as it was received on the wire (content coding applied again)."""
    if "body_base64" in response:
        body = base64.b64decode(response["body_base64"])
    else:
        body = str(response.get("body", "")).encode(response.get("charset", "utf-8"))
    coding = response.get("headers", {}).get("content-encoding", "")
    for name in [n.strip() for n in coding.split(",") if n.strip()]:
        body = {"gzip": gzip.compress, "deflate": zlib.compress,
                "br": brotli.compress}[name](body)
    return body


def replay(router: Any, cassette: dict[str, Any]) -> None:
    """Register every recorded hop on a respx router (first recording of a URL wins)."""
    seen: set[tuple[str, str]] = set()
    for interaction in cassette["interactions"]:
        request, response = interaction["request"], interaction["response"]
        key = (request["method"], request["url"])
        if key in seen:
            continue
        seen.add(key)
        router.request(request["method"], request["url"]).mock(return_value=httpx.Response(
            response["status"], headers=response.get("headers", {}),
            content=response_bytes(response)))


def dump(data: dict[str, Any]) -> str:
    class Literal(yaml.SafeDumper):
        pass

    def text(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
        style = "|" if "\n" in value and value == value.rstrip(" ") else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Literal.add_representer(str, text)
    return yaml.dump(data, Dumper=Literal, allow_unicode=True, sort_keys=False, width=100)


def main(names: list[str]) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from webserver import LoopbackServer

    server = LoopbackServer().start()
    try:
        CASSETTES.mkdir(exist_ok=True)
        for plan in PLANS:
            if names and plan.name not in names:
                continue
            (CASSETTES / f"{plan.name}.yaml").write_text(dump(record(plan, server.base)),
                                                         encoding="utf-8")
            print(f"recorded cassettes/{plan.name}.yaml")
    finally:
        server.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
