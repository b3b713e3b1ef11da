"""What only a PostgreSQL ledger has: a server that can be lost, locks held by other
machines, passwords in the ledger URL, a database that may hold other things
(DESIGN §4). Everything the backends share is tested on both (``both_backends``)."""

from __future__ import annotations

import functools
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from fetchledger import (
    BlockedAddress,
    Document,
    Ledger,
    LedgerCorrupt,
    LedgerLocked,
    Limits,
)

from conftest import (
    pg_backend_gone,
    pg_database_url,
    pg_writer_inside,
    rows,
    stall_pg_writes,
    table_counts,
)

pytestmark = pytest.mark.postgres


def doc(locator: str, text: str) -> Document:
    return Document(kind="file", locator=locator, display=locator, text=text,
                    raw=text.encode())


def with_password(url: str, password: str) -> str:
    return url.replace("postgresql://postgres@", f"postgresql://postgres:{password}@", 1)


def cli(*args: str, env: dict[str, str] | None = None,
        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fetchledger", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=timeout,
                          check=False)


@pytest.fixture
def url(pg_ledger_url: str) -> str:
    return pg_ledger_url


def backends_of(url: str) -> list[int]:
    """Server processes serving fetchledger connections in this test's database."""
    with psycopg.connect(url, autocommit=True) as db:
        return [pid for (pid,) in db.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'fetchledger' "
            "AND datname = current_database()").fetchall()]


def terminate(pids: list[int], url: str) -> None:
    """End these server processes, and wait until they are gone (a connection lost
    before a write, not while it is sent)."""
    with psycopg.connect(url, autocommit=True) as db:
        for pid in pids:
            db.execute("SELECT pg_terminate_backend(%s)", (pid,))
    for pid in pids:
        pg_backend_gone(url, pid)


# --- a lost connection ------------------------------------------------------------------------

def test_a_connection_killed_mid_write_is_exit_4_and_half_of_nothing(
        url: str, tmp_path: Path) -> None:
    with Ledger(url) as ledger:
        ledger.register(doc("/kept", "A sentence that was committed."))
    before = table_counts(url)
    page = tmp_path / "never.txt"
    page.write_text("A sentence whose registration is cut off.\n")
    stall_pg_writes(url)  # the write stalls on the server, its rows written
    child = subprocess.Popen([sys.executable, "-m", "fetchledger", "read", str(page)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "FETCHLEDGER_LEDGER": url})
    try:
        terminate([pg_writer_inside(url)], url)  # the backend inside the write
        _, stderr = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 4, stderr
    lines = stderr.strip().splitlines()
    assert lines[0].startswith("fetchledger: error: the PostgreSQL ledger ")
    assert "unreachable" in lines[0] and len(lines) <= 2 and "Traceback" not in stderr
    assert table_counts(url) == before  # nothing of the cut-off source
    rows(url, "DROP TRIGGER test_stall_write ON attempt")
    with Ledger(url) as ledger:
        assert ledger.integrity_check() == "ok"
        assert ledger.read(page).source.id == 2  # a re-run registers it, with the next id


def test_reads_survive_a_lost_connection(url: str) -> None:
    with Ledger(url) as ledger:
        ledger.register(doc("/a", "Water boils at 100 degrees."))
        terminate(backends_of(url), url)
        assert ledger.source(1).id == 1  # the read is tried again on a new connection
        terminate(backends_of(url), url)
        # a write after the loss opens a new connection too (nothing was in flight)
        assert ledger.register(doc("/b", "Ice melts at 0 degrees.")).source.id == 2


def test_a_write_never_goes_on_a_connection_with_unread_input(url: str) -> None:
    # The server's goodbye (pg_terminate_backend's FATAL message) reaches the socket
    # before the server closes it; a write sent in between was lost (CI, loaded). Any
    # input on an idle connection is taken as that goodbye: here, a notification.
    with Ledger(url) as ledger:
        ledger.register(doc("/a", "Water boils at 100 degrees."))
        (listening,) = backends_of(url)
        store: Any = ledger._store
        conn = store._connection()
        conn.execute("LISTEN fetchledger_test")
        rows(url, "NOTIFY fetchledger_test")
        assert select.select([conn.fileno()], [], [], 30)[0]  # the notification came
        assert ledger.register(doc("/b", "Ice melts at 0 degrees.")).source.id == 2
        assert listening not in backends_of(url)  # the write went on a new connection


def test_an_unreachable_server_is_exit_4_in_one_line_without_the_password() -> None:
    secret = "hunter2-secret"
    for ledger in (f"postgresql://postgres:{secret}@127.0.0.1:1/nothing",
                   f"postgres://127.0.0.1:1/nothing?password={secret}&connect_timeout=2"):
        done = cli("--ledger", ledger, "list")
        assert done.returncode == 4, done.stderr
        assert secret not in done.stderr + done.stdout
        first = done.stderr.splitlines()[0]
        assert first.startswith("fetchledger: error: the PostgreSQL ledger postgres")
        assert "127.0.0.1:1/nothing" in first and "Traceback" not in done.stderr


def test_passwords_are_never_printed(url: str, tmp_path: Path) -> None:
    secret = "s3cr3t-pass-word"
    ledger = with_password(url, secret)
    page = tmp_path / "a.txt"
    page.write_text("Water boils at 100 degrees.\n")
    printed = ""
    for args in (["--ledger", ledger, "read", str(page)], ["show", "99"], ["reset"],
                 ["--ledger", ledger, "reset", "--yes"], ["--help"], ["list", "--help"]):
        done = cli(*args, env={"FETCHLEDGER_LEDGER": ledger})
        printed += done.stdout + done.stderr
    assert "emptied postgresql://postgres@" in printed
    assert secret not in printed
    missing = pg_database_url(url.split("?", maxsplit=1)[0].rsplit("/", 1)[0], "no_such_db_here")
    done = cli("--ledger", with_password(missing, secret), "list")
    assert done.returncode == 4 and "no_such_db_here" in done.stderr
    assert secret not in done.stderr


# --- locks and concurrency --------------------------------------------------------------------


@pytest.fixture
def held_id_lock(url: str) -> Iterator[None]:
    """Another machine holding the id counter (a registration that does not end)."""
    Ledger(url).close()
    with psycopg.connect(url) as other:
        other.execute("SELECT value FROM counter FOR UPDATE")
        yield
        other.rollback()


@pytest.mark.usefixtures("held_id_lock")
def test_a_lock_held_past_the_timeout_is_exit_4_with_one_line(
        url: str, tmp_path: Path, run_cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(LedgerLocked), Ledger(url, limits=Limits(ledger_busy_timeout=0.3)) as led:
        led.register(doc("/new", "A new source waits for an id."))
    monkeypatch.setattr("fetchledger.ledger.Limits",
                        functools.partial(Limits, ledger_busy_timeout=0.3))
    page = tmp_path / "a.txt"
    page.write_text("A new source waits for an id.\n")
    done = run_cli("--ledger", url, "read", str(page))
    assert done.exit_code == 4
    assert done.stderr.splitlines()[0] == (
        f"fetchledger: error: the ledger {url} stayed locked by another writer past 0.3 s")
    assert table_counts(url)["source"] == 0


def test_registrations_go_on_after_a_write_was_rolled_back(url: str) -> None:
    """A write that rolls back (here a lock timeout) makes psycopg, once it has prepared
    statements of its own, send DEALLOCATE ALL, which drops the registration's prepared
    statements too: the registrations after it must still work (a long-lived MCP server
    or batch would otherwise fail every one with exit 4)."""
    with Ledger(url, limits=Limits(ledger_busy_timeout=0.3)) as ledger:
        ledger.register(doc("/a", "Water boils at one hundred degrees."))
        for _ in range(8):  # the same statements again and again: psycopg prepares them
            ledger.quotes("water boils")
        with psycopg.connect(url) as other:
            other.execute("LOCK TABLE quote IN EXCLUSIVE MODE")
            with pytest.raises(LedgerLocked):
                ledger.quotes("water boils")
            other.rollback()
        second = ledger.register(doc("/b", "Ice melts at zero degrees."))
        again = ledger.register(doc("/a", "Water boils at one hundred degrees, twice."))
        assert (second.source.id, again.source.id) == (2, 1)
        assert [s.id for s in ledger.sources()] == [1, 2]


def test_a_forgotten_registration_is_sent_again_with_its_flush(
        url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the registration's statement forgotten by the server (a DEALLOCATE of its
    name): it runs again, and the flush after it too, or its ids would be handed out
    before they are durable."""
    with Ledger(url) as ledger:
        ledger.register(doc("/a", "Water boils at one hundred degrees."))
        store: Any = ledger._store
        store._connection().execute("DEALLOCATE fetchledger_register")
        # this connection, not a new one (one with anything to read would be replaced)
        monkeypatch.setattr(store, "_sendable", store._connection)
        sent: list[list[bytes]] = []
        pipeline = store._pipeline
        monkeypatch.setattr(store, "_pipeline", lambda conn, statements: (
            sent.append([name for name, *_ in statements]), pipeline(conn, statements))[1])
        second = ledger.register(doc("/b", "Ice melts at zero degrees."))
    assert second.source.id == 2
    # (sent once if the connection was made again meanwhile: nothing to forget there)
    assert sent and all(names == [b"fetchledger_begin", b"fetchledger_register",
                                  b"fetchledger_commit", b"fetchledger_flush"]
                        for names in sent)


def test_one_canonical_source_from_two_writers_at_once_gets_one_id(url: str) -> None:
    Ledger(url).close()
    with psycopg.connect(url) as other:  # hold the id lock so both writers queue behind it
        other.execute("SELECT value FROM counter FOR UPDATE")
        results: list[int] = []

        def register() -> None:
            with Ledger(url) as led:
                results.append(led.register(doc("/same", "One canonical source.")).source.id)

        writers = [threading.Thread(target=register) for _ in range(2)]
        for writer in writers:
            writer.start()
        time.sleep(0.5)  # both are now waiting for the counter
        other.rollback()
        for writer in writers:
            writer.join(timeout=30)
    assert results == [1, 1]
    assert rows(url, "SELECT id, locator FROM source") == [(1, "/same")]
    assert rows(url, "SELECT value FROM counter") == [(1,)]  # no id spent on the loser


def test_fresh_ledgers_opened_by_many_processes_at_once_migrate_once(url: str) -> None:
    opener = "import sys; from fetchledger import Ledger; Ledger(sys.argv[1]).close()"
    children = [subprocess.Popen([sys.executable, "-c", opener, url], stderr=subprocess.PIPE,
                                 text=True) for _ in range(6)]
    for child in children:
        _, err = child.communicate(timeout=60)
        assert child.returncode == 0, err
    assert rows(url, "SELECT name FROM migration ORDER BY name") == [
        ("0001_initial",), ("0002_keyed_identity",), ("0003_batch_claims",),
        ("0005_search_hits",), ("0006_provisional_ids",), ("0007_secret_rules",),
        ("0008_reading",), ("0009_register_function",), ("0010_credentials_not_identity",),
        ("0011_nested_secrets",), ("0012_secret_shapes",), ("0013_register_statement",),
        ("0014_shell_quoting",), ("0015_fewer_index_writes",),
        ("0016_more_secret_options",), ("0017_more_secret_forms",),
        ("0018_counter_queue",), ("0019_async_numbering",), ("0020_fed_secrets",),
        ("0021_fewer_checks",), ("0022_held_out_secrets",), ("0023_stray_percent",),
        ("0024_url_characters",), ("0025_fewer_source_checks",)]


# --- what the database holds ------------------------------------------------------------------


def test_a_database_holding_other_tables_is_refused_untouched(url: str) -> None:
    rows(url, "CREATE TABLE orders (id int)")
    with pytest.raises(LedgerCorrupt, match="not a fetchledger ledger"):
        Ledger(url)
    assert rows(url, "SELECT table_name FROM information_schema.tables "
                     "WHERE table_schema = current_schema()") == [("orders",)]


def test_raw_bytes_are_bytea_and_text_is_exact(url: str) -> None:
    text = "Line one ends here.\nZero width\u200b and \ufffd survive. Emoji 🙂 too."
    with Ledger(url) as ledger:
        got = ledger.register(Document(kind="file", locator="/x", display="/x", text=text,
                                       raw=bytes(range(256))))
        assert ledger.text(got.source.id) == text
        assert ledger.raw(got.source.id) == bytes(range(256))
    assert rows(url, "SELECT pg_typeof(raw)::text FROM version") == [("bytea",)]


def test_missing_psycopg_is_a_clear_error() -> None:
    script = ("import sys; sys.modules['psycopg'] = None; from fetchledger.cli import main; "
              "sys.argv = ['fetchledger', '--ledger', 'postgresql://u:pw@db.example/x', 'list'];"
              " main()")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 4
    assert done.stderr.splitlines() == [
        "fetchledger: error: postgresql://u@db.example/x is a PostgreSQL ledger and psycopg "
        "is not installed (import of psycopg halted; None in sys.modules)",
        "hint: pip install 'fetchledger[postgres]'"]



def test_a_reviewer_role_reads_but_cannot_write(url: str, tmp_path: Path) -> None:
    with Ledger(url) as ledger:
        ledger.register(doc("/a", "Water boils at 100 degrees."))
    schema = url.rsplit("%3D", 1)[1]
    role = f"reviewer_{schema}"
    rows(url, f"CREATE ROLE {role} LOGIN")
    try:
        rows(url, f"GRANT USAGE ON SCHEMA {schema} TO {role}")
        rows(url, f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}")
        as_reviewer = url.replace("postgresql://postgres@", f"postgresql://{role}@", 1)
        listed = cli("--ledger", as_reviewer, "list")
        assert listed.returncode == 0 and listed.stdout.startswith("[1] a"), listed.stderr
        page = tmp_path / "b.txt"
        page.write_text("Ice melts at 0 degrees.\n")
        refused = cli("--ledger", as_reviewer, "read", str(page))
        assert refused.returncode == 4
        assert refused.stderr.startswith(f"fetchledger: error: the ledger {as_reviewer} "
                                         "cannot be written: permission denied")
        assert table_counts(url)["source"] == 1
    finally:
        rows(url, f"DROP OWNED BY {role}")
        rows(url, f"DROP ROLE {role}")


def test_an_ok_attempt_names_the_id_its_source_got(url: str) -> None:
    with Ledger(url) as ledger:
        ledger.register(doc("/a", "Water boils at 100 degrees."))
        ledger.register(doc("/b", "Ice melts at 0 degrees."))
        ledger.register(doc("/a", "Water boils at 100 degrees, again."))
        assert [(a.message, a.source_id) for a in ledger.attempts()] == [
            ("registered as [1] version 1", 1), ("registered as [2] version 1", 2),
            ("registered as [1] version 2", 1)]


def test_a_registration_writes_only_indexes_a_query_reads(url: str) -> None:
    """Every index is one more write at each registration, most of them while the id
    counter is held (issue 12): the attempts are indexed only where a query looks (the
    failed ones), and a source's quotes are found through its versions."""
    with Ledger(url) as ledger:
        first = ledger.register(doc("/a", "Water boils at 100 degrees. Ice melts at 0."))
        ledger.register(doc("/b", "Salt water boils later."))
        ledger.register(doc("/a", "Water boils at 100 degrees, again. Ice melts at 0."))
        with pytest.raises(BlockedAddress):  # refused before any connection
            ledger.fetch("http://127.0.0.1:9/")
        assert first.source.id == 1
        assert ledger.details(1).quotes == len(ledger.recorded_quotes(1)) > len(first.snippets)
        assert {q.source_id for q in ledger.recorded_quotes(2)} == {2}
        assert [a.status for a in ledger.attempts(failed=True)] == ["blocked_address"]
    indexes = dict(rows(url, "SELECT indexname, indexdef FROM pg_indexes WHERE tablename IN "
                             "('attempt', 'quote', 'search_hit') ORDER BY indexname"))
    assert sorted(indexes) == ["attempt_failed", "attempt_pkey", "quote_pkey",
                               "quote_version_id_start_end_key", "search_hit_pkey",
                               "search_hit_source_id_query_engine_rank_key"]
    assert indexes["attempt_failed"].endswith("WHERE (status <> 'ok'::text)")
    with psycopg.connect(url, autocommit=True) as db:  # the failed listing can use it
        db.execute("SET enable_seqscan = off")
        plan = db.execute("EXPLAIN SELECT locator FROM attempt WHERE status != 'ok' "
                          "ORDER BY id").fetchall()
    assert "attempt_failed" in " ".join(line for (line,) in plan)


def test_each_thread_has_its_own_connection_and_it_ends_with_the_thread(
        pg_ledger_url: str) -> None:
    """A transaction belongs to one connection: threads using one ledger (a batch's
    writer and its claim rounds) each get their own, closed when the thread ends, and
    close() closes the rest."""
    import gc

    url = pg_ledger_url + "&application_name=fl_thread_test"

    def backends(expected: int) -> int:  # a closed connection's backend exits soon after
        deadline = time.monotonic() + 10
        while True:
            found = rows(pg_ledger_url, "SELECT count(*) FROM pg_stat_activity "
                                        "WHERE application_name = 'fl_thread_test'")[0][0]
            if found == expected or time.monotonic() > deadline:
                return int(str(found))
            time.sleep(0.05)

    with Ledger(url) as ledger:
        ledger.register(doc("/a", "One sentence here."))
        hold = threading.Event()
        seen: list[int] = []

        def use() -> None:
            seen.append(len(ledger.sources()))
            hold.wait(30)

        threads = [threading.Thread(target=use) for _ in range(3)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 30
        while len(seen) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert seen == [1, 1, 1]
        assert backends(4) == 4  # this thread's and the three
        hold.set()
        for thread in threads:
            thread.join()
        gc.collect()
        assert backends(1) == 1
    assert backends(0) == 0


def test_a_connection_whose_descriptor_is_past_1024_still_writes(url: str) -> None:
    """An agent holding many files open gets a connection socket numbered past
    select()'s FD_SETSIZE (1024): registration, a second call on the idle connection and
    a read still work (the waits on the socket use poll, not select)."""
    script = (
        "import os, resource, sys\n"
        "from fetchledger import Document, Ledger\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))\n"
        "held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]\n"
        "with Ledger(sys.argv[1]) as ledger:\n"
        "    for n in (1, 2):\n"
        "        text = f'Gauge {n} read 4 metres.'\n"
        "        got = ledger.register(Document(kind='file', locator=f'/g{n}',\n"
        "                              display=f'/g{n}', text=text, raw=text.encode()))\n"
        "        print(got.source.id, ledger.text(got.source.id))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, url], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["1 Gauge 1 read 4 metres.", "2 Gauge 2 read 4 metres."]


def test_a_registration_is_one_send_and_one_answer(
        url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A registration and the flush after it go to the server as one pipeline with one
    sync: the server answers once, when the flush is done, and the writer waits for
    that one answer (one wake-up). With a sync after each, the server answered twice
    (the registration, then the flush, a disk write later) and the writer woke twice."""
    from fetchledger.store import postgres

    with Ledger(url) as ledger:
        ledger.register(doc("/a", "Water boils at one hundred degrees."))
        waits: list[int] = []
        plain = postgres._ready

        def ready(fd: int, events: int, timeout_ms: int | None = None) -> bool:
            if timeout_ms is None:  # a wait for the server's answer
                waits.append(events)
            return plain(fd, events, timeout_ms)

        monkeypatch.setattr(postgres, "_ready", ready)
        each: list[list[int]] = []
        for n in range(5):  # new sources, and new versions of a known one
            for document in (doc(f"/n{n}", f"Sentence number {n} of the ledger."),
                             doc("/a", f"Water boils at one hundred degrees, {n} times.")):
                waits.clear()
                ledger.register(document)
                each.append(list(waits))
    # (a connection made again, rarely, waits for its statements to be prepared too)
    assert sum(w == [select.POLLIN] for w in each) >= 8, each


def test_a_registration_that_fails_leaves_its_connection_usable(url: str) -> None:
    """A registration refused inside its transaction (here: the counter held past the
    lock timeout) rolls that transaction back: the same connection registers the next
    source, nothing of the refused one is kept, and no id is spent."""
    with Ledger(url, limits=Limits(ledger_busy_timeout=0.3)) as ledger:
        ledger.register(doc("/a", "Water boils at one hundred degrees."))
        conn = ledger._store._connection()  # type: ignore[attr-defined]
        with psycopg.connect(url) as other:
            other.execute("SELECT value FROM counter FOR UPDATE")
            with pytest.raises(LedgerLocked):
                ledger.register(doc("/b", "Ice melts at zero degrees."))
            other.rollback()
        assert conn.pgconn.transaction_status == psycopg.pq.TransactionStatus.IDLE
        assert ledger._store._connection() is conn  # type: ignore[attr-defined]
        third = ledger.register(doc("/c", "Salt lowers the freezing point."))
    assert third.source.id == 2
    assert rows(url, "SELECT locator FROM source ORDER BY id") == [("/a",), ("/c",)]
    assert rows(url, "SELECT count(*) FROM version") == [(2,)]
