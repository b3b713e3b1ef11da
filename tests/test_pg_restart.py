"""A PostgreSQL server restarted under fetchledger (DESIGN §4): a write cut off by the
restart is a clean exit 4 that left nothing behind, and running it again registers
the source once; a ledger kept open across a restart goes on on a new connection.

The shared server at 127.0.0.1:5432 is never restarted: each test starts a cluster
of its own (``initdb`` and ``pg_ctl`` of the installed PostgreSQL) in a temporary
folder, on a free port, and stops it after."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from fetchledger import Ledger
from fetchledger.store.postgres import PostgresStore
from fetchledger.store.prepare import prepare
from test_postgres import doc

from conftest import pg_writer_inside, rows, stall_pg_writes, table_counts

pytestmark = pytest.mark.postgres


def _bin_folder() -> Path | None:
    """The newest installed PostgreSQL's programs (Debian's layout), or ``$PATH``'s."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"),
                   key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0)
    if found:
        return found[-1].parent
    on_path = shutil.which("pg_ctl")
    return Path(on_path).parent if on_path and shutil.which("initdb") else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Cluster:
    """A private PostgreSQL cluster: its data folder, port, and pg_ctl."""

    def __init__(self, bin_folder: Path, folder: Path) -> None:
        self.bin, self.data, self.port = bin_folder, folder / "data", _free_port()
        self.log = folder / "server.log"
        # the server refuses to run as root: as root, run it as the postgres user
        self.as_user = (["runuser", "-u", "postgres", "--"]
                        if os.geteuid() == 0 and shutil.which("runuser") else [])
        if self.as_user:
            shutil.chown(folder, "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust",
                  "--no-sync", "-E", "UTF8")
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, program: str, *args: str) -> None:
        done = subprocess.run([*self.as_user, str(self.bin / program), *args],
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, f"{program}: {done.stdout}{done.stderr}"

    def pg_ctl(self, action: str) -> None:
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 "
                   f"-c unix_socket_directories={self.data} -c shared_buffers=16MB "
                   "-c max_connections=20")
        self._run("pg_ctl", action, "-D", str(self.data), "-l", str(self.log), "-w",
                  "-t", "60", "-m", "fast", "-o", options)


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    bin_folder = _bin_folder()
    if bin_folder is None:
        pytest.skip("no PostgreSQL programs (initdb, pg_ctl) to start a cluster of this "
                    "test's own: install the server package (postgresql-15)")
    # not under pytest's temporary folder: the server's user must reach its data
    folder = Path(tempfile.mkdtemp(prefix="fetchledger-cluster-"))
    try:
        server = Cluster(bin_folder, folder)
        server.pg_ctl("start")
        try:
            yield server
        finally:
            server.pg_ctl("stop")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_restart_inside_a_write_is_exit_4_and_a_rerun_registers_once(
        cluster: Cluster, tmp_path: Path) -> None:
    with Ledger(cluster.url) as ledger:
        ledger.register(doc("/kept", "A sentence that was committed."))
    before = table_counts(cluster.url)
    page = tmp_path / "cut.txt"
    page.write_text("A sentence whose registration the restart cuts off.\n")
    stall_pg_writes(cluster.url)  # the write stalls on the server, its rows written
    child = subprocess.Popen([sys.executable, "-m", "fetchledger", "read", str(page)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "FETCHLEDGER_LEDGER": cluster.url})
    try:
        pg_writer_inside(cluster.url)
        cluster.pg_ctl("restart")  # fast: the open transaction is rolled back
        _, stderr = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 4, stderr
    lines = stderr.strip().splitlines()
    assert lines[0].startswith(f"fetchledger: error: the PostgreSQL ledger {cluster.url} "
                               "is unreachable"), stderr
    assert len(lines) <= 2 and "Traceback" not in stderr
    assert table_counts(cluster.url) == before  # nothing of the cut-off source
    rows(cluster.url, "DROP TRIGGER test_stall_write ON attempt")
    with Ledger(cluster.url) as ledger:
        assert ledger.read(page).source.id == 2  # the re-run: the next id, once
        assert ledger.read(page).source.id == 2
        assert ledger.integrity_check() == "ok"
    assert table_counts(cluster.url)["source"] == 2


def test_a_ledger_open_across_a_restart_goes_on(cluster: Cluster) -> None:
    with Ledger(cluster.url) as ledger:
        assert ledger.register(doc("/a", "Water boils at 100 degrees.")).source.id == 1
        cluster.pg_ctl("restart")
        assert ledger.source(1) is not None  # a read: tried again on a new connection
        cluster.pg_ctl("restart")
        # a write whose connection died while idle: nothing was in flight, it goes on
        assert ledger.register(doc("/b", "Ice melts at 0 degrees.")).source.id == 2
        assert ledger.integrity_check() == "ok"
    with psycopg.connect(cluster.url) as db:
        assert db.execute("SELECT id, locator FROM source ORDER BY id").fetchall() == [
            (1, "/a"), (2, "/b")]


# --- a crash of the server: what was handed out stays (pg_functions: ASYNC_COMMIT, FLUSH)


def _walwriter(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as db:
        row = db.execute("SELECT pid FROM pg_stat_activity "
                         "WHERE backend_type = 'walwriter'").fetchone()
    assert row is not None
    return int(row[0])


def _crash(url: str, walwriter: int) -> None:
    """Kill the (stopped) WAL writer: the server then takes it for a crash, ends every
    process and recovers from what its WAL on disk holds. Return once it is back."""
    os.kill(walwriter, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while True:
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=2) as db:
                if db.execute("SELECT pid FROM pg_stat_activity WHERE backend_type = "
                              "'walwriter'").fetchone() not in (None, (walwriter,)):
                    return
        except psycopg.OperationalError:
            pass
        assert time.monotonic() < deadline, "the server did not come back"
        time.sleep(0.1)


def test_every_id_handed_out_survives_a_crash_of_the_server(cluster: Cluster) -> None:
    with Ledger(cluster.url) as ledger:
        assert ledger.register(doc("/first", "The first sentence.")).source.id == 1
        walwriter = _walwriter(cluster.url)
        os.kill(walwriter, signal.SIGSTOP)  # nothing flushes the WAL in the background
        try:
            handed = [(ledger.register(doc(f"/n{n}", f"Sentence number {n}.")).source.id,
                       f"/n{n}") for n in range(4)]
            # a known source's new version too
            handed.append((ledger.register(doc("/first", "Changed.")).source.id, "/first"))
            # a call of two rounds (the second names a source the first creates)
            rounds = ledger.record([prepare(doc("/r", "Round one.")),
                                    prepare(doc("/r", "Round two."))])
            handed += [(r.source.id, "/r") for r in rounds if r is not None]
        finally:
            _crash(cluster.url, walwriter)
    with Ledger(cluster.url) as ledger:
        stored = {s.locator: (s.id, s.versions) for s in ledger.sources()}
        assert ledger.integrity_check() == "ok"
    assert handed == [(2, "/n0"), (3, "/n1"), (4, "/n2"), (5, "/n3"), (1, "/first"),
                      (6, "/r"), (6, "/r")]
    assert stored == {"/first": (1, 2), "/n0": (2, 1), "/n1": (3, 1), "/n2": (4, 1),
                      "/n3": (5, 1), "/r": (6, 2)}


def test_a_source_a_reader_saw_survives_a_crash_before_its_writer_flushed(
        cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer's registration committed, the server crashes before the flush it sends
    after: a reader that saw the source meanwhile must not have shown an id the crash
    takes back (and the next source would get)."""
    with Ledger(cluster.url) as ledger:
        ledger.register(doc("/first", "The first sentence."))
    walwriter = _walwriter(cluster.url)
    os.kill(walwriter, signal.SIGSTOP)
    try:
        with monkeypatch.context() as patch:  # the writer is gone before its flush
            plain = PostgresStore._exec_prepared

            def unflushed(self: PostgresStore, *args: Any, flushed: bool = False) -> Any:
                return plain(self, *args)

            patch.setattr(PostgresStore, "_exec_prepared", unflushed)
            with Ledger(cluster.url) as writer:
                assert writer.register(doc("/second", "Seen, then a crash.")).source.id == 2
        listed = subprocess.run([sys.executable, "-m", "fetchledger", "--json", "list"],
                                capture_output=True, text=True, timeout=60, check=True,
                                env={**os.environ, "FETCHLEDGER_LEDGER": cluster.url})
        shown = [(s["id"], s["locator"]) for s in json.loads(listed.stdout)]
    finally:
        _crash(cluster.url, walwriter)
    assert shown == [(1, "/first"), (2, "/second")]
    with Ledger(cluster.url) as ledger:
        assert [(s.id, s.locator) for s in ledger.sources()] == shown
        assert ledger.register(doc("/third", "After the crash.")).source.id == 3


def test_a_standby_is_read_and_copied_without_waiting_for_a_flush(
        cluster: Cluster, tmp_path: Path) -> None:
    """A hot standby (here: the cluster restarted in recovery, no primary) cannot tell
    where its WAL is flushed; it is sent only WAL its primary flushed, so reads and
    ``copy`` out of it go on (before: the check failed inside ``copy``'s snapshot)."""
    with Ledger(cluster.url) as ledger:
        ledger.register(doc("/a", "Water boils at 100 degrees."))
    cluster.pg_ctl("stop")
    signal_file = cluster.data / "standby.signal"
    signal_file.touch()
    if cluster.as_user:
        shutil.chown(signal_file, "postgres")
    cluster.pg_ctl("start")
    env = {**os.environ, "FETCHLEDGER_LEDGER": cluster.url}
    with psycopg.connect(cluster.url) as db:
        assert db.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)
    listed = subprocess.run([sys.executable, "-m", "fetchledger", "--json", "list"],
                            capture_output=True, text=True, timeout=60, env=env, check=False)
    assert listed.returncode == 0, listed.stderr
    assert [s["locator"] for s in json.loads(listed.stdout)] == ["/a"]
    copied = subprocess.run([sys.executable, "-m", "fetchledger", "copy", cluster.url,
                             str(tmp_path / "copy.db")], capture_output=True, text=True,
                            timeout=60, env=env, check=False)
    assert copied.returncode == 0, copied.stderr
    with Ledger(tmp_path / "copy.db") as copy:
        assert [(s.id, s.locator) for s in copy.sources()] == [(1, "/a")]
