"""Batch pre-retrieval speed: ``fetchledger batch`` beside the floor any batch pays here.

N real pages of the shared corpus (``../shared/corpus/html``) are served by a
loopback server process on 30 hosts (127.0.0.1 - 127.0.0.30, page i on host
i mod 30), every response (robots.txt included) answered after 200 ms. Each
pipeline runs as a fresh process over the same URL list, on the same servers,
in alternating rounds (so load on the machine falls on all of them alike);
the best round of each counts:

- **fetchledger batch** (fresh ledger each round): fetch 32 at once, 4 per
  host, robots.txt honoured, extraction + passages + ranking + quotes in worker
  processes, every page registered in the ledger;
- **reference**: ``../shared/bench/reference_batch.py`` itself: httpx (32 at
  once, 4 per host) + ``trafilatura.bare_extraction(..., with_metadata=True)``
  in a process pool over all cores, storing nothing — the floor any batch
  pays on this machine;
- **trafilatura CLI**: ``trafilatura --parallel 32 -i URLS --with-metadata -o DIR``
  with a copy of its settings.cfg where ``SLEEP_TIME = 0`` (no pause between
  requests to one domain) and ``SSRF_PROTECTION = off`` (so it may reach loopback);
- **sequential loop**: httpx + trafilatura one page after the other (on the
  first ``--loop-pages`` pages, once; its pages/s is what counts).

Targets: batch <= 1.15x the reference time, faster than trafilatura's CLI,
>= 10x the sequential loop's pages/s.

    .venv/bin/python benchmarks/batch.py [--pages N] [--rounds R] [--loop-pages M]

Skips cleanly (exit 0) when the corpus or the reference script is absent.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED, corpus_or_skip, table

HOSTS = 30
HERE = Path(__file__).resolve()
BIN = Path(sys.executable).parent
REFERENCE = SHARED / "bench" / "reference_batch.py"


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


@contextlib.contextmanager
def loopback_pages(pages: Sequence[Path], latency: float, work: Path) -> Iterator[list[str]]:
    """Serve ``pages`` from a server process of their own on the 30 loopback hosts (page i
    on host i mod 30, every response after ``latency`` seconds); yields their URLs."""
    listing = work / "pages.txt"
    listing.write_text("\n".join(map(str, pages)))
    server = subprocess.Popen([sys.executable, str(HERE), "serve", str(listing), str(latency)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        ports = json.loads(server.stdout.readline())
        yield [f"http://127.0.0.{i % HOSTS + 1}:{ports[f'127.0.0.{i % HOSTS + 1}']}/p/{i}"
               for i in range(len(pages))]
    finally:
        server.kill()
        server.wait()


# --- the sequential loop (its own process) --------------------------------------------------


def _extract(html: bytes) -> bool:
    import trafilatura

    return trafilatura.extract(html, with_metadata=True) is not None


def _loop(urls: list[str]) -> int:
    import httpx

    extracted = 0
    with httpx.Client(timeout=30) as client:
        for url in urls:
            extracted += _extract(client.get(url).content)
    return extracted


# --- the measurements ---------------------------------------------------------------------------


CPU: list[float] = []  # CPU seconds (user + system) of each timed run and its children


def timed(argv: Sequence[str], **options: object) -> tuple[float, int]:
    """Wall seconds and exit status of one process run (its CPU seconds go to CPU)."""
    options.setdefault("stdout", subprocess.DEVNULL)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, check=False, **options)  # type: ignore[call-overload]
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall, done.returncode


def run_batch(urls_file: Path, work: Path, name: str) -> tuple[float, int]:
    """Seconds of one ``fetchledger batch`` into a fresh ledger, and the sources it holds."""
    ledger = work / f"{name}.db"
    seconds, status = timed([str(BIN / "fetchledger"), "--ledger", str(ledger), "batch",
                             "--allow-private", str(urls_file)], stderr=subprocess.DEVNULL)
    if status not in (0, 3):
        raise SystemExit(f"fetchledger batch failed with exit status {status}")
    with sqlite3.connect(ledger) as db:
        registered = db.execute("SELECT count(*) FROM source").fetchone()[0]
    return seconds, int(registered)


def run_reference(urls_file: Path) -> tuple[float, int]:
    """Seconds of one run of the shared reference script; exit 0 when every page gave
    text (it prints nothing, so the count is all or unknown)."""
    seconds, status = timed([sys.executable, str(REFERENCE), str(urls_file), "32"])
    return seconds, status


def run_trafilatura(urls_file: Path, work: Path, name: str) -> tuple[float, int]:
    output = work / f"trafilatura-{name}"
    seconds, _ = timed([str(BIN / "trafilatura"), "--parallel", "32", "-i", str(urls_file),
                        "--with-metadata", "--config-file", str(trafilatura_config(work)),
                        "-o", str(output)], stderr=subprocess.DEVNULL)
    return seconds, len(list(output.glob("*"))) if output.exists() else 0


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
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of batch, reference and trafilatura CLI (default: 3)")
    parser.add_argument("--loop-pages", type=int, default=40,
                        help="pages for the sequential loop (default: 40; 0 skips it)")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per response")
    parser.add_argument("--only-batch", action="store_true",
                        help="batch and reference only (no trafilatura CLI, no loop)")
    args = parser.parse_args()

    corpus = corpus_or_skip("html")
    if not REFERENCE.is_file():
        print(f"skipped: {REFERENCE} is absent (it lives beside the project)")
        return 0
    manifest = [json.loads(line) for line in (corpus / "manifest.jsonl").open()]
    pages = [corpus.parent / entry["html"] for entry in manifest][: args.pages]
    pages = [p for p in pages if p.is_file()]
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        with loopback_pages(pages, args.latency, work) as urls:
            urls_file = work / "urls.txt"
            urls_file.write_text("\n".join(urls) + "\n")
            print(f"{len(pages)} pages on {HOSTS} loopback hosts, {args.latency * 1000:.0f} ms "
                  f"per response, {args.rounds} rounds; load average before: "
                  f"{os.getloadavg()[0]:.2f}", flush=True)
            results = measure(urls_file, work, args)
    report(results, len(pages))
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


Runs = dict[str, list[tuple[float, int, str, float]]]  # name -> (seconds, pages, done, CPU s)


def measure(urls_file: Path, work: Path, args: argparse.Namespace) -> Runs:
    count = len(urls_file.read_text().split())
    runs: Runs = defaultdict(list)
    for round_ in range(args.rounds):
        # Alternate who goes first: a burst of load then falls on each in turn.
        order = ["batch", "reference"] if round_ % 2 == 0 else ["reference", "batch"]
        if not args.only_batch:
            order.append("trafilatura")
        for name in order:
            if name == "batch":
                seconds, registered = run_batch(urls_file, work, f"round{round_}")
                runs[BATCH].append((seconds, count, f"{registered:,}", CPU[-1]))
            elif name == "reference":
                seconds, status = run_reference(urls_file)
                runs[REFERENCE_NAME].append((seconds, count, "all" if status == 0
                                             else f"not all (exit {status})", CPU[-1]))
            else:
                seconds, written = run_trafilatura(urls_file, work, f"round{round_}")
                runs[TRAFILATURA].append((seconds, count, f"{written:,}", CPU[-1]))
            print(f"  round {round_ + 1}: {name} {seconds:.2f} s", flush=True)
    if args.loop_pages and not args.only_batch:
        loop_file = work / "loop.txt"
        loop_file.write_text("\n".join(urls_file.read_text().split()[: args.loop_pages]) + "\n")
        with (work / "loop.out").open("w") as out:
            seconds, _ = timed([sys.executable, str(HERE), "loop", str(loop_file)], stdout=out)
        runs[LOOP].append((seconds, args.loop_pages, (work / "loop.out").read_text().strip(),
                          CPU[-1]))
    return runs


BATCH = "fetchledger batch"
REFERENCE_NAME = "reference_batch.py (httpx + trafilatura pool)"
TRAFILATURA = "trafilatura --parallel 32"
LOOP = "sequential httpx + trafilatura"


def report(runs: Runs, count: int) -> None:
    best = {name: min(found) for name, found in runs.items()}
    reference = best[REFERENCE_NAME][0]
    rows = []
    for name, (seconds, pages, done, _) in best.items():
        every = ", ".join(f"{s:.2f}" for s, *_ in runs[name])
        cpu = min(c for *_, c in runs[name])
        rows.append([name, pages, done, every, round(seconds, 2), round(cpu, 1),
                     round(pages / seconds, 1), f"{seconds / reference * count / pages:.2f}x"])
    print(table(["pipeline", "pages", "extracted/registered", "seconds (each run)",
                 "best seconds", "least CPU s", "pages/s", "time for all pages vs reference"],
                rows))
    batch = best[BATCH]
    # Each round's two runs stand side by side in time: their ratio sees the same load.
    paired = sorted(b[0] / r[0] for b, r in zip(runs[BATCH], runs[REFERENCE_NAME], strict=True))
    line = (f"\nbatch / reference: {batch[0] / reference:.2f}x best to best (target <= 1.15x);"
            f" round by round {', '.join(f'{x:.2f}' for x in paired)}x, median "
            f"{statistics.median(paired):.2f}x")
    if TRAFILATURA in best:
        line += (f"; batch vs trafilatura CLI: {best[TRAFILATURA][0] / batch[0]:.2f}x faster "
                 "(target > 1)")
    if LOOP in best:
        loop = best[LOOP]
        line += (f"; batch vs sequential loop: {(batch[1] / batch[0]) / (loop[1] / loop[0]):.1f}x"
                 " the pages/s (target >= 10)")
    print(line)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        listed = [Path(p) for p in Path(sys.argv[2]).read_text().splitlines()]
        asyncio.run(_serve(listed, float(sys.argv[3])))
    elif len(sys.argv) > 1 and sys.argv[1] == "loop":
        print(_loop(Path(sys.argv[2]).read_text().split()))
    else:
        sys.exit(main())
