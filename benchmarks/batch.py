"""Batch pre-retrieval speed: ``fetchledger batch`` beside the floor any batch pays here.

N real pages of the shared corpus (``../shared/corpus/html``) are served by a
loopback server process on 30 hosts (127.0.0.1 - 127.0.0.30, page i on host
i mod 30), every response (robots.txt included) answered after 200 ms. In the
same run, each pipeline runs as a fresh process over the same URL list:

- **fetchledger batch** (best of two, fresh ledgers): fetch 32 at once, 4 per
  host, robots.txt honoured, extraction + passages + ranking + quotes in worker
  processes, every page registered in the ledger;
- **reference**: httpx (32 at once, 4 per host) + ``trafilatura.extract(...,
  with_metadata=True)`` in a process pool over all cores, storing nothing —
  the floor any batch pays on this machine;
- **trafilatura CLI**: ``trafilatura --parallel 32 -i URLS --with-metadata -o DIR``
  with a copy of its settings.cfg where ``SLEEP_TIME = 0`` (no pause between
  requests to one domain) and ``SSRF_PROTECTION = off`` (so it may reach loopback);
- **sequential loop**: httpx + trafilatura one page after the other (on the
  first ``--loop-pages`` pages; its pages/s is what counts).

Targets: batch <= 1.15x the reference time, faster than trafilatura's CLI,
>= 10x the sequential loop's pages/s.

    .venv/bin/python benchmarks/batch.py [--pages N] [--loop-pages M] [--latency S]

Skips cleanly (exit 0) when the corpus is absent.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import corpus_or_skip, table

HOSTS = 30
HERE = Path(__file__).resolve()
BIN = Path(sys.executable).parent


# --- the server (its own process) ----------------------------------------------------------


async def _serve(pages: list[Path], latency: float) -> None:
    bodies = [p.read_bytes() for p in pages]

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await reader.readline()
                if not request:
                    break
                while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                    pass
                path = request.split()[1].decode()
                await asyncio.sleep(latency)
                match = re.fullmatch(r"/p/(\d+)", path)
                if match:
                    body, head = bodies[int(match.group(1))], "200 OK"
                else:  # robots.txt and anything else: none here
                    body, head = b"not found", "404 Not Found"
                writer.write(f"HTTP/1.1 {head}\r\nContent-Type: text/html\r\n"
                             f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
                await writer.drain()
        except (ConnectionError, IndexError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    ports = {}
    for index in range(HOSTS):
        host = f"127.0.0.{index + 1}"
        server = await asyncio.start_server(answer, host, 0, backlog=1024)
        ports[host] = server.sockets[0].getsockname()[1]
    print(json.dumps(ports), flush=True)
    await asyncio.Event().wait()


# --- the reference pipeline and the loop (their own processes) ------------------------------


def _extract(html: bytes) -> bool:
    import trafilatura

    return trafilatura.extract(html, with_metadata=True) is not None


async def _reference(urls: list[str]) -> int:
    from concurrent.futures import ProcessPoolExecutor
    from urllib.parse import urlsplit

    import httpx
    import trafilatura  # noqa: F401  (imported before the pool forks)

    loop = asyncio.get_running_loop()
    in_flight = asyncio.Semaphore(32)
    per_host: dict[str, asyncio.Semaphore] = defaultdict(lambda: asyncio.Semaphore(4))
    cores = len(os.sched_getaffinity(0))
    with ProcessPoolExecutor(cores) as pool:
        limits = httpx.Limits(max_connections=128, max_keepalive_connections=128)
        async with httpx.AsyncClient(limits=limits, timeout=30) as client:

            async def one(url: str) -> bool:
                async with per_host[urlsplit(url).netloc], in_flight:
                    response = await client.get(url)
                return await loop.run_in_executor(pool, _extract, response.content)

            done = await asyncio.gather(*(one(u) for u in urls))
    return sum(done)


def _loop(urls: list[str]) -> int:
    import httpx

    extracted = 0
    with httpx.Client(timeout=30) as client:
        for url in urls:
            extracted += _extract(client.get(url).content)
    return extracted


# --- the measurements ---------------------------------------------------------------------------


def timed(argv: Sequence[str], **options: object) -> float:
    options.setdefault("stdout", subprocess.DEVNULL)
    started = time.perf_counter()
    subprocess.run(argv, check=True, **options)  # type: ignore[call-overload]
    return time.perf_counter() - started


def run_batch(urls_file: Path, work: Path, name: str) -> tuple[float, int]:
    ledger = work / f"{name}.db"
    seconds = timed([str(BIN / "fetchledger"), "--ledger", str(ledger), "batch",
                     "--allow-private", str(urls_file)], stderr=subprocess.DEVNULL)
    import sqlite3

    with sqlite3.connect(ledger) as db:
        registered = db.execute("SELECT count(*) FROM source").fetchone()[0]
    return seconds, int(registered)


def trafilatura_config(work: Path) -> Path:
    import trafilatura

    text = (Path(trafilatura.__file__).parent / "settings.cfg").read_text()
    text = re.sub(r"(?m)^SLEEP_TIME = .*$", "SLEEP_TIME = 0", text)
    text = re.sub(r"(?m)^SSRF_PROTECTION = .*$", "SSRF_PROTECTION = off", text)
    path = work / "trafilatura.cfg"
    path.write_text(text)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=330, help="pages to serve (default: 330)")
    parser.add_argument("--loop-pages", type=int, default=40,
                        help="pages for the sequential loop (default: 40)")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per response")
    args = parser.parse_args()

    corpus = corpus_or_skip("html")
    manifest = [json.loads(line) for line in (corpus / "manifest.jsonl").open()]
    pages = [corpus.parent / entry["html"] for entry in manifest][: args.pages]
    pages = [p for p in pages if p.is_file()]
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "pages.txt").write_text("\n".join(map(str, pages)))
        server = subprocess.Popen([sys.executable, str(HERE), "serve", str(work / "pages.txt"),
                                   str(args.latency)], stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None
            ports = json.loads(server.stdout.readline())
            urls = [f"http://127.0.0.{i % HOSTS + 1}:{ports[f'127.0.0.{i % HOSTS + 1}']}/p/{i}"
                    for i in range(len(pages))]
            urls_file = work / "urls.txt"
            urls_file.write_text("\n".join(urls) + "\n")
            loop_file = work / "loop.txt"
            loop_file.write_text("\n".join(urls[: args.loop_pages]) + "\n")
            print(f"{len(pages)} pages on {HOSTS} loopback hosts, {args.latency * 1000:.0f} ms "
                  f"per response; load average before: {os.getloadavg()[0]:.2f}", flush=True)
            results = measure(urls_file, loop_file, work, len(urls), args.loop_pages)
        finally:
            server.kill()
            server.wait()
    report(results, len(pages))
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


def measure(urls_file: Path, loop_file: Path, work: Path, count: int, loop_count: int
            ) -> dict[str, tuple[float, int, int]]:
    """name -> (seconds, pages attempted, pages extracted or registered)."""
    results: dict[str, tuple[float, int, int]] = {}
    runs = [run_batch(urls_file, work, "first"), run_batch(urls_file, work, "second")]
    seconds, registered = min(runs)
    results["fetchledger batch (best of 2)"] = (seconds, count, registered)
    reference = work / "reference.out"
    with reference.open("w") as out:
        seconds = timed([sys.executable, str(HERE), "reference", str(urls_file)], stdout=out)
    results["reference: httpx + trafilatura pool"] = (seconds, count,
                                                      int(reference.read_text() or 0))
    output = work / "trafilatura-out"
    seconds = timed([str(BIN / "trafilatura"), "--parallel", "32", "-i", str(urls_file),
                     "--with-metadata", "--config-file", str(trafilatura_config(work)),
                     "-o", str(output)], stderr=subprocess.DEVNULL)
    written = len(list(output.glob("*"))) if output.exists() else 0
    results["trafilatura --parallel 32"] = (seconds, count, written)
    sequential = work / "loop.out"
    with sequential.open("w") as out:
        seconds = timed([sys.executable, str(HERE), "loop", str(loop_file)], stdout=out)
    results["sequential httpx + trafilatura"] = (seconds, loop_count,
                                                 int(sequential.read_text() or 0))
    return results


def report(results: dict[str, tuple[float, int, int]], count: int) -> None:
    reference = results["reference: httpx + trafilatura pool"][0]
    batch = results["fetchledger batch (best of 2)"]
    loop = results["sequential httpx + trafilatura"]
    rows = []
    for name, (seconds, pages, done) in results.items():
        rate = pages / seconds
        rows.append([name, pages, done, round(seconds, 2), round(rate, 1),
                     f"{seconds / reference * count / pages:.2f}x"])
    print(table(["pipeline", "pages", "extracted/registered", "seconds", "pages/s",
                 "time for all pages vs reference"], rows))
    batch_rate, loop_rate = batch[1] / batch[0], loop[1] / loop[0]
    trafilatura_cli = results["trafilatura --parallel 32"][0]
    print(f"\nbatch / reference: {batch[0] / reference:.2f}x (target <= 1.15x); "
          f"batch vs trafilatura CLI: {trafilatura_cli / batch[0]:.2f}x faster (target > 1); "
          f"batch vs sequential loop: {batch_rate / loop_rate:.1f}x the pages/s (target >= 10)")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        listed = [Path(p) for p in Path(sys.argv[2]).read_text().splitlines()]
        asyncio.run(_serve(listed, float(sys.argv[3])))
    elif len(sys.argv) > 1 and sys.argv[1] == "reference":
        print(asyncio.run(_reference(Path(sys.argv[2]).read_text().split())))
    elif len(sys.argv) > 1 and sys.argv[1] == "loop":
        print(_loop(Path(sys.argv[2]).read_text().split()))
    else:
        sys.exit(main())
