"""``reextract``: today's extraction on the stored raw bytes, no network; ids never change,
a changed text is a new version, recorded quotes the new text lost are reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fetchledger import Document, Ledger, Limits
from fetchledger.adapters.extract import extractor_version
from fetchledger.cli import cli

pytestmark = pytest.mark.both_backends

PAGE = b"""<html><head><title>Boiling point</title></head><body><article>
<h1>Boiling point</h1>
<p>At sea level, water boils at 100 \xc2\xb0C. The boiling point decreases with altitude.</p>
<p>On Everest water boils at about 70 \xc2\xb0C.</p>
</article></body></html>"""
# What an older extractor stored for PAGE: a sentence it took from nowhere (a bug), and
# one run together with its neighbour.
OLD_TEXT = ("Boiling point\n"
            "At sea level, water boils at 100 °C.The boiling point decreases with altitude.\n"
            "Subscribe to our newsletter.\n"
            "On Everest water boils at about 70 °C.")


def legacy(ledger: Ledger, path: Path, text: str = OLD_TEXT, raw: bytes = PAGE, k: int = 3,
           **extra: object) -> int:
    """A source registered by an older extraction of ``raw`` (its text: ``text``), with
    ``k`` snippets handed out."""
    path.write_bytes(raw)
    locator = str(path.resolve())
    document = Document(kind="file", locator=locator, display=locator, text=text, raw=raw,
                        title="Boiling point", extractor="trafilatura",
                        extractor_version="1.0+fetchledger.0",
                        meta={"size": len(raw), "content_type": "text/html"},
                        **extra)  # type: ignore[arg-type]
    return ledger.register(document, k=k).source.id


def test_a_changed_text_is_a_new_version_of_the_same_id(tmp_path: Path, ledger: Ledger) -> None:
    source_id = legacy(ledger, tmp_path / "boiling.html")
    kept = ledger.quote(source_id, "On Everest water boils at about 70 °C.")
    lost = ledger.quote(source_id, "Subscribe to our newsletter.")
    glued = ledger.quote(source_id, "100 °C.The boiling")
    attempts = len(ledger.attempts())
    before = ledger.source(source_id)

    [outcome] = ledger.reextract([source_id])

    assert outcome.changed and outcome.source.id == source_id == 1
    assert outcome.source.version == 2 and outcome.error is None
    new_text = ledger.text(source_id)
    recorded = ledger.recorded_quotes(source_id)
    drifted = {q.text for q in outcome.drifted}
    assert drifted == {q.text for q in recorded if q.text not in new_text}
    assert {lost.snippets[0].text, glued.snippets[0].text} <= drifted
    assert kept.snippets[0].text not in drifted
    assert outcome.checked == len(recorded) > 3  # the snippets handed out at registration too
    assert "Subscribe" not in new_text
    assert ledger.text(source_id, version=1) == OLD_TEXT  # the old version stays as it was
    versions = ledger.details(source_id).versions
    assert versions[1]["extractor_version"] == extractor_version()
    assert versions[1]["meta"]["reextracted_from"] == 1
    # the bytes were retrieved when version 1 was: nothing was retrieved now
    assert versions[1]["retrieved_at"] == versions[0]["retrieved_at"]
    assert versions[1]["raw_sha256"] == versions[0]["raw_sha256"]
    after = ledger.source(source_id)
    assert after.last_retrieved == before.last_retrieved
    assert len(ledger.attempts()) == attempts
    assert [s.id for s in ledger.sources()] == [1]


def test_an_unchanged_text_makes_no_version(tmp_path: Path, ledger: Ledger) -> None:
    path = tmp_path / "boiling.html"
    path.write_bytes(PAGE)
    ledger.read(path)
    [outcome] = ledger.reextract()
    assert not outcome.changed and outcome.source.version == 1 and not outcome.drifted
    legacy(ledger, tmp_path / "old.html")
    first, second = ledger.reextract()
    assert (first.changed, second.changed) == (False, True)
    again = ledger.reextract()
    assert [o.changed for o in again] == [False, False]
    assert [o.source.versions for o in again] == [1, 2]


def test_command_output_read_again_records_todays_reading_of_output(ledger: Ledger) -> None:
    # Output stored before invisible characters were removed: the same bytes give
    # another text today, and the new version says which reading made it.
    from fetchledger.adapters.command import output_extractor_version

    raw = "total\u200b 42 files\n".encode()
    source_id = ledger.register(Document(
        kind="command", locator='["ls"] in /work', display="ls (in /work)",
        text="total\u200b 42 files", raw=raw, extractor="command",
        extractor_version="0.1.0", meta={"command_line": "ls", "exit_code": 0,
                                         "cwd": "/work"}), k=0).source.id
    [outcome] = ledger.reextract([source_id])
    assert outcome.changed and ledger.text(source_id) == "total 42 files"
    version = ledger.details(source_id).versions[-1]
    assert version["extractor_version"] == output_extractor_version() != "0.1.0"
    assert "+output." in version["extractor_version"]


def test_capped_raw_bytes_are_skipped_and_the_version_kept(tmp_path: Path,
                                                           ledger_path: Path) -> None:
    with Ledger(ledger_path, limits=Limits(max_raw_stored=40)) as capped:
        source_id = legacy(capped, tmp_path / "boiling.html")
        [outcome] = capped.reextract([source_id])
        assert outcome.skipped == "raw_capped" and outcome.error is None
        assert not outcome.changed and outcome.source.versions == 1
        assert "kept 40 of its" in outcome.note
        assert outcome.to_json()["skipped"]["reason"] == "raw_capped"


def test_bytes_that_no_longer_extract_keep_their_version(tmp_path: Path, ledger: Ledger) -> None:
    source_id = legacy(ledger, tmp_path / "blank.html", text="Once there was text.",
                       raw=b"<html><body><div></div></body></html>")
    [outcome] = ledger.reextract([source_id])
    assert outcome.error is not None and outcome.error.status == "empty_content"
    assert not outcome.changed and outcome.source.versions == 1
    assert ledger.text(source_id) == "Once there was text."


def test_a_rendered_page_stays_rendered(tmp_path: Path, ledger: Ledger) -> None:
    """Chromium's DOM is the stored raw bytes of a rendered page: extracted again, the
    version still names the browser (and its engine) as its extractor."""
    path = tmp_path / "app"
    path.write_bytes(PAGE)
    document = Document(kind="web", locator="https://app.example/list",
                        display="https://app.example/list", text=OLD_TEXT, raw=PAGE,
                        extractor="browser",
                        extractor_version="chromium 120.0; trafilatura 1.0+fetchledger.0",
                        meta={"content_type": "text/html", "charset": "utf-8",
                              "final_url": "https://app.example/list", "http_status": 200,
                              "browser": {"requests": 3}})
    source_id = ledger.register(document).source.id
    [outcome] = ledger.reextract([source_id])
    assert outcome.changed
    latest = ledger.details(source_id).versions[-1]
    assert latest["extractor"] == "browser"
    assert latest["extractor_version"].startswith("chromium 120.0; trafilatura ")
    assert latest["meta"]["browser"] == {"requests": 3}


def test_commands_and_piped_text_are_extracted_again(tmp_path: Path, ledger: Ledger) -> None:
    ran = ledger.run(["printf", "one\\ntwo\\n"])
    piped = ledger.read_piped("caf\xe9 au lait\n".encode("cp1252"), label="legacy")
    outcomes = ledger.reextract([ran.source.id, piped.source.id])
    assert [(o.changed, o.error) for o in outcomes] == [(False, None), (False, None)]


def test_cli_json_lines_and_exit_codes(tmp_path: Path, ledger_path: Path) -> None:
    with Ledger(ledger_path) as ledger:
        source_id = legacy(ledger, tmp_path / "boiling.html", k=0)
        ledger.quote(source_id, "Subscribe to our newsletter.")
        ledger.quote(source_id, "On Everest water boils at about 70 °C.")
    runner = CliRunner()
    result = runner.invoke(cli, ["--json", "reextract", "--all"])
    assert result.exit_code == 1, result.output  # a recorded quote drifted
    [line] = result.stdout.splitlines()
    data = json.loads(line)
    assert set(data) == {"source", "changed", "version", "drifted"}
    assert data["changed"] is True and data["version"] == 2
    assert data["drifted"] == [{"quote": "Subscribe to our newsletter.",
                                "start": OLD_TEXT.index("Subscribe"),
                                "end": OLD_TEXT.index("Subscribe") + 28, "version": 1}]
    text = runner.invoke(cli, ["reextract", "1"])
    assert text.exit_code == 1  # the quote is still lost in the latest version
    assert text.stdout.splitlines() == [
        "[1] Boiling point — boiling.html: unchanged: version 2; 1 of 2 recorded quotes "
        "drifted",
        f'[1] drifted: "Subscribe to our newsletter." (version 1, characters '
        f'{data["drifted"][0]["start"]}-{data["drifted"][0]["end"]})']


@pytest.mark.parametrize("args", [[], ["1", "--all"], ["7"], ["0"]])
def test_cli_bad_input_changes_nothing(tmp_path: Path, ledger_path: Path,
                                       args: list[str]) -> None:
    with Ledger(ledger_path) as ledger:
        legacy(ledger, tmp_path / "boiling.html")
    result = CliRunner().invoke(cli, ["reextract", *args])
    assert result.exit_code == 2
    assert result.stderr.startswith("fetchledger: error: ")
    with Ledger(ledger_path) as ledger:
        assert ledger.source(1).versions == 1
