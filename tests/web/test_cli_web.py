"""The fetch and curl verbs: output, exit codes, one-line errors, rows in the SQLite file,
and secrets that never reach the ledger files."""

from __future__ import annotations

import base64
import contextlib
import json
import re
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import pytest

from fetchledger import Ledger

from .conftest import StubDNS
from .webserver import LoopbackServer
from conftest import rows, stored_bytes, table_counts

pytestmark = pytest.mark.both_backends

SNIPPET = re.compile(r'^\[(\d+)\] "(.*)"( \(p\. [^)]+\))?$')


def one_line_errors(stderr: str) -> list[str]:
    lines = stderr.strip().splitlines()
    assert all(line.startswith(("fetchledger: error: ", "hint: ", "fetchledger: warning: "))
               for line in lines), stderr
    return [line for line in lines if line.startswith("fetchledger: error: ")]


def test_fetch_prints_snippets_and_registers(web: LoopbackServer, run_cli: Any,
                                             ledger_path: Path) -> None:
    result = run_cli("fetch", "--allow-private", web.url("/pages/article"), "-k", "2")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "[1] How honeybees find their way home — 127.0.0.1"
    assert len(lines) == 3 and all(SNIPPET.match(line) for line in lines[1:])
    assert rows(ledger_path, "SELECT id, kind, locator, title FROM source") == [
        (1, "web", web.url("/pages/article"), "How honeybees find their way home")]
    assert rows(ledger_path, "SELECT count(*) FROM quote") == [(2,)]


def test_fetch_json_keeps_argument_order_with_failures(web: LoopbackServer, run_cli: Any,
                                                       ledger_path: Path) -> None:
    result = run_cli("--json", "--allow-private", "fetch", web.url("/status/404"),
                     web.url("/pages/news"), "-q", "Fresnel lens")
    assert result.exit_code == 3
    data = json.loads(result.stdout)
    assert data[0] == {"input": web.url("/status/404"), "error": {
        "status": "http_error", "message": "HTTP 404 Not Found"}}
    assert data[1]["source"]["id"] == 1 and data[1]["source"]["kind"] == "web"
    assert "Fresnel lens" in data[1]["snippets"][0]["quote"]
    errors = one_line_errors(result.stderr)
    assert errors == [f"fetchledger: error: {web.url('/status/404')}: http_error: "
                      "HTTP 404 Not Found"]
    assert rows(ledger_path, "SELECT status FROM attempt ORDER BY id") == [("http_error",),
                                                                           ("ok",)]


@pytest.mark.parametrize("url", ["ftp://example.com/", "example.com/page", "http://",
                                 "http://exa mple.com/", "javascript:alert(1)"])
def test_fetch_bad_url_is_exit_2_and_records_nothing(run_cli: Any, ledger_path: Path,
                                                     url: str) -> None:
    result = run_cli("fetch", url)
    assert result.exit_code == 2 and result.stdout == ""
    assert len(one_line_errors(result.stderr)) == 1
    assert set(table_counts(ledger_path).values()) <= {0}


def test_fetch_blocked_address_names_the_switch(web: LoopbackServer, run_cli: Any,
                                                ledger_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    before = web.connections
    result = run_cli("fetch", web.url("/pages/article"))
    assert result.exit_code == 3
    [error] = one_line_errors(result.stderr)
    assert "blocked_address" in error and "--allow-private" in error
    assert web.connections == before
    assert rows(ledger_path, "SELECT status FROM attempt") == [("blocked_address",)]
    assert run_cli("fetch", "--allow-host", "127.0.0.1", web.url("/pages/article")
                   ).exit_code == 0
    monkeypatch.setenv("FETCHLEDGER_ALLOW_PRIVATE", "1")
    assert run_cli("fetch", web.url("/pages/news")).exit_code == 0
    assert table_counts(ledger_path)["source"] == 2


def test_fetch_empty_page_is_exit_3_without_id(web: LoopbackServer, run_cli: Any,
                                               ledger_path: Path) -> None:
    result = run_cli("fetch", "--allow-private", "--render", "never", web.url("/pages/js-shell"))
    assert result.exit_code == 3 and result.stdout == ""
    assert "empty_content" in one_line_errors(result.stderr)[0]
    assert table_counts(ledger_path)["source"] == 0


def test_fetch_robots_flag(web: LoopbackServer, run_cli: Any) -> None:
    from .webserver import Reply

    web.replies["robots"] = Reply(200, {}, b"User-agent: fetchledger\nDisallow: /pages/\n")
    result = run_cli("fetch", "--allow-private", "--robots", web.url("/pages/news"))
    assert result.exit_code == 3 and "robots_denied" in result.stderr
    assert run_cli("fetch", "--allow-private", web.url("/pages/news")).exit_code == 0


def test_curl_get_is_the_same_source_as_fetch(web: LoopbackServer, run_cli: Any,
                                              ledger_path: Path) -> None:
    assert run_cli("fetch", "--allow-private", web.url("/pages/news")).exit_code == 0
    result = run_cli("curl", "-sS", web.url("/pages/news?utm_source=x"), "--allow-private")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("[1] Harbour town opens")
    assert table_counts(ledger_path)["source"] == 1


def test_curl_post_json_is_an_http_source(web: LoopbackServer, run_cli: Any,
                                          ledger_path: Path) -> None:
    result = run_cli("--json", "curl", "--allow-private", "--json", '{"q": "tides"}',
                     web.url("/echo"), "--query", "tides")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)  # the global --json: JSON output
    assert data[0]["source"]["kind"] == "http"
    assert data[0]["source"]["locator"].startswith(f"POST {web.url('/echo')} body:sha256=")
    echoed = web.hits[-1]
    assert echoed.method == "POST" and echoed.body == b'{"q": "tides"}'  # curl's --json: body
    assert echoed.headers["Content-Type"] == "application/json"
    again = run_cli("curl", "--allow-private", "-X", "POST", "--json", '{"q": "tides"}',
                    web.url("/echo"))
    assert again.exit_code == 0
    other = run_cli("curl", "--allow-private", "--json", '{"q": "bees"}', web.url("/echo"))
    assert other.exit_code == 0
    assert [k for (k,) in rows(ledger_path, "SELECT kind FROM source ORDER BY id")] == \
        ["http", "http"]
    fetched = run_cli("fetch", "--allow-private", web.url("/echo"))  # a GET: a third source
    assert fetched.exit_code == 0 and fetched.stdout.startswith("[3] ")


def test_curl_without_location_does_not_follow(web: LoopbackServer, run_cli: Any,
                                               ledger_path: Path) -> None:
    result = run_cli("curl", "--allow-private", web.url("/redirect/1"))
    assert result.exit_code == 3
    [error] = one_line_errors(result.stderr)
    assert "http_error" in error and "redirects to " + web.url("/pages/article") in error
    assert "-L" in result.stderr
    assert table_counts(ledger_path)["source"] == 0
    followed = run_cli("curl", "--allow-private", "-L", web.url("/redirect/1"))
    assert followed.exit_code == 0
    assert rows(ledger_path, "SELECT locator FROM source") == [(web.url("/redirect/1"),)]


@pytest.mark.parametrize(("target", "status"), [
    ("ftp://files.example/x", "blocked_address"),
    ("http://intranet.test/admin", "blocked_address"),
    ("http://169.254.169.254/latest/", "blocked_address"),
    ("http://[::1", "http_error"),
])
def test_curl_redirect_targets(web: LoopbackServer, run_cli: Any, dns: StubDNS,
                               ledger_path: Path, target: str, status: str) -> None:
    dns["intranet.test"] = ["10.0.0.5"]
    for follow in ((), ("-L",)):
        result = run_cli("curl", "--allow-host", "127.0.0.1", *follow,
                         web.url(f"/redirect-to?url={target}"))
        assert result.exit_code == 3
        assert status in one_line_errors(result.stderr)[0]
    assert rows(ledger_path, "SELECT status FROM attempt") == [(status,), (status,)]


@pytest.mark.parametrize("args", [
    ["-k", "https://example.com/"], ["--frobnicate", "https://example.com/"], ["-s"],
    ["https://a.example/", "https://b.example/"], ["-H", "broken", "https://a.example/"],
    ["ftp://example.com/"], ["-X", "GET POST", "https://a.example/"],
])
def test_curl_bad_arguments_are_exit_2_and_record_nothing(run_cli: Any, ledger_path: Path,
                                                          args: list[str]) -> None:
    result = run_cli("curl", *args)
    assert result.exit_code == 2 and result.stdout == ""
    assert len(one_line_errors(result.stderr)) == 1
    assert set(table_counts(ledger_path).values()) <= {0}


def test_curl_head(web: LoopbackServer, run_cli: Any, ledger_path: Path) -> None:
    result = run_cli("curl", "--allow-private", "-I", web.url("/pages/news"))
    assert result.exit_code == 0, result.stderr
    assert web.hits[-1].method == "HEAD"
    text = rows(ledger_path, "SELECT text FROM version")[0][0]
    assert str(text).startswith("HTTP/1.1 200 OK\n")
    assert rows(ledger_path, "SELECT kind, locator FROM source") == [
        ("http", f"HEAD {web.url('/pages/news')}")]


SECRETS = ("Bearer-tok-9f8e7d6c", "qtok-1a2b3c4d5e", "hunter2hunter2", "sid-77aa88bb99",
           "ak-0011223344")


def test_curl_secrets_never_reach_the_ledger_files(web: LoopbackServer, run_cli: Any,
                                                   ledger_path: Path | str) -> None:
    Ledger(ledger_path).close()  # create the ledger, then hold it open: the WAL stays on disk
    with contextlib.ExitStack() as stack:
        if isinstance(ledger_path, Path):
            holder = stack.enter_context(contextlib.closing(sqlite3.connect(ledger_path)))
            holder.execute("SELECT count(*) FROM source").fetchall()
        calls = [
            ["curl", "--allow-private", "-H", f"Authorization: Bearer {SECRETS[0]}",
             web.url(f"/echo?q=bees&token={SECRETS[1]}"), "-u", f"alice:{SECRETS[2]}",
             "-b", f"sid={SECRETS[3]}", "-H", f"X-Api-Key: {SECRETS[4]}"],
            ["curl", "--allow-private", "-X", "POST", "-d", f"password={SECRETS[2]}&q=1",
             "-H", f"Authorization: Bearer {SECRETS[0]}", web.url(f"/echo?api_key={SECRETS[1]}")],
            ["curl", "--allow-private", "-H", f"Authorization: Bearer {SECRETS[0]}",
             web.url(f"/status/401?token={SECRETS[1]}")],
            ["--json", "curl", "--allow-private", "-u", f"alice:{SECRETS[2]}",
             web.url(f"/redirect/1?signature={SECRETS[4]}")],
            ["list"], ["list", "--failed"], ["--json", "list"], ["--json", "list", "--failed"],
            ["show", "1"], ["--json", "show", "1"], ["show", "2", "--text"],
        ]
        printed = ""
        for call in calls:
            result = run_cli(*call)
            printed += result.stdout + result.stderr
        sent = next(hit for hit in web.hits if hit.path.startswith("/echo?q=bees"))
        assert sent.headers.get("Authorization") == f"Bearer {SECRETS[0]}"  # it was sent
        if isinstance(ledger_path, Path):
            files = [p for p in ledger_path.parent.iterdir()
                     if p.name.startswith(ledger_path.name)]
            assert {p.name for p in files} >= {"ledger.db", "ledger.db-wal", "ledger.db-shm"}
        stored = stored_bytes(ledger_path)
        blobs = [zlib.decompress(raw) for (raw,) in rows(ledger_path, "SELECT raw FROM version")
                 if raw]
        assert len(blobs) == 2 and b"REDACTED" in blobs[0]
        for secret in (*SECRETS, base64.b64encode(f"alice:{SECRETS[2]}".encode()).decode()):
            assert secret.encode() not in stored, secret
            for blob in blobs:
                assert secret.encode() not in blob
            assert secret not in printed
        locators = [str(loc) for (loc,) in rows(ledger_path, "SELECT locator FROM attempt")]
        assert any("token=REDACTED" in loc for loc in locators)
