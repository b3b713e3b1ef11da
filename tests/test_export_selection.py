"""The evidence pack against its shipped JSON Schemas (offsets in code points), raw bytes
with ``--with-raw``, and ``export --cited-by DRAFT`` (only the sources a draft cites)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from bibtexparser import parse_string

from fetchledger import BadInput, Document, Ledger
from fetchledger.cite.export import export, read_pack
from fetchledger.cite.pack import schema

from cite_sources import seed
from conftest import table_counts

pytestmark = pytest.mark.both_backends

# Before the quoted sentence: a character outside the BMP (two UTF-16 units, four UTF-8
# bytes) and a combining accent (one code point): offsets in code points differ from both.
WIDE = "Clef 𝄞 and e\u0301 first.\nThe bell rang twelve times at noon."


@pytest.fixture
def seeded(ledger_path: Path) -> Path:
    with Ledger(ledger_path) as ledger:
        seed(ledger)
        ledger.register(Document(kind="file", locator="/notes/wide.txt",
                                 display="/notes/wide.txt", text=WIDE, raw=WIDE.encode(),
                                 meta={"content_type": "text/plain"}), query="bell noon")
    return ledger_path


def _validator(name: str) -> jsonschema.Draft202012Validator:
    found = schema(name)
    jsonschema.Draft202012Validator.check_schema(found)
    return jsonschema.Draft202012Validator(found)


def _validate_pack(root: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    manifest = json.loads((root / "sources.json").read_text(encoding="utf-8"))
    _validator("sources").validate(manifest)
    quotes = [json.loads(line) for line in
              (root / "quotes.jsonl").read_text(encoding="utf-8").splitlines()]
    quote_schema = _validator("quote")
    for quote in quotes:
        quote_schema.validate(quote)
    return manifest, quotes


@pytest.mark.parametrize("with_raw", [False, True])
def test_pack_follows_its_schemas(seeded: Path, tmp_path: Path, with_raw: bool) -> None:
    with Ledger(seeded) as ledger:
        export(ledger, "pack", tmp_path / "pack", with_raw=with_raw)
    manifest, quotes = _validate_pack(tmp_path / "pack")
    assert manifest["with_raw"] is with_raw and len(manifest["sources"]) == 7
    assert quotes
    # the schemas are strict: a field they do not describe is refused
    manifest["sources"][0]["surprise"] = 1
    with pytest.raises(jsonschema.ValidationError):
        _validator("sources").validate(manifest)
    with pytest.raises(jsonschema.ValidationError):
        _validator("quote").validate({**quotes[0], "start": -1})


def test_offsets_count_code_points(seeded: Path, tmp_path: Path) -> None:
    with Ledger(seeded) as ledger:
        export(ledger, "pack", tmp_path / "pack")
    _, quotes = _validate_pack(tmp_path / "pack")
    bell = next(q for q in quotes if q["quote"].startswith("The bell"))
    text = (tmp_path / "pack" / "texts" / f"{bell['id']}-v1.txt").read_text(encoding="utf-8")
    start = WIDE.index("The bell")
    assert (bell["start"], bell["end"]) == (start, start + len(bell["quote"]))
    assert text[bell["start"] : bell["end"]] == bell["quote"]
    assert len(WIDE[:start].encode("utf-8")) != start  # not bytes
    assert len(WIDE[:start].encode("utf-16-le")) // 2 != start  # not UTF-16 units


def test_with_raw_lets_raw_sha256_be_checked(seeded: Path, tmp_path: Path) -> None:
    root = tmp_path / "pack"
    with Ledger(seeded) as ledger:
        export(ledger, "pack", root, with_raw=True)
        raws = {(s.id, 1): ledger.raw(s.id, 1) for s in ledger.sources()}
    pack = read_pack(root)
    assert pack.raw == raws
    for source in pack.sources:
        for version in source["versions"]:
            data = (root / version["raw_file"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == version["raw_sha256"]
    (root / "raw" / "1-v1.bin").write_bytes(b"<html>not what was fetched</html>")
    with pytest.raises(BadInput, match="raw"):
        read_pack(root)


def test_cited_by_exports_only_the_cited_sources(seeded: Path, tmp_path: Path,
                                                 run_cli: Any) -> None:
    draft = tmp_path / "draft.md"
    draft.write_text('Water boils at 100 °C at sea level.[1] A cooker helps.[2]\n\n'
                     '> quoted [5] is the source\'s own words\n\n`[6]` is code.\n',
                     encoding="utf-8")
    with Ledger(seeded) as ledger:
        for fmt, name in (("pack", "p"), ("csl-json", "c.json"), ("bibtex", "b.bib"),
                          ("warc", "w.warc")):
            summary = export(ledger, fmt, tmp_path / name,
                             cited_by=draft.read_text(encoding="utf-8"))
            assert summary.sources == 2, fmt
        cited_quotes = [q for q in ledger.recorded_quotes() if q.source_id in (1, 2)]
    manifest, quotes = _validate_pack(tmp_path / "p")
    assert [s["id"] for s in manifest["sources"]] == [1, 2]
    assert len(quotes) == len(cited_quotes) and {q["id"] for q in quotes} == {1, 2}
    assert [i["id"] for i in json.loads((tmp_path / "c.json").read_text())] == [
        "fetchledger-1", "fetchledger-2"]
    assert [e.key for e in parse_string((tmp_path / "b.bib").read_text()).entries] == [
        "fetchledger-1", "fetchledger-2"]
    result = run_cli("--json", "export", "--format", "csl-json", "-o",
                     str(tmp_path / "cli.json"), "--cited-by", str(draft))
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["sources"] == 2


@pytest.mark.parametrize(("args", "message"), [
    (["--cited-by", "{draft}"], "which this ledger does not have"),
    (["--cited-by", "{missing}"], "no such file"),
    (["--with-raw"], "--with-raw adds raw bytes to a pack"),
])
def test_bad_export_selections_exit_2_and_write_nothing(
        seeded: Path, tmp_path: Path, run_cli: Any, args: list[str], message: str) -> None:
    draft = tmp_path / "draft.md"
    draft.write_text("Boiling.[1] Nothing there.[99]\n", encoding="utf-8")
    before = table_counts(seeded)
    given = [a.format(draft=draft, missing=tmp_path / "nope.md") for a in args]
    result = run_cli("export", "--format", "bibtex", "-o", str(tmp_path / "out.bib"), *given)
    assert result.exit_code == 2
    assert message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out.bib").exists()
    assert table_counts(seeded) == before
