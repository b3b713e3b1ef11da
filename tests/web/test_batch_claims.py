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
from typing import Any

import pytest

from fetchledger import Ledger
from fetchledger.batch.claims import gone_here, new_holder, this_machine

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


def ended_pid() -> int:
    """The pid of a process of this machine that has ended (and was waited for)."""
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)
    return int(ended.stdout)


def test_claims_of_a_dead_batch_of_this_machine_are_taken_over_without_waiting(
        pg_ledger_url: str, hosts: list[BatchServer], tmp_path: Path) -> None:
    """A batch killed and run again (one machine) takes its inputs back at once; claims of
    a batch of another machine, which this one cannot see, wait for their lease."""
    urls = [server.url(f"/gen/{h * 100 + i}") for h, server in enumerate(hosts)
            for i in range(3)]
    listing = tmp_path / "urls.txt"
    listing.write_text("\n".join(urls))
    dead_here = f"{this_machine()}:{ended_pid()}:0badc0de"  # a process that ended
    elsewhere = f"another-host/{4026531836}:{os.getpid()}:0badc0de"  # this pid, elsewhere
    Ledger(pg_ledger_url).close()  # its tables made
    rows(pg_ledger_url, "INSERT INTO claim (locator, holder, expires) VALUES "
         "(?, ?, now() + interval '10 minutes'), (?, ?, now() + interval '10 minutes'), "
         "(?, ?, now() + interval '3 seconds')",
         urls[0], dead_here, urls[1], dead_here, urls[2], elsewhere)
    inserted = time.monotonic()  # the foreign lease ends 3 s after this
    survivor = start_worker(pg_ledger_url, listing, lease=30.0)
    go(survivor)
    try:
        out, err = survivor.communicate(timeout=30)
    finally:
        survivor.kill()
    took = time.monotonic() - inserted
    assert survivor.returncode == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert sum(1 for line in lines if "snippets" in line) == len(urls), lines
    assert 2.9 <= took < 30, took  # the foreign lease waited for, the dead one not
    assert set(fetched(hosts).values()) == {1} and len(fetched(hosts)) == len(urls)


@pytest.mark.parametrize("holder, gone", [
    (lambda ended: f"{this_machine()}:{ended}:ab12cd34", True),  # ended here
    (lambda ended: f"{this_machine()}:{os.getpid()}:ab12cd34", False),  # this process
    (lambda ended: f"{this_machine()}:{os.getppid()}:ab12cd34", False),  # alive here
    (lambda ended: f"elsewhere/1:{ended}:ab12cd34", False),  # another machine
    (lambda ended: f"{this_machine().split('/')[0]}:{ended}:ab12cd34", False),  # old names
    (lambda ended: "not a holder", False),
    (lambda ended: f"{this_machine()}:x{ended}:ab12cd34", False),
])
def test_which_holders_are_known_gone(holder: Any, gone: bool) -> None:
    assert gone_here(holder(ended_pid())) is gone


def test_a_zombie_holds_nothing() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 10
    stat = Path(f"/proc/{child.pid}/stat")
    while time.monotonic() < deadline and stat.read_bytes().rpartition(b")")[2][:3] != b" Z ":
        time.sleep(0.01)
    try:
        assert gone_here(f"{this_machine()}:{child.pid}:ab12cd34")  # ended, not waited for
    finally:
        child.wait()


def test_new_holders_name_this_machine_and_process() -> None:
    machine, pid, token = new_holder().rsplit(":", 2)
    assert (machine, int(pid)) == (this_machine(), os.getpid()) and len(token) == 8
    assert new_holder() != new_holder()
