"""Keeping evidence checkable: what ``refresh`` and ``reextract`` cost, and what they find.

**refresh.** N corpus pages (``../shared/corpus/html``) are served by a threaded
loopback server that counts the bytes it reads and writes; one set of URLs
sends an ETag and answers ``If-None-Match`` with 304, a second set of the same
pages sends no validator. A ledger fetches every page once; then, in
alternating rounds (best of R), the same unchanged pages are checked again:

- ``refresh`` (ETag): conditional requests, a 304 for each page;
- ``refresh`` (no validators): full GETs, extraction, compared with the version;
- ``fetch`` again, the plain re-fetch (one after the other, as refresh goes);
- ``batch --refresh``: the concurrent plain re-fetch (32 at once, 4 per host).

**reextract.** Every corpus page is fetched into a ledger by today's code and by
the code of ``--old-ref`` (default ``73a995d``: v0.1, before the real-pages
extraction fixes of issue 11), run from a ``git archive`` of that commit. Then
today's ``reextract --all`` runs on both, on two copies of each: in one process
and in batch's worker processes (one per usable core); pages per second (beside
extracting the same raw bytes alone, no ledger), how many texts change, how
many of the quotes the old code handed out no longer stand.

    .venv/bin/python benchmarks/replay.py [--pages N] [--rounds R] [--old-ref REF]

Skips cleanly (exit 0) when the corpus is absent.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fetchledger import Ledger
from fetchledger.adapters.extract import decode_html, extract_html
from fetchledger.batch.worker import usable_cores

from _common import corpus_or_skip, git_source, table


class _Counting:
    """A file-like that counts what is written through it."""

    def __init__(self, inner: Any, server: PageServer) -> None:
        self.inner, self.server = inner, server

    def write(self, data: bytes) -> int:
        with self.server.lock:
            self.server.sent += len(data)
        return int(self.inner.write(data))

    def flush(self) -> None:
        self.inner.flush()

    def __getattr__(self, name: str) -> Any:
        # the rest of the file interface (``closed``, ``close``: socketserver's finish)
        return getattr(self.inner, name)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: PageServer

    def setup(self) -> None:
        super().setup()
        self.wfile = _Counting(self.wfile, self.server)  # type: ignore[assignment]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        with self.server.lock:
            self.server.received += len(self.raw_requestline) + len(bytes(self.headers))
            self.server.requests += 1
        kind, _, number = self.path.strip("/").partition("/")
        try:
            body = self.server.bodies[int(number)]
        except (ValueError, IndexError):
            self._send(404, b"not found", {})
            return
        if kind != "etag":
            self._send(200, body, {"Content-Type": "text/html"})
            return
        tag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
        if self.headers.get("If-None-Match") == tag:
            self._send(304, b"", {"ETag": tag})
        else:
            self._send(200, body, {"Content-Type": "text/html", "ETag": tag})

    def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if status != 304:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class PageServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, bodies: list[bytes]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.bodies = bodies
        self.lock = threading.Lock()
        self.sent = self.received = self.requests = 0
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def url(self, kind: str, number: int) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/{kind}/{number}"

    def counted(self, work: Callable[[], object]) -> tuple[float, int, int, int]:
        """Seconds, bytes sent, bytes received and requests of ``work``."""
        with self.lock:
            sent, received, requests = self.sent, self.received, self.requests
        started = time.perf_counter()
        work()
        seconds = time.perf_counter() - started
        with self.lock:
            return (seconds, self.sent - sent, self.received - received,
                    self.requests - requests)


def corpus_pages(limit: int | None = None) -> list[Path]:
    corpus = corpus_or_skip("html")
    manifest = [json.loads(line) for line in (corpus / "manifest.jsonl").open()]
    pages = [corpus.parent / entry["html"] for entry in manifest]
    return pages[:limit] if limit else pages


# --- refresh ----------------------------------------------------------------------------


def bench_refresh(pages: list[Path], rounds: int, folder: Path) -> None:
    server = PageServer([p.read_bytes() for p in pages])
    etag = [server.url("etag", i) for i in range(len(pages))]
    plain = [server.url("plain", i) for i in range(len(pages))]
    ledger = Ledger(folder / "refresh.db", allow_private=True)
    ledger.batch([*etag, *plain])
    by_url = {s.locator: s.id for s in ledger.sources()}
    etag_ids, plain_ids = [by_url[u] for u in etag], [by_url[u] for u in plain]
    runs: dict[str, list[tuple[float, int, int, int]]] = {}
    checks: dict[str, Callable[[], object]] = {
        "refresh (ETag: 304s)": lambda: _unchanged(ledger.refresh(etag_ids)),
        "refresh (no validators: full GETs)": lambda: _unchanged(ledger.refresh(plain_ids)),
        "fetch again (plain re-fetch)": lambda: ledger.fetch_many(plain),
        "batch --refresh (concurrent re-fetch)": lambda: ledger.batch(plain, refresh=True),
    }
    for round_ in range(rounds):
        order = list(checks.items())
        for name, work in order if round_ % 2 == 0 else reversed(order):
            runs.setdefault(name, []).append(server.counted(work))
    ledger.close()
    server.shutdown()
    baseline = min(r[0] for r in runs["fetch again (plain re-fetch)"])
    rows = []
    for name, measured in runs.items():
        seconds, sent, received, requests = min(measured)
        rows.append([name, requests, f"{seconds:.2f}", f"{baseline / seconds:.1f}x",
                     f"{sent / 1e6:.2f}", f"{received / 1e3:.1f}"])
    print(f"\n### refresh of {len(pages)} unchanged pages (best of {rounds})\n")
    print(table(["check", "requests", "seconds", "speed vs re-fetch", "MB sent by server",
                 "KB of requests"], rows))


def _unchanged(outcomes: list[Any]) -> None:
    changed = [o for o in outcomes if o.changed or o.error]
    assert not changed, f"unchanged pages changed: {changed[:3]}"


# --- reextract --------------------------------------------------------------------------


def build_with(source: Path | None, ledger: Path, urls: list[str]) -> float:
    """Batch the URLs into ``ledger`` with the code in ``source`` (today's when None)."""
    listing = ledger.with_suffix(".urls")
    listing.write_text("\n".join(urls) + "\n")
    env = {**os.environ, "FETCHLEDGER_LEDGER": str(ledger)}
    if source is not None:
        env["PYTHONPATH"] = str(source)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "fetchledger", "batch", "--allow-private",
                    "--no-robots", str(listing)], env=env, check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def bench_reextract(pages: list[Path], old_ref: str, folder: Path) -> None:
    bodies = [p.read_bytes() for p in pages]
    server = PageServer(bodies)
    urls = [server.url("plain", i) for i in range(len(pages))]
    (folder / "old").mkdir()
    old = git_source(old_ref, folder / "old")
    rows = []
    started = time.perf_counter()
    for body in bodies:  # (imports and first-call costs included, as in reextract)
        with contextlib.suppress(Exception):  # a page that fails, fails in both
            extract_html(decode_html(body, None))
    alone = time.perf_counter() - started
    rows.append(["extraction alone (decode + extract_html, no ledger)", len(bodies),
                 f"{alone:.1f}", f"{len(bodies) / alone:.1f}", "—", "—", "—", "—", "—"])
    for label, source in (("built by today's code", None),
                          (f"built by {old_ref} (v0.1)", old)):
        if label.startswith("built by " + old_ref) and source is None:
            rows.append([f"{label}: no git archive of {old_ref} here", *["—"] * 8])
            continue
        path = folder / f"{'today' if source is None else 'old'}.db"
        build_with(source, path, urls)
        twin = path.with_suffix(".twin.db")
        shutil.copyfile(path, twin)  # the same ledger for each way of extracting
        for ledger_path, workers in ((path, 1), (twin, None)):
            rows.append(_reextracted(ledger_path, workers, label))
    server.shutdown()
    print(f"\n### reextract over {len(pages)} corpus pages\n")
    print(table(["run", "pages", "seconds", "pages/s", "CPU s here", "CPU s in workers",
                 "texts changed", "failed", "recorded quotes drifted"], rows))


def _reextracted(path: Path, workers: int | None, label: str) -> list[object]:
    """One ``reextract --all`` of the ledger at ``path``: its table row."""
    with Ledger(path) as ledger:
        quotes = len(ledger.recorded_quotes())
        cpu_before = _cpu()
        started = time.perf_counter()
        outcomes = ledger.reextract(workers=workers)
        seconds = time.perf_counter() - started
        cpu_after = _cpu()
    here, children = (cpu_after[0] - cpu_before[0], cpu_after[1] - cpu_before[1])
    changed = sum(o.changed for o in outcomes)
    failed = sum(o.error is not None for o in outcomes)
    drifted = sum(len(o.drifted) for o in outcomes)
    how = "in one process" if workers == 1 else f"{usable_cores()} workers"
    return [f"reextract --all ({how}), ledger {label}", len(outcomes), f"{seconds:.1f}",
            f"{len(outcomes) / seconds:.1f}", f"{here:.1f}", f"{children:.1f}",
            f"{changed} ({changed / len(outcomes):.0%})", failed, f"{drifted} of {quotes}"]


def _cpu() -> tuple[float, float]:
    """CPU seconds (user + system) of this process and of its reaped children (the
    workers): on a shared machine the wall time says how busy it was, these what the
    work cost and where it ran."""
    own, children = (resource.getrusage(who) for who in
                     (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100, help="pages refreshed (default 100)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--old-ref", default="73a995d",
                        help="the commit whose extraction built the old ledger")
    parser.add_argument("--skip", choices=["refresh", "reextract"], action="append", default=[])
    args = parser.parse_args()
    pages = corpus_pages()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        if "refresh" not in args.skip:
            bench_refresh(pages[: args.pages], args.rounds, folder)
        if "reextract" not in args.skip:
            bench_reextract(pages, args.old_ref, folder)


if __name__ == "__main__":
    main()
