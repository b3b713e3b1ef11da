"""render / check / export on the command line: exit codes, files written or not,
and the ledger left exactly as it was (they only read it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fetchledger import Ledger
from fetchledger.cite.markdown import BLOCK_END, BLOCK_START

from cite_sources import seed
from conftest import rows, table_counts

pytestmark = pytest.mark.both_backends


@pytest.fixture
def seeded(ledger_path: Path) -> Path:
    with Ledger(ledger_path) as ledger:
        seed(ledger)
    return ledger_path


@pytest.fixture
def draft(tmp_path: Path) -> Path:
    path = tmp_path / "draft.md"
    path.write_text("# Notes\n\nAt sea level, water boils at 100 °C.[1] Beans cook in 35 "
                    "minutes.[2]\n", encoding="utf-8")
    return path


def _snapshot(path: Path) -> tuple[dict[str, int], list[tuple[object, ...]]]:
    return table_counts(path), rows(path, "SELECT * FROM quote ORDER BY id")


def test_render_prints_the_block(run_cli, seeded: Path, draft: Path) -> None:
    before = _snapshot(seeded)
    result = run_cli("render", str(draft))
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line[:4] for line in lines] == ["[1] ", "[2] "]
    assert BLOCK_START not in result.stdout
    assert draft.read_text(encoding="utf-8").count("[") == 2  # untouched
    assert _snapshot(seeded) == before


def test_render_in_place_then_again_changes_nothing(run_cli, seeded: Path,
                                                    draft: Path) -> None:
    before = _snapshot(seeded)
    original = draft.read_text(encoding="utf-8")
    result = run_cli("render", str(draft), "--in-place")
    assert result.exit_code == 0, result.stderr
    assert "wrote 2 sources" in result.stderr
    text = draft.read_text(encoding="utf-8")
    assert text.startswith(original) and text.rstrip().endswith(BLOCK_END)
    again = run_cli("render", str(draft), "-i")
    assert again.exit_code == 0 and "up to date" in again.stderr
    assert draft.read_text(encoding="utf-8") == text
    assert _snapshot(seeded) == before


def test_render_to_an_output_file(run_cli, seeded: Path, draft: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.md"
    result = run_cli("render", str(draft), "-o", str(out), "--style", "footnotes")
    assert result.exit_code == 0, result.stderr
    assert "[^1]: Boiling point" in out.read_text(encoding="utf-8")
    assert "[^" not in draft.read_text(encoding="utf-8")
    bib = tmp_path / "refs.bib"
    assert run_cli("render", str(draft), "--style", "bibtex", "-o", str(bib)).exit_code == 0
    assert bib.read_text(encoding="utf-8").startswith("@online{fetchledger-1,")


def test_render_unknown_id_exits_2_and_writes_nothing(run_cli, seeded: Path,
                                                      draft: Path, tmp_path: Path) -> None:
    draft.write_text("Water.[1] Nowhere.[42]\n", encoding="utf-8")
    before = _snapshot(seeded)
    for args in (["--in-place"], ["-o", str(tmp_path / "o.md")], []):
        result = run_cli("render", str(draft), *args)
        assert result.exit_code == 2
        assert result.stdout == ""
        assert result.stderr.startswith("fetchledger: error: the draft cites [42] (line 1")
    assert draft.read_text(encoding="utf-8") == "Water.[1] Nowhere.[42]\n"
    assert not (tmp_path / "o.md").exists()
    assert _snapshot(seeded) == before


@pytest.mark.parametrize("args", [
    ["--in-place", "-o", "x.md"],
    ["--in-place", "--style", "csl-json"],
    ["--style", "apa"],
])
def test_render_bad_arguments_exit_2(run_cli, seeded: Path, draft: Path,
                                     args: list[str]) -> None:
    result = run_cli("render", str(draft), *args)
    assert result.exit_code == 2
    assert result.stderr.startswith("fetchledger: error:")
    assert "Traceback" not in result.stderr


def test_render_stdin_and_missing_draft(run_cli, seeded: Path) -> None:
    result = run_cli("render", "-", input="Water.[1]\n")
    assert result.exit_code == 0 and result.stdout.startswith("[1] Boiling point")
    assert run_cli("render", "-", "--in-place", input="x").exit_code == 2
    missing = run_cli("render", "no-such-draft.md")
    assert missing.exit_code == 2 and "no such file" in missing.stderr


def test_render_json(run_cli, seeded: Path, draft: Path) -> None:
    result = run_cli("--json", "render", str(draft), "--renumber")
    data = json.loads(result.stdout)
    assert data["numbers"] == {"1": 1, "2": 2}
    assert [s["id"] for s in data["sources"]] == [1, 2]
    assert data["written"] is None and data["block"].startswith("[1] ")


def test_check_exit_codes(run_cli, seeded: Path, draft: Path) -> None:
    before = _snapshot(seeded)
    warned = run_cli("check", str(draft))  # no Sources block yet: a warning
    assert warned.exit_code == 0
    assert "warning: the draft cites sources but has no Sources block [sources-missing]" \
        in warned.stdout
    assert run_cli("check", str(draft), "--strict").exit_code == 1
    assert run_cli("render", str(draft), "-i").exit_code == 0
    clean = run_cli("check", str(draft), "--strict")
    assert clean.exit_code == 0 and clean.stdout == ""
    assert "ok — 2 cited sources checked" in clean.stderr
    draft.write_text(draft.read_text(encoding="utf-8").replace("[2]", "[42]"), "utf-8")
    unknown = run_cli("check", str(draft))
    assert unknown.exit_code == 1  # a finding, not bad input
    assert f"{draft}:3:" in unknown.stdout and "[unknown-id]" in unknown.stdout
    assert _snapshot(seeded) == before


def test_check_json_shape(run_cli, seeded: Path, draft: Path) -> None:
    draft.write_text('Water "boils at 99 °C" [1]. See https://example.org.\n', "utf-8")
    result = run_cli("check", str(draft), "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["ok"] is False
    assert [p["rule"] for p in data["problems"]] == [
        "quote-not-verbatim", "marker-placement", "url-in-prose", "sources-missing"]
    first = data["problems"][0]
    assert (first["line"], first["column"], first["severity"], first["ids"]) == (
        1, 7, "error", [1])
    assert first["hint"].startswith('nearest passage: [1] "')


def test_check_allow_links(run_cli, seeded: Path, draft: Path) -> None:
    draft.write_text("Water boils at 100 °C per [the page](https://example.org/boiling).[1]\n",
                     "utf-8")
    assert run_cli("check", str(draft)).exit_code == 1
    result = run_cli("check", str(draft), "--allow-links")
    assert result.exit_code == 0, result.stdout


def test_check_bad_input_exit_2(run_cli, seeded: Path, tmp_path: Path) -> None:
    assert run_cli("check", str(tmp_path / "missing.md")).exit_code == 2
    assert run_cli("check", str(tmp_path)).exit_code == 2
    (tmp_path / "bin.md").write_bytes(b"\xff\xfe\x00bad")
    binary = run_cli("check", str(tmp_path / "bin.md"))
    assert binary.exit_code == 2 and "not UTF-8" in binary.stderr
    assert run_cli("check", "x.md", "--no-such-option").exit_code == 2
    stdin = run_cli("check", "-", input="Water boils at 100 °C.[1]\n")
    assert stdin.exit_code == 0 and "<stdin>:1:" in stdin.stdout


def test_export_cli(run_cli, seeded: Path, tmp_path: Path) -> None:
    before = _snapshot(seeded)
    for fmt, name in (("pack", "pack"), ("csl-json", "s.json"), ("bibtex", "s.bib"),
                      ("warc", "s.warc.gz")):
        result = run_cli("export", "--format", fmt, "-o", str(tmp_path / name))
        assert result.exit_code == 0, result.stderr
        assert "exported 6 sources (6 versions" in result.stderr
    data = json.loads(run_cli("--json", "export", "--format", "csl-json", "-o",
                              str(tmp_path / "t.json")).stdout)
    assert data == {"format": "csl-json", "path": str(tmp_path / "t.json"), "sources": 6,
                    "versions": 6, "quotes": data["quotes"]}
    assert _snapshot(seeded) == before
    again = run_cli("export", "--format", "pack", "-o", str(tmp_path / "pack"))
    assert again.exit_code == 2 and "not an empty folder" in again.stderr
    nowhere = run_cli("export", "--format", "bibtex", "-o", str(tmp_path / "no" / "x.bib"))
    assert nowhere.exit_code == 2
    assert run_cli("export", "--format", "zip", "-o", "x").exit_code == 2


@pytest.mark.parametrize("verb", ["render", "check", "export"])
def test_each_verb_has_a_docs_page_naming_its_options(verb: str) -> None:
    from fetchledger.cli import cli

    page = (Path(__file__).resolve().parent.parent / "docs" / f"{verb}.md").read_text(
        encoding="utf-8")
    assert page.startswith(f"# `fetchledger {verb}`")
    global_options = {"--ledger", "--allow-private", "--allow-host", "--offline", "--help"}
    for param in cli.commands[verb].params:
        for flag in getattr(param, "opts", []):
            if flag.startswith("--") and flag not in global_options:
                assert f"`{flag}" in page, (verb, flag)
    if verb == "check":
        from fetchledger.cite import RULES

        for rule in RULES:
            assert f"| `{rule}` |" in page, rule
