"""JavaScript pages in a real headless Chromium (DESIGN §8), served on loopback.

The test server is allowed as ``--allow-host 127.0.0.1``; a second server on
127.0.0.2 stands for a host the policy refuses, and must hear nothing whatever
the page tries. Without Chromium these tests skip, except where
``FETCHLEDGER_TEST_BROWSER=1`` (CI) says a browser must be here: then they fail.
Renders take 2-4 s each, so there are few of them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fetchledger import Ledger
from fetchledger.adapters.browser import unavailable_reason
from fetchledger.config import Limits
from fetchledger.errors import RetrievalTimeout

from .webserver import LoopbackServer
from conftest import rows

REQUIRED = os.environ.get("FETCHLEDGER_TEST_BROWSER") == "1"
pytestmark = pytest.mark.skipif(unavailable_reason() is not None and not REQUIRED,
                                reason=f"no browser: {unavailable_reason()}")

ENTRY = "In the winter of 1881 the harbour froze for eleven days, and no ship came in or went out."


@pytest.fixture
def other() -> Iterator[LoopbackServer]:
    server = LoopbackServer("127.0.0.2").start()
    yield server
    server.stop()


def _ledger(path: Path, **limits: Any) -> Ledger:
    return Ledger(path, allow_hosts=["127.0.0.1"], limits=Limits(**limits))


def _processes_marked(mark: str) -> list[int]:
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if f"FETCHLEDGER_TEST_MARK={mark}".encode() in environ.read_bytes():
                found.append(int(environ.parent.name))
        except OSError:
            continue
    return found


def test_a_script_built_page_is_rendered_and_registered(web: LoopbackServer,
                                                        ledger_path: Path) -> None:
    with _ledger(ledger_path) as ledger:
        got = ledger.fetch(web.url("/app/shell"), query="harbour froze")
        text = ledger.text(got.source.id)
        details = ledger.details(got.source.id)
        raw = ledger.raw(got.source.id)
    assert ENTRY in text.split("\n")
    assert got.snippets[0].quote == ENTRY
    assert got.source.title == "The harbour log of Kessel Point"
    version = details.versions[0]
    assert version["extractor"] == "browser"
    assert version["extractor_version"].startswith("Chromium ")
    assert b"<article><h1>The harbour log of Kessel Point</h1>" in raw  # the DOM is stored
    facts = version["meta"]["browser"]
    assert facts["requests"]["fetch"] == 1 and facts["refused"] == []
    assert facts["load_event"] and facts["network_quiet"]
    assert got.warnings == ()
    # the page itself was fetched once (by the plain fetch); the browser fetched the rest
    paths = [h.path for h in web.hits[-3:]]
    assert paths == ["/app/shell", "/app/app.js", "/app/entries.json"]


def test_render_never_keeps_the_plain_result(web: LoopbackServer, ledger_path: Path) -> None:
    before = len(web.hits)
    with _ledger(ledger_path) as ledger, pytest.raises(Exception) as caught:
        ledger.fetch(web.url("/app/shell"), render="never")
    assert getattr(caught.value, "status", None) == "empty_content"
    assert [h.path for h in web.hits[before:]] == ["/app/shell"]


def test_every_request_to_a_refused_host_is_refused_and_counted(
        web: LoopbackServer, other: LoopbackServer, ledger_path: Path) -> None:
    """fetch, XHR, beacon, WebSocket, EventSource, image, stylesheet, iframe, preconnect,
    prefetch, a redirect, a popup, a download, a service worker and file: — the
    refused host hears nothing, and the page still renders from its own host."""
    url = web.url(f"/app/hostile?other=127.0.0.2:{other.port}")
    before = len(web.hits)
    with _ledger(ledger_path) as ledger:
        got = ledger.fetch(url, render="always")
        facts = ledger.details(got.source.id).versions[0]["meta"]["browser"]
        text = ledger.text(got.source.id)
    assert other.connections == 0
    assert ENTRY in text.split("\n")
    refused = {r["target"].split("127.0.0.2:", 1)[-1].split(" ", 1)[0] for r in facts["refused"]}
    port = str(other.port)
    for path in ("/secret", "/xhr", "/pixel.png", "/style.css", "/frame", "/redirected"):
        assert f"{port}{path}" in refused, (path, facts["refused"])
    assert port in refused  # the WebSocket's tunnel: CONNECT 127.0.0.2:PORT
    assert all("address policy" in r["reason"] for r in facts["refused"])
    assert any("refused" in w and "127.0.0.2" in w for w in got.warnings)
    assert facts["downloads_refused"] == 1 and facts["websockets"] == 1
    served = [h.path for h in web.hits[before:]]
    assert "/app/worker.js" not in served  # service workers are blocked
    assert "/pages/notes?popup" not in served  # the popup blocker stopped window.open


def test_a_page_that_never_finishes_loading_is_read_at_the_deadline(
        web: LoopbackServer, ledger_path: Path) -> None:
    started = time.monotonic()
    with _ledger(ledger_path, render_timeout=6.0) as ledger:
        got = ledger.fetch(web.url("/app/never"))
        facts = ledger.details(got.source.id).versions[0]["meta"]["browser"]
    assert time.monotonic() - started < 6.0 + 3.0
    assert ENTRY in ledger_text(ledger_path, got.source.id)
    assert facts["load_event"] is False and "navigation_error" in facts


def test_a_page_whose_script_never_yields_times_out_and_leaves_no_process(
        web: LoopbackServer, ledger_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mark = os.urandom(6).hex()
    monkeypatch.setenv("FETCHLEDGER_TEST_MARK", mark)
    started = time.monotonic()
    with _ledger(ledger_path, render_timeout=5.0) as ledger, \
            pytest.raises(RetrievalTimeout, match="render deadline"):
        ledger.fetch(web.url("/app/busy"), render="always")
    assert time.monotonic() - started < 5.0 + 4.0
    assert _processes_marked(mark) == []
    assert rows(ledger_path, "SELECT status FROM attempt") == [("timeout",)]


KILLED_FETCH = """
import sys
from fetchledger import Ledger
with Ledger(sys.argv[1], allow_hosts=["127.0.0.1"]) as ledger:
    ledger.fetch(sys.argv[2])
"""


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_death_mid_render_leaves_no_browser_process(web: LoopbackServer, ledger_path: Path,
                                                    sig: signal.Signals) -> None:
    mark = os.urandom(6).hex()
    env = {**os.environ, "FETCHLEDGER_TEST_MARK": mark}
    before = len(web.hits)
    fetcher = subprocess.Popen([sys.executable, "-c", KILLED_FETCH, str(ledger_path),
                                web.url("/app/never")], env=env)
    try:
        deadline = time.monotonic() + 30
        while "/stall-headers" not in [h.path for h in web.hits[before:]]:  # Chromium loads
            assert time.monotonic() < deadline and fetcher.poll() is None
            time.sleep(0.05)
        assert len(_processes_marked(mark)) > 3  # python, the render process, node, chromium
        fetcher.send_signal(sig)
        fetcher.wait()
        killed = time.monotonic()
        while _processes_marked(mark) and time.monotonic() - killed < 2.0:
            time.sleep(0.05)
        assert _processes_marked(mark) == []
    finally:
        fetcher.kill()


def test_batch_renders_shells_in_its_own_pool_and_plain_pages_do_not_wait(
        web: LoopbackServer, ledger_path: Path) -> None:
    """One renderer, busy with a page that loads until the deadline: the plain pages
    after it finish long before it does."""
    finished: list[str] = []
    inputs = [web.url("/app/never"), web.url("/app/shell")] + [
        web.url(f"/pages/article?copy={n}") for n in range(6)]
    with _ledger(ledger_path, render_timeout=6.0, batch_renderers=1) as ledger:
        outcomes = ledger.batch(inputs, on_outcome=lambda _, shown: finished.append(shown))
        facts = [ledger.details(o.source.id).versions[0] for o in outcomes[:2]]
    assert all(o.source.title for o in outcomes)  # every input registered
    assert [v["extractor"] for v in facts] == ["browser", "browser"]
    assert facts[0]["meta"]["browser"]["load_event"] is False
    plain = [u for u in inputs if "/pages/" in u]
    assert finished[:6] == [u for u in finished if u in plain]  # all plain pages first
    assert set(finished[-2:]) == {inputs[0], inputs[1]}


def test_batch_render_never_and_always(web: LoopbackServer, ledger_path: Path) -> None:
    with _ledger(ledger_path) as ledger:
        [never] = ledger.batch([web.url("/app/shell")], render="never")
        [always] = ledger.batch([web.url("/pages/notes"), ], render="always")
    assert getattr(never, "status", None) == "empty_content"
    assert ledger_versions(ledger_path, always)[0]["extractor"] == "text"  # not HTML


def ledger_versions(path: Path, outcome: Any) -> list[dict[str, Any]]:
    with Ledger(path) as ledger:
        return list(ledger.details(outcome.source.id).versions)


def ledger_text(path: Path, source_id: int) -> str:
    with Ledger(path) as ledger:
        return ledger.text(source_id)


# --- real private and metadata addresses, inside a network namespace ----------------

IN_NAMESPACE = """
import json, subprocess, sys
sys.path.insert(0, sys.argv[1])
from web.webserver import LoopbackServer
from fetchledger import Ledger
from fetchledger.errors import FetchLedgerError

subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
hosts = ["10.0.0.5", "169.254.169.254", "192.88.99.1"]
for host in hosts:
    subprocess.run(["ip", "addr", "add", host + "/32", "dev", "lo"], check=True)
servers = {host: LoopbackServer(host).start() for host in hosts}
public = servers["192.88.99.1"]
results = {}
for name, target, options in [
        ("private", "10.0.0.5", {}),
        ("metadata", "169.254.169.254", {}),
        ("metadata-under-allow-private", "169.254.169.254", {"allow_private": True})]:
    before = {h: s.connections for h, s in servers.items()}
    url = public.url("/app/hostile?other=%s:%d" % (target, servers[target].port))
    with Ledger(sys.argv[2] + "/" + name + ".db", **options) as ledger:
        try:
            got = ledger.fetch(url, render="always")
            facts = ledger.details(got.source.id).versions[0]["meta"]["browser"]
            results[name] = {"status": "ok", "refused": len(facts["refused"]),
                             "text": ledger.text(got.source.id)}
        except FetchLedgerError as error:
            results[name] = {"status": error.status, "message": error.message}
    results[name]["hits"] = {h: s.connections - before[h] for h, s in servers.items()}
print(json.dumps(results))
"""


def _can_unshare_net() -> bool:
    probe = subprocess.run(["unshare", "-n", "ip", "link", "set", "lo", "up"],
                           capture_output=True, check=False)
    return probe.returncode == 0


@pytest.mark.skipif(not _can_unshare_net(), reason="needs `unshare -n` (root in a sandbox)")
def test_private_and_metadata_servers_in_a_network_namespace(tmp_path: Path) -> None:
    """A public page (192.88.99.1) whose scripts reach for a private and a metadata
    server that really are there: they hear nothing, unless --allow-private opens the
    private one (the metadata one stays closed)."""
    done = subprocess.run(["unshare", "-n", sys.executable, "-c", IN_NAMESPACE,
                           str(Path(__file__).parent.parent), str(tmp_path)],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    for name, target in (("private", "10.0.0.5"), ("metadata", "169.254.169.254"),
                         ("metadata-under-allow-private", "169.254.169.254")):
        result = results[name]
        assert result["status"] == "ok", result
        assert ENTRY in result["text"].split("\n")
        assert result["hits"][target] == 0, (name, result["hits"])
        assert result["refused"] >= 6
        assert result["hits"]["192.88.99.1"] >= 3  # the page's own requests went through
