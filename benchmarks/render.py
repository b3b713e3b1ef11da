"""JavaScript pages: what ``--render auto`` renders, and what a render costs.

1. **Which pages auto renders.** Every page of the shared HTML corpus (real
   articles, 330) goes through what ``fetch`` does with an HTML response
   (``read_response``): the plain extraction, then the empty-shell test. The
   count of pages ``auto`` would render should be 0 — they are ordinary
   article pages. The time of the test is shown beside the plain extraction's
   (baseline: ``render="never"``, the same pages, alternating order).
2. **What a render costs.** The same pages served on loopback, fetched in a
   fresh process with ``render="never"`` (the plain path, baseline) and
   ``render="always"`` (Chromium): wall time and peak memory. Memory is the
   peak, sampled every 20 ms, of the summed PSS of every process of the call
   (the fetchledger process, and for a render its render process, Playwright's
   driver and every Chromium process), found by a mark in their environment.

    .venv/bin/python benchmarks/render.py [--pages N] [--repeat R]

Part 1 skips cleanly when the corpus is absent, part 2 when no Chromium is here
(without the corpus, part 2 measures the project's own app page alone).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

from _common import CORPUS, ROOT, table

sys.path.insert(0, str(ROOT / "src"))

import httpx

from fetchledger.adapters.browser import unavailable_reason
from fetchledger.adapters.web import Shell, read_response, web_identity
from fetchledger.config import Limits
from fetchledger.errors import RetrievalFailed
from fetchledger.net.client import HTTPResponse

SITE = ROOT / "tests" / "web" / "site"
_KEY = bytes(32)  # the identity key of a ledger (any will do here)


def corpus_pages() -> list[tuple[str, Path]]:
    manifest = CORPUS / "html" / "manifest.jsonl"
    if not manifest.exists():
        return []
    entries = [json.loads(line) for line in manifest.read_text().splitlines() if line.strip()]
    return [(e["id"], CORPUS / e["html"]) for e in entries]


def _response(url: str, body: bytes) -> HTTPResponse:
    return HTTPResponse("GET", url, 200, "OK", "HTTP/1.1",
                        httpx.Headers({"content-type": "text/html"}), body, len(body))


def _read(url: str, body: bytes, render: str) -> tuple[str, float]:
    started = time.perf_counter()
    try:
        read = read_response(_response(url, body), web_identity(url, _KEY), limits=Limits(),
                             key=_KEY, render=render)  # type: ignore[arg-type]
        outcome = "render" if isinstance(read, Shell) else "plain"
    except RetrievalFailed as error:
        outcome = error.status
    return outcome, time.perf_counter() - started


def which_pages_auto_renders(pages: list[tuple[str, Path]]) -> None:
    counts: dict[str, dict[str, int]] = {"never": {}, "auto": {}}
    seconds: dict[str, list[float]] = {"never": [], "auto": []}
    rendered: list[str] = []
    for index, (name, path) in enumerate(pages):
        body, url = path.read_bytes(), f"https://corpus.example/{name}"
        order = ("never", "auto") if index % 2 else ("auto", "never")
        for mode in order:
            outcome, spent = _read(url, body, mode)
            counts[mode][outcome] = counts[mode].get(outcome, 0) + 1
            seconds[mode].append(spent)
            if mode == "auto" and outcome == "render":
                rendered.append(name)
    print(f"### Which of the {len(pages)} corpus pages `--render auto` renders\n")
    rows = [[mode, counts[mode].get("render", 0), counts[mode].get("plain", 0),
             counts[mode].get("empty_content", 0),
             sum(v for k, v in counts[mode].items() if k not in ("render", "plain",
                                                                   "empty_content")),
             statistics.median(seconds[mode]) * 1000, sum(seconds[mode])]
            for mode in ("never", "auto")]
    print(table(["mode", "rendered", "plain text", "empty_content", "other failure",
                 "median ms/page", "total s"], rows))
    print(f"\nrendered by auto: {', '.join(rendered) or 'none'}\n")


# --- part 2: the cost of a render --------------------------------------------------------

_MEASURE = """
import json, sys, time
from fetchledger import Ledger
started = time.perf_counter()
with Ledger(sys.argv[1], allow_hosts=["127.0.0.1"]) as ledger:
    got = ledger.fetch(sys.argv[2], render=sys.argv[3])
    version = ledger.details(got.source.id).versions[0]
print(json.dumps({"seconds": time.perf_counter() - started, "chars": version["characters"],
                  "extractor": version["extractor"]}))
"""


def _pss_kib(pid: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _marked(mark: bytes) -> list[str]:
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if mark in environ.read_bytes():
                found.append(environ.parent.name)
        except OSError:
            continue
    return found


def measure(url: str, render: str, folder: Path) -> dict[str, Any]:
    token = os.urandom(6).hex()
    mark = f"FETCHLEDGER_BENCH_MARK={token}"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "FETCHLEDGER_BENCH_MARK": token}
    ledger = folder / f"{os.urandom(4).hex()}.db"
    peak = 0
    process = subprocess.Popen([sys.executable, "-c", _MEASURE, str(ledger), url, render],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=env)
    needle = mark.encode() + b"\0"
    while process.poll() is None:
        peak = max(peak, sum(_pss_kib(pid) for pid in _marked(needle)))
        time.sleep(0.02)
    out, err = process.communicate()
    if process.returncode:
        raise SystemExit(f"{url} ({render}) failed: {err[-800:]}")
    result = dict(json.loads(out.strip().splitlines()[-1]))
    result["peak_mib"] = peak / 1024
    return result


class _Pages(BaseHTTPRequestHandler):
    """Serves the benchmark's pages: the project's own app and corpus pages."""

    routes: ClassVar[dict[str, tuple[Path, str]]] = {}

    def log_message(self, *_: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path not in self.routes:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        file, kind = self.routes[path]
        body = file.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def serving(routes: dict[str, tuple[Path, str]]) -> Iterator[str]:
    _Pages.routes = routes
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def render_cost(pages: list[tuple[str, Path]], repeat: int, folder: Path) -> None:
    routes = {"/app/shell": (SITE / "app-shell.html", "text/html; charset=utf-8"),
              "/app/app.js": (SITE / "app.js", "text/javascript"),
              "/app/entries.json": (SITE / "app-entries.json", "application/json")}
    for name, path in pages:
        routes[f"/corpus/{name}"] = (path, "text/html")
    rows = []
    with serving(routes) as base:
        for path in routes:
            if path.endswith((".js", ".json")):
                continue
            runs: dict[str, list[dict[str, Any]]] = {"never": [], "always": []}
            for index in range(repeat):
                for mode in (("never", "always") if index % 2 else ("always", "never")):
                    if path == "/app/shell" and mode == "never":
                        continue  # a shell: the plain path has nothing to register
                    runs[mode].append(measure(base + path, mode, folder))
            plain, rendered = runs["never"], runs["always"]

            def median(items: list[dict[str, Any]], key: str) -> float | str:
                return statistics.median(r[key] for r in items) if items else "-"

            rows.append([path.rsplit("/", 1)[-1], median(plain, "seconds"),
                         median(rendered, "seconds"), median(plain, "peak_mib"),
                         median(rendered, "peak_mib"), median(plain, "chars"),
                         median(rendered, "chars")])
    print(f"### One page fetched in a fresh process: plain (`never`, baseline) vs "
          f"rendered (`always`), median of {repeat}\n")
    print(table(["page", "plain s", "rendered s", "plain peak MiB", "rendered peak MiB",
                 "plain chars", "rendered chars"], rows))
    print("\n(time: from opening the ledger to the registered result, inside the process, "
          "first-use imports included; peak: the summed PSS of every process of the call, "
          "sampled every 20 ms)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--pages", type=int, default=4,
                        help="corpus pages rendered in part 2 (default 4)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per page and mode")
    options = parser.parse_args()
    pages = corpus_pages()
    if pages:
        which_pages_auto_renders(pages)
    else:
        print(f"part 1 skipped: {CORPUS / 'html'} is absent\n")
    reason = unavailable_reason()
    if reason is not None:
        print(f"part 2 skipped: {reason}")
        return 0
    import tempfile

    chosen = [p for p in pages if p[0].startswith("rd-")][: options.pages]
    with tempfile.TemporaryDirectory() as folder:
        render_cost(chosen, options.repeat, Path(folder))
    return 0


if __name__ == "__main__":
    sys.exit(main())
