from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import rows

SNIPPET = re.compile(r'^\[(\d+)\] "(.*)"( \(p\. [^)]+\))?$')


def test_read_registers_and_prints_snippets(tmp_path: Path, run_cli, ledger_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("# Water\n\nAt sea level, water boils at 100 °C. It is hot.\n")
    result = run_cli("read", str(note))
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "[1] Water — note.md"
    assert SNIPPET.match(lines[1])
    assert rows(ledger_path, "SELECT id, kind, locator FROM source") == [
        (1, "file", str(note.resolve()))]


def test_json_shape(tmp_path: Path, run_cli) -> None:
    note = tmp_path / "note.txt"
    note.write_text("At sea level, water boils at 100 °C.\n")
    result = run_cli("read", str(note), "--json")
    data = json.loads(result.stdout)
    assert set(data[0]) == {"source", "snippets"}
    assert set(data[0]["source"]) == {"id", "kind", "locator", "title", "retrieved_at", "sha256"}
    assert set(data[0]["snippets"][0]) == {"id", "quote", "start", "end", "page", "line"}
