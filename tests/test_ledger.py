"""The Ledger API: registration, identity, versions, search, quotes, attempts, storage."""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fetchledger import (
    Document,
    EmptyContent,
    InvalidArgument,
    InvalidPath,
    Ledger,
    LedgerCorrupt,
    LedgerTooNew,
    QuoteNotFound,
    UnknownSource,
)
from fetchledger.config import resolve_ledger_path
from fetchledger.text.normalize import LINE_BREAKS

from conftest import rows, table_counts

pytestmark = pytest.mark.both_backends


def doc(locator: str, text: str, **extra: object) -> Document:
    return Document(kind="file", locator=locator, display=locator, text=text, raw=text.encode(),
                    extractor="test", extractor_version="1", **extra)  # type: ignore[arg-type]


def test_same_file_twice_is_one_source_one_version(tmp_path: Path, ledger: Ledger) -> None:
    path = tmp_path / "a.txt"
    path.write_text("Water boils at 100 °C at sea level.\n")
    first = ledger.read(path)
    second = ledger.read(str(path))
    assert first.source.id == second.source.id == 1
    assert first.new_source and not second.new_source and not second.new_version
    assert ledger.source(1).versions == 1
    assert rows(ledger.path, "SELECT count(*) FROM version") == [(1,)]


def test_changed_content_is_a_new_version_of_the_same_id(tmp_path: Path, ledger: Ledger) -> None:
    path = tmp_path / "a.txt"
    path.write_text("Water boils at 100 °C at sea level.\n")
    ledger.read(path)
    path.write_text("Water boils at 99.97 °C at sea level.\n")
    again = ledger.read(path, query="boils")
    assert again.source.id == 1 and again.new_version and again.source.version == 2
    assert ledger.text(1) == "Water boils at 99.97 °C at sea level."
    assert ledger.text(1, version=1) == "Water boils at 100 °C at sea level."
    # the search index holds the latest version only
    assert [s.quote for r in ledger.quotes("boils") for s in r.snippets] == [
        "Water boils at 99.97 °C at sea level."]


def test_ids_are_dense_in_registration_order(tmp_path: Path, ledger: Ledger) -> None:
    for name in "cab":
        (tmp_path / name).write_text(f"Sentence about {name} is here.\n")
        ledger.read(tmp_path / name)
    assert [(s.id, Path(s.locator).name) for s in ledger.sources()] == [
        (1, "c"), (2, "a"), (3, "b")]


def test_snippets_are_verbatim_and_recorded(tmp_path: Path, ledger: Ledger) -> None:
    path = tmp_path / "a.md"
    path.write_text("# T\n\nOne sentence here now. Two sentence here now.\n\nThree is last here.")
    got = ledger.read(path, k=2)
    text = ledger.text(got.source.id)
    for snippet in got.snippets:
        assert snippet.source_id == got.source.id
        assert text[snippet.start : snippet.end] == snippet.quote
    assert sorted(r[0] for r in rows(ledger.path, "SELECT text FROM quote")) == sorted(
        s.quote for s in got.snippets)


def test_failed_retrieval_is_an_attempt_without_an_id(tmp_path: Path, ledger: Ledger) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("   \n")
    with pytest.raises(EmptyContent):
        ledger.read(empty)
    assert ledger.sources() == []
    (attempt,) = ledger.attempts(failed=True)
    assert (attempt.status, attempt.locator) == ("empty_content", str(empty.resolve()))


def test_bad_input_records_nothing(tmp_path: Path, ledger: Ledger) -> None:
    before = table_counts(ledger.path)
    with pytest.raises(InvalidPath):
        ledger.read(tmp_path / "missing.txt")
    with pytest.raises(InvalidPath):
        ledger.read(tmp_path)
    with pytest.raises(UnknownSource):
        ledger.source(9)
    assert table_counts(ledger.path) == before


def test_successful_attempts_are_recorded_as_ok(tmp_path: Path, ledger: Ledger) -> None:
    (tmp_path / "a.txt").write_text("Some sentence is here.\n")
    ledger.read(tmp_path / "a.txt")
    assert [a.status for a in ledger.attempts()] == ["ok"]
    assert ledger.attempts(failed=True) == []


def test_read_many_keeps_order_and_isolates_failures(tmp_path: Path, ledger: Ledger) -> None:
    (tmp_path / "good.txt").write_text("A good sentence is here.\n")
    (tmp_path / "empty.txt").write_text("")
    outcomes = ledger.read_many([tmp_path / "missing", tmp_path / "good.txt",
                                 tmp_path / "empty.txt"])
    assert [getattr(o, "status", "ok") for o in outcomes] == [
        "invalid_path", "ok", "empty_content"]


def test_quote_confirms_verbatim_text_and_forgives_typography(ledger: Ledger) -> None:
    ledger.register(doc("/x", "He said “water boils” at 100 °C — at sea level."))
    got = ledger.quote(1, 'said "water boils" at 100 °C - at')
    (snippet,) = got.snippets
    assert snippet.quote == "said “water boils” at 100 °C — at"
    assert ledger.text(1)[snippet.start : snippet.end] == snippet.quote
    assert (snippet.quote,) in rows(ledger.path, "SELECT text FROM quote")


def test_quote_never_forgives_digits_and_shows_the_nearest_passage(ledger: Ledger) -> None:
    ledger.register(doc("/x", "Cats sleep.\nWater boils at 100 °C at sea level."))
    before = table_counts(ledger.path)
    with pytest.raises(QuoteNotFound) as caught:
        ledger.quote(1, "Water boils at 101 °C")
    assert caught.value.nearest == "Water boils at 100 °C at sea level."
    assert table_counts(ledger.path) == before


def test_quote_does_not_cross_lines(ledger: Ledger) -> None:
    ledger.register(doc("/x", "first line ends\nsecond line starts"))
    with pytest.raises(QuoteNotFound):
        ledger.quote(1, "ends second")


def test_quote_finds_text_of_an_older_version(ledger: Ledger) -> None:
    ledger.register(doc("/x", "Old sentence about boiling."))
    ledger.register(doc("/x", "New sentence about freezing."))
    got = ledger.quote(1, "Old sentence")
    assert got.snippets[0].version == 1


def test_quotes_searches_all_sources_and_one_source(ledger: Ledger) -> None:
    ledger.register(doc("/a", "Water boils at 100 °C.\nIce melts at 0 °C."))
    ledger.register(doc("/b", "Mercury boils at 357 °C.\nNothing else here."))
    found = ledger.quotes("boils", k=5)
    assert sorted(r.source.id for r in found) == [1, 2]
    only = ledger.quotes("boils", source=2)
    assert [s.quote for r in only for s in r.snippets] == ["Mercury boils at 357 °C."]
    assert ledger.quotes("zebra") == []
    with pytest.raises(InvalidArgument):
        ledger.quotes("  !! ")
    with pytest.raises(UnknownSource):
        ledger.quotes("boils", source=7)


def test_aliases_name_the_same_source(ledger: Ledger) -> None:
    first = ledger.register(doc("/canonical", "Text one is here.", aliases=("/alias",)))
    again = ledger.register(doc("/alias", "Text one is here."))
    assert first.source.id == again.source.id


def test_stored_text_never_holds_other_line_breaks(ledger: Ledger) -> None:
    text = "a" + "b".join(LINE_BREAKS) + " end."
    got = ledger.register(doc("/x", text))
    stored = ledger.text(got.source.id)
    assert set(stored) & set(LINE_BREAKS) == set()


def test_raw_bytes_are_kept_compressed(tmp_path: Path, ledger: Ledger) -> None:
    path = tmp_path / "a.txt"
    body = "Repeated sentence for compression. " * 2000
    path.write_text(body)
    ledger.read(path)
    assert ledger.raw(1) == body.encode()
    (stored,) = rows(ledger.path, "SELECT length(raw), raw_size FROM version")
    assert stored[0] < stored[1] / 10  # type: ignore[operator]


def test_reset_empties_everything(tmp_path: Path, ledger: Ledger) -> None:
    (tmp_path / "a.txt").write_text("Some sentence is here.\n")
    ledger.read(tmp_path / "a.txt")
    ledger.reset()
    assert set(table_counts(ledger.path).values()) == {0}
    assert ledger.read(tmp_path / "a.txt").source.id == 1


def test_migrations_are_recorded(ledger: Ledger, backend: str) -> None:
    names = [r[0] for r in rows(ledger.path, "SELECT name FROM migration ORDER BY name")]
    # claims across machines; ids numbered at commit
    shared = ["0003_batch_claims"] if backend == "postgres" else []
    numbered = ["0006_provisional_ids"] if backend == "postgres" else []
    # a registration in one statement
    function = ["0009_register_function"] if backend == "postgres" else []
    # ... in a transaction of its own
    statement = ["0013_register_statement"] if backend == "postgres" else []
    # ... fewer indexes written by it
    indexes = ["0015_fewer_index_writes"] if backend == "postgres" else []
    # ... new sources queue for the id counter, which is handed on before the flush
    queue = ["0018_counter_queue", "0019_async_numbering"] if backend == "postgres" else []
    # ... and checks fewer foreign keys
    checks = ["0021_fewer_checks"] if backend == "postgres" else []
    # ... and fewer again, the counter's update in the statement of the rows it numbers
    source_checks = ["0025_fewer_source_checks"] if backend == "postgres" else []
    assert names == ["0001_initial", "0002_keyed_identity", *shared, "0005_search_hits",
                     *numbered, "0007_secret_rules", "0008_reading", *function,
                     "0010_credentials_not_identity", "0011_nested_secrets",
                     "0012_secret_shapes", *statement, "0014_shell_quoting", *indexes,
                     "0016_more_secret_options", "0017_more_secret_forms", *queue,
                     "0020_fed_secrets", *checks, "0022_held_out_secrets",
                     "0023_stray_percent", "0024_url_characters", *source_checks]
    if backend == "sqlite":
        assert rows(ledger.path, "PRAGMA journal_mode") == [("wal",)]


def test_a_newer_ledger_is_refused_not_touched(ledger_path: Path | str) -> None:
    with Ledger(ledger_path) as ledger:
        ledger.register(doc("/kept", "A sentence that stays."))
    rows(ledger_path, "INSERT INTO migration VALUES ('9999_future', 'x')")
    before = table_counts(ledger_path), rows(ledger_path, "SELECT * FROM migration")
    file_before = ledger_path.read_bytes() if isinstance(ledger_path, Path) else None
    with pytest.raises(LedgerTooNew):
        Ledger(ledger_path)
    assert (table_counts(ledger_path), rows(ledger_path, "SELECT * FROM migration")) == before
    if isinstance(ledger_path, Path):
        assert ledger_path.read_bytes() == file_before


@pytest.mark.sqlite_only
@pytest.mark.parametrize("content", [b"this is not a database at all" * 100, b""])
def test_a_file_that_is_not_a_ledger_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.db"
    path.write_bytes(content)
    if content:
        with pytest.raises(LedgerCorrupt):
            Ledger(path)
    else:  # an empty file is a new SQLite database
        Ledger(path).close()


@pytest.mark.sqlite_only
def test_a_foreign_sqlite_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE t (x)")
    with pytest.raises(LedgerCorrupt):
        Ledger(path)


@pytest.mark.sqlite_only
def test_ledger_path_resolution(tmp_path: Path) -> None:
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    assert resolve_ledger_path(cwd=nested, env={}) == nested / ".fetchledger" / "ledger.db"
    found = tmp_path / ".fetchledger" / "ledger.db"
    found.parent.mkdir()
    found.touch()
    assert resolve_ledger_path(cwd=nested, env={}) == found
    assert resolve_ledger_path(cwd=nested, env={"FETCHLEDGER_LEDGER": "x.db"}) == nested / "x.db"
    assert resolve_ledger_path("/tmp/y.db", cwd=nested, env={"FETCHLEDGER_LEDGER": "x"}) == (
        Path("/tmp/y.db"))


# --- property: every quote handed out is verbatim, one line, and carries the source id ----

texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=2000)


@settings(max_examples=150, deadline=None)
@given(steps=st.lists(st.tuples(st.integers(0, 2), texts), min_size=1, max_size=4),
       query=st.one_of(st.none(), st.text(max_size=30)), k=st.integers(1, 5))
def test_property_quotes_are_verbatim(steps: list[tuple[int, str]], query: str | None,
                                      k: int) -> None:
    """Registrations (some replacing earlier versions), then a ledger-wide search:
    every quote is text[start:end] of its source's stored text, one line, its id."""
    with tempfile.TemporaryDirectory() as folder, Ledger(Path(folder) / "l.db") as ledger:
        for n, text in steps:
            try:
                got = ledger.register(doc(f"/doc/{n}", text), query=query, k=k)
            except EmptyContent:
                assert not text.translate({0: "x"}).strip()
                continue
            stored = ledger.text(got.source.id)
            assert stored.split("\n") == stored.splitlines() or stored.endswith("\n")
            for snippet in got.snippets:
                assert snippet.source_id == got.source.id
                assert stored[snippet.start : snippet.end] == snippet.quote
                assert "\n" not in snippet.quote and snippet.quote
        if not query:
            return
        try:
            found = ledger.quotes(query, k=k)
        except InvalidArgument:
            return
        for retrieval in found:
            latest = ledger.text(retrieval.source.id)
            for snippet in retrieval.snippets:
                assert snippet.source_id == retrieval.source.id
                assert latest[snippet.start : snippet.end] == snippet.quote
                assert "\n" not in snippet.quote
