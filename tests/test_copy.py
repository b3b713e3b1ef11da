"""`fetchledger copy SRC DST`: a whole ledger into an empty one, across backends, with
ids, versions, quotes and attempts unchanged (DESIGN §4)."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fetchledger import (
    Document,
    HTTPStatusError,
    InvalidArgument,
    Ledger,
    Page,
    SearchHit,
    copy_ledger,
)
from fetchledger.store import open_store
from fetchledger.store.prepare import Failed

from conftest import LedgerLocation, pg_schema, rows, table_counts

PAIRS = [
    pytest.param("sqlite", "postgres", marks=pytest.mark.postgres, id="sqlite-to-postgres"),
    pytest.param("postgres", "sqlite", marks=pytest.mark.postgres, id="postgres-to-sqlite"),
    pytest.param("postgres", "postgres", marks=pytest.mark.postgres, id="postgres-to-postgres"),
    pytest.param("sqlite", "sqlite", id="sqlite-to-sqlite"),
]


@pytest.fixture
def place(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    """``place(kind)``: a new, empty ledger location of that backend."""
    with contextlib.ExitStack() as stack:
        made = iter(range(100))

        def make(kind: str) -> LedgerLocation:
            if kind == "sqlite":
                return tmp_path / f"ledger{next(made)}.db"
            database = request.getfixturevalue("pg_session_database")
            return stack.enter_context(pg_schema(database))

        yield make


def fill(location: LedgerLocation) -> None:
    """A ledger with a bit of everything: versions, aliases, pages, quotes, attempts."""
    with Ledger(location) as ledger:
        ledger.register(Document(kind="web", locator="https://a.example/boil",
                                 display="https://a.example/boil", title="Boiling",
                                 text="Water boils at 100 °C at sea level.\nIt boils lower "
                                      "on mountains.", raw=b"<p>v1</p>",
                                 aliases=("https://a.example/old",), meta={"status": 200}),
                        query="mountains")
        ledger.register(Document(kind="file", locator="/doc.pdf", display="/doc.pdf",
                                 text="Page one sentence.\nPage two sentence.",
                                 raw=bytes(range(256)) * 4,
                                 pages=(Page(0, 19, 1, "i"), Page(19, 37, 2, None))))
        ledger.register(Document(kind="web", locator="https://a.example/boil",
                                 display="https://a.example/boil", title="Boiling",
                                 text="Water boils at 100 °C at sea level.\nPressure "
                                      "cookers raise it to 120 °C.", raw=b"<p>v2</p>"))
        ledger.quote(1, "It boils lower on mountains.")
        ledger.quotes("pressure cookers")
        ledger.record_searches([(1, SearchHit("boiling", "brave", 2, "Boiling", "It boils."))])
        ledger.record([Failed("web", "https://gone.example/",
                              HTTPStatusError("HTTP 404", locator="https://gone.example/"))])


def snapshot(location: LedgerLocation) -> dict[str, Any]:
    with Ledger(location) as ledger:
        sources = ledger.sources()
        return {
            "sources": sources,
            "details": [ledger.details(s.id).to_json() for s in sources],
            "texts": [ledger.texts(s.id) for s in sources],
            "raw": [ledger.raw(s.id, v) for s in sources for v in range(1, s.versions + 1)],
            "pages": [ledger.pages(s.id) for s in sources],
            "quotes": ledger.recorded_quotes(),
            "attempts": ledger.attempts(),
            "identity key": ledger.identity_key,
        }


@pytest.mark.parametrize(("from_kind", "to_kind"), PAIRS)
def test_a_copy_keeps_ids_versions_quotes_and_attempts(place: Any, from_kind: str,
                                                       to_kind: str) -> None:
    source, destination = place(from_kind), place(to_kind)
    fill(source)
    copied = copy_ledger(source, destination)
    assert copied.counts["source"] == 2 and copied.counts["version"] == 3
    assert copied.counts["attempt"] == 4 and copied.counts["quote"] >= 3
    assert snapshot(destination) == snapshot(source)
    with Ledger(destination) as ledger:
        assert ledger.integrity_check() == "ok"
        found = ledger.quotes("pressure cookers")  # the search index was built
        assert found[0].source.id == 1 and "120" in found[0].snippets[0].quote
        assert not ledger.quotes("mountains")  # superseded text stays out of it
        assert ledger.source_for("https://a.example/old").id == 1  # aliases came along
        new = ledger.register(Document(kind="file", locator="/next", display="/next",
                                       text="The next source after the copy.", raw=b"n"))
        assert new.source.id == 3  # ids go on after the copied ones


@pytest.mark.parametrize(("from_kind", "to_kind"), PAIRS)
def test_a_non_empty_destination_is_refused_untouched(place: Any, run_cli: Any,
                                                      from_kind: str, to_kind: str) -> None:
    source, destination = place(from_kind), place(to_kind)
    fill(source)
    with Ledger(destination) as ledger:
        ledger.register(Document(kind="file", locator="/mine", display="/mine",
                                 text="Already here.", raw=b"m"))
    before = snapshot(destination)
    done = run_cli("copy", str(source), str(destination))
    assert done.exit_code == 2
    assert done.stderr.startswith("fetchledger: error: the ledger ")
    assert "is not empty (1 sources, 1 attempts)" in done.stderr
    assert snapshot(destination) == before


def test_the_cli_copies_and_reports(place: Any, run_cli: Any) -> None:
    source, destination = place("sqlite"), place("sqlite")
    fill(source)
    done = run_cli("--json", "copy", str(source), str(destination))
    assert done.exit_code == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["from"] == str(source) and report["to"] == str(destination)
    assert report["rows"]["source"] == 2 and report["rows"]["version"] == 3
    text = run_cli("copy", str(source), str(place("sqlite")))
    assert text.stderr.startswith("fetchledger: copied 2 sources (3 versions, ")


def test_a_missing_source_is_bad_input_and_creates_nothing(place: Any, run_cli: Any,
                                                           tmp_path: Path) -> None:
    destination = place("sqlite")
    done = run_cli("copy", str(tmp_path / "nothing.db"), str(destination))
    assert done.exit_code == 2 and "no ledger at" in done.stderr
    assert not (tmp_path / "nothing.db").exists() and not Path(destination).exists()
    source = place("sqlite")
    fill(source)
    same = run_cli("copy", str(source), str(source))
    assert same.exit_code == 2 and "is the ledger being copied" in same.stderr


@pytest.mark.parametrize("kind", ["sqlite",
                                  pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_copy_cut_off_midway_leaves_the_destination_empty(place: Any, kind: str) -> None:
    source, destination = place("sqlite"), place(kind)
    fill(source)

    def broken() -> Iterator[Any]:
        with Ledger(source) as ledger:
            for table, found in ledger._store.export_rows(batch=1):
                if table == "quote":
                    raise RuntimeError("the source went away")
                yield table, found

    store = open_store(destination)
    try:
        with pytest.raises(RuntimeError):
            store.import_rows(broken())
    finally:
        store.close()
    assert set(table_counts(destination).values()) == {0}
    with pytest.raises(InvalidArgument):  # and a copy into it still works afterwards:
        copy_ledger(source, source)
    assert copy_ledger(source, destination).counts["source"] == 2


def index_of(location: LedgerLocation) -> list[tuple[object, ...]]:
    """Each passage of a PostgreSQL ledger with its index terms (NULL: not indexed)."""
    return rows(location, 'SELECT v.source_id, v.number, p.start, p."end", p.terms::text '
                          "FROM passage p JOIN version v ON v.id = p.version_id "
                          'ORDER BY v.source_id, v.number, p.start')


@pytest.mark.postgres
def test_a_copy_into_postgres_indexes_as_registration_does(place: Any) -> None:
    """The terms a copy gives each passage are the ones registering it gives (offsets in
    code points: multibyte and astral characters before the passages)."""
    copied, registered = place("sqlite"), place("postgres")
    for location in (copied, registered):
        fill(location)
        with Ledger(location) as ledger:
            ledger.register(Document(
                kind="file", locator="/notes.txt", display="/notes.txt",
                text="Die Straße führt nach Köln.\n𝄞 Musik beginnt hier. Ünïcödé läuft weiter."
                     "\nŁódź liegt im Süden; 東京 im Osten.", raw=b"notes"))
    into = place("postgres")
    copy_ledger(copied, into)
    assert index_of(into) == index_of(registered)
    assert [r for r in index_of(into) if r[4] is None]  # the superseded version's passages


@pytest.mark.postgres
def test_a_copy_into_postgres_keeps_the_passage_indexes(place: Any) -> None:
    """The copy writes passages with their indexes dropped and makes them again after:
    the destination ends with the indexes a new ledger has, and they are used."""
    source, fresh, into = place("sqlite"), place("postgres"), place("postgres")
    fill(source)
    copy_ledger(source, into)
    with Ledger(fresh):
        pass
    definitions = ("SELECT indexname, indexdef FROM pg_indexes "
                   "WHERE tablename = 'passage' ORDER BY indexname")
    assert rows(into, definitions) == rows(fresh, definitions)
    assert len(rows(into, definitions)) >= 4
    with Ledger(into) as ledger:
        assert ledger.quotes("pressure cookers", k=1)[0].snippets


@pytest.mark.parametrize("kind", ["sqlite",
                                  pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_copy_indexes_a_long_text_in_linear_time(place: Any, kind: str) -> None:
    """One source of 40,000 passages (2.5 MB). The index was made with a ``substr`` per
    passage of the stored text, which PostgreSQL decompresses from its start each
    time and SQLite reads whole each time: quadratic (``benchmarks/copy_ledger.py``,
    1 MB: 109 s into PostgreSQL, 26 s into SQLite). Its text is now read once."""
    source, destination = place("sqlite"), place(kind)
    text = "\n".join(f"Station {n} recorded a tide of {n % 97} metres on the north shore."
                     for n in range(40_000))
    with Ledger(source) as ledger:
        ledger.register(Document(kind="file", locator="/long.txt", display="/long.txt",
                                 text=text, raw=text.encode()))
    subprocess.run([sys.executable, "-c", "import sys; from fetchledger import copy_ledger; "
                    "copy_ledger(sys.argv[1], sys.argv[2])", str(source), str(destination)],
                   check=True, timeout=60)
    with Ledger(destination) as ledger:
        assert ledger.integrity_check() == "ok"
        assert "Station 39999 " in ledger.quotes("station 39999", k=1)[0].snippets[0].quote
    if kind == "postgres":
        assert rows(destination, "SELECT count(*) FROM passage WHERE terms IS NULL") == [(0,)]
    else:
        assert rows(destination, "SELECT count(*) FROM passage_fts") == [(40_000,)]
