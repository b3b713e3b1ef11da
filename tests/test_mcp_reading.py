"""The MCP tool read_source (issue 18), over stdio with the SDK's own client: a
source read in order, window by window, every line a citable snippet line."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from fetchledger import Ledger, json_schema
from fetchledger.mcp import DATA_PREFACE
from pdfgen import make_pdf

from conftest import LedgerLocation, pg_schema, table_counts
from mcp_session import McpSession, text_of

pytestmark = pytest.mark.both_backends

SNIPPET_LINE = re.compile(r'^\[(\d+)\] "(.*)"( \(p\. [^)]+\))?$')
NOTES = ("# Tide pools\n\nThe largest pool holds about two hundred litres of water. "
         "Anemones close when the water drains away.\n\n## Crabs\n\n"
         + " ".join(f"Crab {n} hides under stone {n}." for n in range(1, 41)) + "\n")


@pytest.fixture(scope="module")
def ledger_path(tmp_path_factory: pytest.TempPathFactory, backend: str,
                request: pytest.FixtureRequest) -> Iterator[LedgerLocation]:
    """One ledger for the module's server (a schema of its own on PostgreSQL)."""
    if backend == "postgres":
        with pg_schema(request.getfixturevalue("pg_session_database")) as url:
            yield url
    else:
        yield tmp_path_factory.mktemp("reading") / "ledger.db"


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory, ledger_path: LedgerLocation
            ) -> Iterator[McpSession]:
    tmp_path = tmp_path_factory.mktemp("reading-files")
    (tmp_path / "notes.md").write_text(NOTES, encoding="utf-8")
    (tmp_path / "tides.pdf").write_bytes(make_pdf([
        ["Tide tables", "High water at noon."], ["Low water", "Low water at six."],
        ["Spring tides", "Spring tides are the highest tides."]]))
    with Ledger(ledger_path) as ledger:
        ledger.read(tmp_path / "notes.md")
        ledger.read(tmp_path / "tides.pdf")
    opened = McpSession(["mcp", "--ledger", str(ledger_path), "--root", str(tmp_path)],
                        cwd=tmp_path, workdir=tmp_path / "logs")
    try:
        yield opened
    finally:
        opened.close()
    assert opened.stray == [] and opened.stderr() == ""


def lines_of(result: Any) -> list[str]:
    assert not result.is_error, text_of(result)
    lines = text_of(result).split("\n")
    assert lines[0] == DATA_PREFACE
    return lines[1:]


def test_read_source_pages_through_a_source_in_citable_lines(
        session: McpSession, ledger_path: LedgerLocation) -> None:
    tool = session.tools()["read_source"]
    assert set(tool.input_schema["properties"]) == {"id", "start", "limit", "pages", "version",
                                                     "outline"}
    assert tool.input_schema["required"] == ["id"]
    assert tool.output_schema == json_schema("reading", or_failure=True)
    assert tool.annotations and tool.annotations.read_only_hint
    before = table_counts(ledger_path)
    with Ledger(ledger_path, read_only=True) as ledger:
        total = ledger.read_source(1).total
        expected = [ledger.read_source(1, n, limit=1).lines[0].text_line()
                    for n in range(1, total + 1)]
    read, start = [], 1
    while True:
        result = session.call("read_source", id=1, start=start, limit=300)
        lines = lines_of(result)
        data = result.structured_content
        assert lines[0] == "[1] Tide pools — notes.md"
        assert all(SNIPPET_LINE.match(line) for line in lines[1:-1])
        assert [p["line"] for p in data["passages"]] == [
            SNIPPET_LINE.match(line).group(2) for line in lines[1:-1]]  # type: ignore[union-attr]
        read += lines[1:-1]
        if data["next"] is None:
            assert lines[-1] == f"end of source: {total} passages"
            break
        assert lines[-1] == f"next start: {data['next']} of {total} passages"
        start = data["next"]
    assert read == expected  # every passage once, in order
    assert read[0] == '[1] "§ Tide pools"'
    outline = session.call("read_source", id=1, outline=True)
    assert lines_of(outline)[1:] == ['1: [1] "§ Tide pools"', '4: [1] "§ Crabs"',
                                     f"end of source: {total} passages"]
    assert outline.structured_content["passages"][1]["quote"] == "Crabs"
    pages = session.call("read_source", id=2, pages="2")
    assert lines_of(pages)[1:] == ['[2] "§ Low water" (p. 2)', '[2] "Low water at six." (p. 2)',
                                   "next start: 5 of 6 passages"]
    assert table_counts(ledger_path) == before  # reading records nothing


@pytest.mark.parametrize(("arguments", "status", "message"), [
    ({"id": 9}, "unknown_source", "no source [9]"),
    ({"id": 1, "pages": "1"}, "invalid_argument", "source [1] has no pages"),
    ({"id": 2, "pages": "7-9"}, "invalid_argument", "page 7 is past the end"),
    ({"id": 1, "start": 500}, "invalid_argument", "passage 500 is past the end"),
    ({"id": 1, "limit": 0}, "invalid_argument", "limit"),
    ({"id": 1, "limit": 100_001}, "invalid_argument", "the limit must be 1 to 100,000"),
    ({"id": 1, "version": 2}, "invalid_argument", "source [1] has no version 2"),
    ({"id": 1, "pages": "x"}, "invalid_argument", "pages"),
])
def test_read_source_refuses_bad_arguments_with_a_tool_error(
        session: McpSession, ledger_path: LedgerLocation, arguments: dict[str, Any],
        status: str, message: str) -> None:
    before = table_counts(ledger_path)
    result = session.call("read_source", **arguments)
    assert result.is_error
    first = text_of(result).split("\n")[0]
    assert first.startswith(f"{status}: ") and message in first, first
    assert result.structured_content["error"]["status"] == status
    assert table_counts(ledger_path) == before
