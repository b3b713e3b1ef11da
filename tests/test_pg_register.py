"""How a PostgreSQL ledger writes registrations (store/pg_register.py, pg_functions.py):
one statement per round of registrations, the id counter taken by its end only, ids
never renumbered, and ledgers of the migrations before it upgraded in place."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import psycopg
import pytest

import fetchledger.store.postgres
from fetchledger import Document, Ledger, LedgerLocked, Limits
from fetchledger.store.prepare import prepare

from conftest import pg_schema, rows, table_counts

pytestmark = pytest.mark.postgres


@pytest.fixture
def url(pg_ledger_url: str) -> str:
    return pg_ledger_url


def doc(locator: str, text: str, *, aliases: tuple[str, ...] = ()) -> Document:
    return Document(kind="web", locator=locator, display=locator, text=text,
                    raw=text.encode(), aliases=aliases, title=f"Title of {locator}")


def test_one_transaction_of_new_known_and_twice_named_sources(url: str) -> None:
    with Ledger(url) as ledger:
        ledger.register(doc("https://a.example/", "Water boils at 100 degrees."))
        batch = [
            doc("https://b.example/", "Ice melts at 0 degrees."),
            doc("https://a.example/", "Water boils at 100 degrees, it says now."),  # known
            doc("https://c.example/", "Lead melts at 327 degrees.",
                aliases=("https://c.example/old",)),
            doc("https://c.example/old", "Lead melts at 327 degrees."),  # c, by its alias
            doc("https://d.example/", "Tin melts at 232 degrees."),
        ]
        got = ledger.record([prepare(d) for d in batch])
        assert [(r.source.id, r.source.version, r.new_source, r.new_version)
                for r in got if r is not None] == [
            (2, 1, True, True), (1, 2, False, True), (3, 1, True, True),
            (3, 1, False, False), (4, 1, True, True)]
        # what a registration answers is what the ledger holds (as of the last one)
        last = {r.source.id: r.source for r in got if r is not None}
        assert last == {i: ledger.source(i) for i in last}
        assert ledger.integrity_check() == "ok"
        assert [(a.message, a.source_id) for a in ledger.attempts()][1:] == [
            ("registered as [2] version 1", 2), ("registered as [1] version 2", 1),
            ("registered as [3] version 1", 3), ("registered as [3] version 1", 3),
            ("registered as [4] version 1", 4)]
    assert rows(url, "SELECT locator, source_id FROM alias ORDER BY locator") == [
        ("https://a.example/", 1), ("https://b.example/", 2), ("https://c.example/", 3),
        ("https://c.example/old", 3), ("https://d.example/", 4)]
    assert rows(url, "SELECT value FROM counter") == [(4,)]
    # quotes are recorded under the ids the sources got
    assert rows(url, "SELECT DISTINCT source_id FROM quote ORDER BY 1") == [(1,), (2,), (3,),
                                                                            (4,)]
    # nothing is left under a key: every version has its source
    assert rows(url, "SELECT count(*) FROM version WHERE source_id < 0") == [(0,)]


def test_a_known_source_registers_while_another_writer_holds_the_id_counter(
        url: str) -> None:
    with Ledger(url) as ledger:
        ledger.register(doc("https://a.example/", "Water boils at 100 degrees."))
    with psycopg.connect(url) as other:
        other.execute("SELECT value FROM counter FOR UPDATE")  # a writer numbering
        with Ledger(url, limits=Limits(ledger_busy_timeout=0.5)) as ledger:
            again = ledger.register(doc("https://a.example/", "Water boils at 99 degrees."))
            assert (again.source.id, again.source.version) == (1, 2)  # no wait for the id
            with pytest.raises(LedgerLocked):  # a new source waits for it (here: too long)
                ledger.register(doc("https://b.example/", "Ice melts at 0 degrees."))
        other.rollback()
    assert table_counts(url)["source"] == 1
    assert rows(url, "SELECT count(*) FROM version WHERE source_id < 0") == [(0,)]


def test_writers_queue_for_the_counter_of_their_own_ledger_only(
        url: str, pg_session_database: str) -> None:
    """New sources wait for the counter on a lock of their ledger before its row (the
    queue of 0018_counter_queue): held, it holds up new sources of that ledger only."""
    queue = ("SELECT pg_advisory_xact_lock(hashtext('fetchledger.counter'), "
             "'counter'::regclass::oid::integer)")
    with Ledger(url) as ledger:
        ledger.register(doc("https://a.example/", "Water boils at 100 degrees."))
    with pg_schema(pg_session_database) as elsewhere, psycopg.connect(url) as other:
        Ledger(elsewhere).close()
        other.execute(queue)  # a writer about to number its sources
        with Ledger(url, limits=Limits(ledger_busy_timeout=0.5)) as ledger:
            again = ledger.register(doc("https://a.example/", "Water boils at 99 degrees."))
            assert (again.source.id, again.source.version) == (1, 2)
            with pytest.raises(LedgerLocked):
                ledger.register(doc("https://b.example/", "Ice melts at 0 degrees."))
        with Ledger(elsewhere, limits=Limits(ledger_busy_timeout=0.5)) as apart:
            assert apart.register(doc("https://b.example/", "Ice melts.")).source.id == 1
        other.rollback()
    with Ledger(url) as ledger:  # released with the transaction
        assert ledger.register(doc("https://b.example/", "Ice melts.")).source.id == 2
        assert ledger.integrity_check() == "ok"


def test_writers_of_different_sources_wait_for_each_other_only_to_number(url: str) -> None:
    """A writer that has written its rows and holds the counter (not committed) lets
    another writer write all of its rows meanwhile; only its numbering waits."""
    Ledger(url).close()
    with psycopg.connect(url) as other:
        other.execute("SELECT value FROM counter FOR UPDATE")
        done: list[int] = []

        def register() -> None:
            with Ledger(url) as led:
                done.append(led.register(doc("https://b.example/", "Ice melts.")).source.id)

        writer = threading.Thread(target=register)
        writer.start()
        deadline = time.monotonic() + 30
        waiting: list[tuple[object, ...]] = []
        while time.monotonic() < deadline and not waiting:
            # the writer waits for the counter, its rows written (it has a transaction id)
            waiting = rows(url, "SELECT pid FROM pg_stat_activity "
                                "WHERE application_name = 'fetchledger' AND wait_event_type = "
                                "'Lock' AND backend_xid IS NOT NULL AND %s = ANY("
                                "pg_blocking_pids(pid))", other.info.backend_pid)
            time.sleep(0.05)
        assert waiting, "the writer did not write its rows before waiting for the counter"
        assert done == []
        other.rollback()
        writer.join(timeout=30)
    assert done == [1]


def test_a_ledger_of_the_migrations_before_is_upgraded_without_renumbering(
        url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Ledger(tmp_path / "old.db") as old:
        for n, text in enumerate(["Water boils at 100 degrees.", "Ice melts at 0 degrees.",
                                  "Lead melts at 327 degrees."]):
            old.register(doc(f"https://{n}.example/", text))
        before = [(s.id, s.locator, s.sha256) for s in old.sources()]
        names = [name for name, _ in fetchledger.store.postgres.POSTGRES_MIGRATIONS]
        function = names.index("0009_register_function")  # and those after it
        with monkeypatch.context() as patched:  # a ledger as fetchledger left it before
            patched.setattr(fetchledger.store.postgres, "POSTGRES_MIGRATIONS",
                            fetchledger.store.postgres.POSTGRES_MIGRATIONS[:function])
            old.copy_to(url)
    assert rows(url, "SELECT count(*) FROM migration WHERE name = '0009_register_function'"
                ) == [(0,)]
    with Ledger(url) as ledger:  # migrated on open
        assert [(s.id, s.locator, s.sha256) for s in ledger.sources()] == before
        assert ledger.integrity_check() == "ok"
        assert ledger.register(doc("https://3.example/", "Tin melts at 232 degrees.")
                               ).source.id == 4
        again = ledger.register(doc("https://1.example/", "Ice melts at 0 degrees, or so."))
        assert (again.source.id, again.source.version) == (2, 2)
        assert ledger.quotes("ice melts", k=1)[0].source.id == 2
        assert ledger.integrity_check() == "ok"
    assert rows(url, "SELECT count(*) FROM migration WHERE name = '0009_register_function'"
                ) == [(1,)]


def test_commits_that_do_not_wait_for_the_flush_are_an_opt_in_of_the_url(url: str) -> None:
    """README, "Sharing one ledger": ``-csynchronous_commit=off`` in the URL's options
    (a libpq parameter) trades the last commits of a server crash for speed; by
    default every registration waits for the flush sent after it (the session's
    setting, which that flush's commit obeys)."""
    with Ledger(url) as ledger:
        ledger.register(doc("https://a.example/", "Water boils at 100 degrees."))
        conn = ledger._store._connection()  # type: ignore[attr-defined]  # this thread's
        assert conn.execute("SHOW synchronous_commit").fetchone() == ("on",)
    fast = url.replace("options=-csearch_path", "options=-csynchronous_commit%3Doff%20"
                                                "-csearch_path")
    assert fast != url
    with Ledger(fast) as ledger:
        assert ledger.register(doc("https://b.example/", "Ice melts at 0 degrees.")
                               ).source.id == 2
        conn = ledger._store._connection()  # type: ignore[attr-defined]  # this thread's
        assert conn.execute("SHOW synchronous_commit").fetchone() == ("off",)
        assert ledger.integrity_check() == "ok"


def _fks(url: str) -> list[tuple[object, ...]]:
    return rows(url, "SELECT conrelid::regclass::text, conname FROM pg_constraint "
                     "WHERE contype = 'f' AND connamespace = current_schema()::regnamespace "
                     "ORDER BY 1, 2")


def test_new_sources_small_and_large_and_a_known_one_in_one_call(url: str) -> None:
    """0021: a new source's small version is written once it is numbered; a large one
    (its text and raw bytes TOASTed) before the counter, under its key, then given its
    source. Both, and a known source's new version, in one statement."""
    big = " ".join(f"Sentence {n} of the long report says the level was {n} cm."
                   for n in range(300))
    noise = bytes(range(256)) * 40  # hardly compresses: its raw bytes stay large
    with Ledger(url) as ledger:
        ledger.register(doc("https://a.example/", "Water boils at 100 degrees."))
        batch = [doc("https://b.example/", "Ice melts at 0 degrees."),
                 Document(kind="web", locator="https://big.example/",
                          display="https://big.example/", text=big, raw=noise,
                          aliases=("https://big.example/old",)),
                 doc("https://a.example/", big),  # known, a large new version
                 doc("https://c.example/", "Lead melts at 327 degrees.")]
        got = [r for r in ledger.record([prepare(d) for d in batch]) if r is not None]
        assert [(r.source.id, r.source.version, r.new_source) for r in got] == [
            (2, 1, True), (3, 1, True), (1, 2, False), (4, 1, True)]
        for r in got:
            text = ledger.text(r.source.id, r.source.version)
            assert all(text[s.start:s.end] == s.text for s in r.snippets)
        assert ledger.quotes("level was 299 cm", k=2)[0].source.id in (1, 3)
        assert ledger.integrity_check() == "ok"
    assert rows(url, "SELECT source_id, number FROM version ORDER BY id") == [
        (1, 1), (2, 1), (3, 1), (1, 2), (4, 1)]
    assert rows(url, "SELECT count(*) FROM version WHERE source_id < 0") == [(0,)]
    # every passage, chunk and quote is of a version of its source
    assert rows(url, "SELECT count(*) FROM passage p LEFT JOIN version v "
                     "ON v.id = p.version_id WHERE v.id IS NULL") == [(0,)]
    assert rows(url, "SELECT DISTINCT c.version_id FROM text_chunk c "
                     "ORDER BY 1") == [(1,), (2,), (3,), (4,), (5,)]
    assert rows(url, "SELECT count(*) FROM quote q JOIN version v ON v.id = q.version_id "
                     "WHERE v.source_id <> q.source_id") == [(0,)]
    assert rows(url, "SELECT locator, source_id FROM alias WHERE source_id = 3 "
                     "ORDER BY locator") == [("https://big.example/", 3),
                                             ("https://big.example/old", 3)]


def test_the_integrity_check_finds_passages_chunks_and_quotes_of_no_version(
        url: str) -> None:
    """0021 dropped their foreign keys: the check stands in for them."""
    with Ledger(url) as ledger:
        ledger.register(doc("https://a.example/", "Water boils at 100 degrees."))
        ledger.register(doc("https://b.example/", "Ice melts at 0 degrees."))
        assert ledger.integrity_check() == "ok"
        strays = [('INSERT INTO passage (version_id, start, "end") VALUES (99, 0, 5)',
                   "DELETE FROM passage WHERE version_id = 99"),
                  ("INSERT INTO text_chunk (version_id, n, body) VALUES (99, 0, 'x')",
                   "DELETE FROM text_chunk WHERE version_id = 99"),
                  ("UPDATE quote SET source_id = 2 WHERE version_id = 1",
                   "UPDATE quote SET source_id = 1 WHERE version_id = 1")]
        for stray, undo in strays:
            rows(url, stray)
            assert "belongs to no version" in ledger.integrity_check()
            rows(url, undo)
            assert ledger.integrity_check() == "ok"


def test_a_ledger_as_of_0020_is_upgraded_to_0021_in_place(
        url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    migrations = fetchledger.store.postgres.POSTGRES_MIGRATIONS
    names = [name for name, _ in migrations]
    with monkeypatch.context() as patched:  # a ledger as fetchledger left it before 0021
        patched.setattr(fetchledger.store.postgres, "POSTGRES_MIGRATIONS",
                        migrations[:names.index("0021_fewer_checks")])
        with Ledger(url) as old:
            for n in range(3):
                old.register(doc(f"https://{n}.example/", f"Water boils at {n} degrees."))
    held = _fks(url)
    assert ("passage", "passage_version_id_fkey") in held
    with Ledger(url) as ledger:  # migrated on open
        assert [s.id for s in ledger.sources()] == [1, 2, 3]
        assert ledger.register(doc("https://3.example/", "Tin melts at 232 degrees.")
                               ).source.id == 4
        again = ledger.register(doc("https://1.example/", "Water boils at 99 degrees."))
        assert (again.source.id, again.source.version) == (2, 2)
        assert ledger.quotes("water boils", k=1)[0].source.id in (1, 2, 3)
        assert ledger.integrity_check() == "ok"
    assert [fk for fk in held if fk not in _fks(url)] == [  # 0021's and 0025's
        ("alias", "alias_source_id_fkey"), ("attempt", "attempt_source_id_fkey"),
        ("passage", "passage_version_id_fkey"), ("quote", "quote_source_id_fkey"),
        ("quote", "quote_version_id_fkey"), ("text_chunk", "text_chunk_version_id_fkey"),
        ("version", "version_source_id_fkey")]
    assert _fks(url) == [("search_hit", "search_hit_source_id_fkey")]


def test_the_ok_attempt_of_one_new_source_comes_before_the_failed_ones(url: str) -> None:
    """0021 writes the ok attempt of a call of one new registration with its source: the
    order of the ledger's attempts is still the calls' (ok ones in order, then failed)."""
    from fetchledger.errors import EmptyContent
    from fetchledger.store.prepare import Failed

    with Ledger(url) as ledger:
        ledger.record([prepare(doc("https://a.example/", "Water boils at 100 degrees.")),
                       Failed("web", "https://x.example/", EmptyContent("no text"))])
        ledger.record([prepare(doc("https://a.example/", "Water boils at 99 degrees.")),
                       Failed("web", "https://y.example/", EmptyContent("no text"))])
        ledger.record([prepare(doc("https://b.example/", "Ice melts at 0 degrees."))])
        assert [(a.locator, a.status, a.message, a.source_id) for a in ledger.attempts()] == [
            ("https://a.example/", "ok", "registered as [1] version 1", 1),
            ("https://x.example/", "empty_content", "no text", None),
            ("https://a.example/", "ok", "registered as [1] version 2", 1),
            ("https://y.example/", "empty_content", "no text", None),
            ("https://b.example/", "ok", "registered as [2] version 1", 2)]


def test_the_integrity_check_finds_versions_names_and_attempts_of_no_source(
        url: str) -> None:
    """0025 dropped their foreign keys to their source: the check stands in for them
    (a large new version left under its key, which the function replaces, among them)."""
    with Ledger(url) as ledger:
        ledger.register(doc("https://a.example/", "Water boils at 100 degrees."))
        assert ledger.integrity_check() == "ok"
        strays = [("INSERT INTO version (source_id, number, text_sha256, raw_sha256, "
                   "retrieved_at, extractor, extractor_version, meta, text, raw_size, "
                   "raw_stored) SELECT -5, 1, text_sha256, raw_sha256, retrieved_at, "
                   "extractor, extractor_version, meta, text, raw_size, raw_stored "
                   "FROM version WHERE id = 1",
                   "DELETE FROM version WHERE source_id = -5"),
                  ("INSERT INTO alias (locator, source_id) VALUES ('https://x.example/', 9)",
                   "DELETE FROM alias WHERE source_id = 9"),
                  ("INSERT INTO attempt (kind, locator, at, status, message, source_id) "
                   "VALUES ('web', 'https://x.example/', '2026-12-03', 'ok', 'x', 9)",
                   "DELETE FROM attempt WHERE source_id = 9")]
        for stray, undo in strays:
            rows(url, stray)
            assert "belongs to no source" in ledger.integrity_check()
            rows(url, undo)
            assert ledger.integrity_check() == "ok"


def test_new_sources_of_one_call_are_numbered_in_order_with_their_rows(url: str) -> None:
    """With no foreign key to hold them to their source (0025), a call of several new
    sources (small and large versions, names, quotes) numbers them densely, in order,
    each row under its own source's id."""
    big = " ".join(f"Sentence {n} of the long report says the level was {n} cm."
                   for n in range(300))
    noise = bytes(range(256)) * 40
    with Ledger(url) as ledger:
        batch = [doc("https://a.example/", "Water boils at 100 degrees.",
                     aliases=("https://a.example/old",)),
                 Document(kind="web", locator="https://big.example/",
                          display="https://big.example/", text=big, raw=noise),
                 doc("https://c.example/", "Lead melts at 327 degrees.")]
        got = [r for r in ledger.record([prepare(d) for d in batch]) if r is not None]
        assert [(r.source.id, r.new_source) for r in got] == [(1, True), (2, True), (3, True)]
        assert ledger.register(doc("https://d.example/", "Tin melts at 232 degrees.")
                               ).source.id == 4
        assert ledger.integrity_check() == "ok"
    assert rows(url, "SELECT value FROM counter") == [(4,)]
    assert rows(url, "SELECT id, locator FROM source ORDER BY id") == [
        (1, "https://a.example/"), (2, "https://big.example/"), (3, "https://c.example/"),
        (4, "https://d.example/")]
    assert rows(url, "SELECT source_id, locator FROM alias ORDER BY locator") == [
        (1, "https://a.example/"), (1, "https://a.example/old"),
        (2, "https://big.example/"), (3, "https://c.example/"), (4, "https://d.example/")]
    assert rows(url, "SELECT DISTINCT v.source_id FROM version v ORDER BY 1") == [
        (1,), (2,), (3,), (4,)]
    assert rows(url, "SELECT count(*) FROM quote q JOIN version v ON v.id = q.version_id "
                     "WHERE v.source_id <> q.source_id") == [(0,)]
    assert rows(url, "SELECT source_id, message FROM attempt ORDER BY id") == [
        (1, "registered as [1] version 1"), (2, "registered as [2] version 1"),
        (3, "registered as [3] version 1"), (4, "registered as [4] version 1")]
