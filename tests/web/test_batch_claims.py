"""Several batch processes on one PostgreSQL ledger with the same input list: they
claim inputs through the ledger, so each URL is fetched once between them and the
work spreads over them; a claim is a lease that lapses when its batch dies
(DESIGN §4)."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from .batchserver import BatchServer
from conftest import rows

pytestmark = pytest.mark.postgres

# A batch process standing for one machine: the Python API, so that the test can
# choose the lease; one JSON line per input on stdout. Each batch starts on a line
# on stdin (``go``), so that batches started one after the other claim together.
WORKER = textwrap.dedent(
    """
    import json, sys
    from fetchledger import Ledger
    from fetchledger.batch.scheduler import BatchOptions, run_batch
    import asyncio
    ledger, listing, lease = sys.argv[1], sys.argv[2], float(sys.argv[3])
    urls = open(listing).read().split()
    with Ledger(ledger, allow_private=True) as led:
        print("ready", flush=True)
        sys.stdin.readline()
        done = asyncio.run(run_batch(led, urls, BatchOptions(
            concurrency=4, robots=False, claim_lease=lease, claim_poll=0.2, workers=1)))
    for outcome in done:
        print(json.dumps(outcome.to_json()), flush=True)
    """
)


@pytest.fixture
def hosts() -> Iterator[list[BatchServer]]:
    started = [BatchServer(f"127.0.0.{n}").start() for n in (1, 2, 3)]
    yield started
    for server in started:
        server.stop()


def start_worker(url: str, listing: Path, lease: float = 30.0) -> subprocess.Popen[str]:
    """A batch process, its ledger open, waiting for ``go``."""
    worker = subprocess.Popen([sys.executable, "-c", WORKER, url, str(listing), str(lease)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    assert worker.stdout is not None
    assert worker.stdout.readline().strip() == "ready", worker.stderr.read() if \
        worker.stderr else ""
    return worker


def go(*workers: subprocess.Popen[str]) -> None:
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.write("go\n")
        worker.stdin.flush()


# The same, printing each outcome as it finishes (as `fetchledger batch` does).
STREAMING = textwrap.dedent(
    """
    import json, sys
    from fetchledger import Ledger
    from fetchledger.batch.scheduler import BatchOptions, run_batch
    import asyncio
    ledger, listing, lease = sys.argv[1], sys.argv[2], float(sys.argv[3])
    urls = open(listing).read().split()
    with Ledger(ledger, allow_private=True) as led:
        print("ready", flush=True)
        sys.stdin.readline()
        asyncio.run(run_batch(led, urls, BatchOptions(
            concurrency=4, robots=False, claim_lease=lease, claim_poll=0.2, workers=1),
            on_outcome=lambda outcome, _: print(json.dumps(outcome.to_json()), flush=True)))
    """
)


def fetched(hosts: list[BatchServer]) -> Counter[str]:
    return Counter(f"{server.host}{path.split('?')[0]}" for server in hosts
                   for path in server.paths_hit("/gen/"))


def test_batches_on_one_list_fetch_each_url_once_and_share_the_work(
        pg_ledger_url: str, hosts: list[BatchServer], tmp_path: Path) -> None:
    urls = [server.url(f"/gen/{h * 100 + i}?delay=0.05") for h, server in enumerate(hosts)
            for i in range(12)]
    lists = []
    for n in range(3):  # overlapping lists: every URL in at least two of them
        listing = tmp_path / f"urls{n}.txt"
        listing.write_text("\n".join(urls[n * 6:] + urls[: n * 6]) if n else "\n".join(urls))
        lists.append(listing)
    workers = [start_worker(pg_ledger_url, listing) for listing in lists]
    go(*workers)
    registered = []
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        lines = [json.loads(line) for line in out.splitlines()]
        assert len(lines) == len(urls) and not [x for x in lines if "error" in x]
        registered.append(sum(1 for line in lines if "snippets" in line))
    assert sum(registered) == len(urls)  # each URL registered by one batch only
    assert sum(1 for count in registered if count) >= 2  # and the work spread
    assert set(fetched(hosts).values()) == {1} and len(fetched(hosts)) == len(urls)
    stored = rows(pg_ledger_url, "SELECT id, locator FROM source ORDER BY id")
    assert [r[0] for r in stored] == list(range(1, len(urls) + 1))
    assert len({r[1] for r in stored}) == len(urls)


def test_the_claims_of_a_killed_batch_lapse_and_another_takes_them_over(
        pg_ledger_url: str, hosts: list[BatchServer], tmp_path: Path) -> None:
    urls = [server.url(f"/gen/{h * 100 + i}?delay=0.3") for h, server in enumerate(hosts)
            for i in range(4)]
    listing = tmp_path / "urls.txt"
    listing.write_text("\n".join(urls))
    doomed = start_worker(pg_ledger_url, listing, lease=1.0)
    go(doomed)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not rows(
            pg_ledger_url, "SELECT 1 FROM claim WHERE holder IS NOT NULL"):
        time.sleep(0.05)
    os.kill(doomed.pid, signal.SIGKILL)
    doomed.communicate()
    held = rows(pg_ledger_url, "SELECT count(*) FROM claim WHERE holder IS NOT NULL")[0][0]
    assert held, "the batch was killed before it claimed anything"
    survivor = start_worker(pg_ledger_url, listing, lease=30.0)
    go(survivor)
    out, err = survivor.communicate(timeout=120)
    assert survivor.returncode == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == len(urls) and not [x for x in lines if "error" in x]
    stored = rows(pg_ledger_url, "SELECT locator FROM source ORDER BY id")
    assert sorted(r[0] for r in stored) == sorted(urls)  # every URL once, none lost
    assert rows(pg_ledger_url, "SELECT count(*) FROM claim WHERE holder IS NOT NULL") == [(0,)]


def small_pipe() -> tuple[int, int]:
    """A pipe that holds one page (4 KiB, Linux's F_SETPIPE_SZ): a few outcome lines fill
    it, as a terminal or a reader busy elsewhere stops taking output."""
    read, write = os.pipe()
    fcntl.fcntl(write, 1031, 4096)  # F_SETPIPE_SZ
    return read, write


def test_a_batch_whose_output_waits_for_its_reader_keeps_its_claims(
        pg_ledger_url: str, hosts: list[BatchServer], tmp_path: Path) -> None:
    """Three batches printing each outcome as it finishes, their outputs read one after
    the other (as a script that waits on each process in turn): a batch whose reader is
    not reading yet goes on fetching and keeps its claims alive, so no other batch takes
    them over and fetches their URLs again."""
    urls = [server.url(f"/gen/{h * 100 + i}?delay=0.1") for h, server in enumerate(hosts)
            for i in range(20)]
    listing = tmp_path / "urls.txt"
    listing.write_text("\n".join(urls))
    workers = []
    for _ in range(3):
        read, write = small_pipe()
        worker = subprocess.Popen(
            [sys.executable, "-c", STREAMING, pg_ledger_url, str(listing), "2"],
            stdin=subprocess.PIPE, stdout=write, stderr=subprocess.DEVNULL, text=True)
        os.close(write)
        output = os.fdopen(read)
        assert output.readline().strip() == "ready"
        workers.append((worker, output))
    go(*(worker for worker, _ in workers))
    registered = []
    for worker, output in workers:  # one reader, one process after the other
        lines = [json.loads(line) for line in output]
        output.close()
        assert worker.wait(timeout=120) == 0
        assert len(lines) == len(urls) and not [x for x in lines if "error" in x]
        registered.append(sum(1 for line in lines if "snippets" in line))
    hits = fetched(hosts)
    assert sorted(hits) == sorted(f"{server.host}/gen/{h * 100 + i}" for h, server in
                                  enumerate(hosts) for i in range(20))
    assert [url for url, count in hits.items() if count > 1] == []  # each URL fetched once
    assert sum(registered) == len(urls)  # and registered by one batch only
    stored = rows(pg_ledger_url, "SELECT id, locator FROM source ORDER BY id")
    assert [r[0] for r in stored] == list(range(1, len(urls) + 1))
    assert len({r[1] for r in stored}) == len(urls)
