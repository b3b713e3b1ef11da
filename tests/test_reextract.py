"""``reextract``: today's extraction on the stored raw bytes, no network; ids never change,
a changed text is a new version, recorded quotes the new text lost are reported."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fetchledger import Document, Ledger, Limits
from fetchledger.adapters.extract import extractor_version
from fetchledger.adapters.pdf import PDF_REVISION
from fetchledger.cli import cli
from fetchledger.text.normalize import text_extractor_version
from pdfgen import make_pdf

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


def test_workers_give_what_one_process_gives(tmp_path: Path, ledger: Ledger,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Many sources are extracted in worker processes; the outcomes come in source order
    and the versions written are those extracting in this process writes."""
    # (``fetchledger.replay.reextract`` is also the function the package exports)
    module = importlib.import_module("fetchledger.replay.reextract")
    started: list[int] = []

    class CountedPool(module.WorkerPool):
        async def start(self) -> module.WorkerPool:
            started.append(self.size)
            return await super().start()

    monkeypatch.setattr(module, "WorkerPool", CountedPool)
    count = 2 * module.PER_WORKER
    for i in range(count):
        legacy(ledger, tmp_path / f"p{i}.html", raw=PAGE.replace(b"Everest", b"Everest %d" % i),
               text=OLD_TEXT.replace("Everest", f"Everest {i}"), k=0)
        ledger.quote(i + 1, "Subscribe to our newsletter.")
    # every third one is extracted in this process first: today's text is already stored
    alone = ledger.reextract(range(1, count + 1, 3), workers=1)
    assert started == [] and all(o.changed for o in alone)

    seen: list[int] = []
    outcomes = ledger.reextract(workers=2, on_outcome=lambda o: seen.append(o.source.id))

    assert started == [2]
    assert seen == [o.source.id for o in outcomes] == list(range(1, count + 1))
    assert [o.changed for o in outcomes] == [i % 3 != 0 for i in range(count)]
    assert all(o.source.versions == 2 and o.error is None for o in outcomes)
    assert all([q.text for q in o.drifted] == ["Subscribe to our newsletter."]
               for o in outcomes)
    made_here = ledger.text(1)
    assert [ledger.text(i + 1) for i in range(count)] == [
        made_here.replace("Everest 0", f"Everest {i}") for i in range(count)]


def test_every_kind_records_the_revision_of_its_text(tmp_path: Path, ledger: Ledger) -> None:
    """The version recorded names our own revision of the text-making code for every
    kind, so a ledger says which extraction made each text (the NFC and invisible
    character normalization changed the text of every kind)."""
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(make_pdf([["Water boils at 100 degrees at sea level."]]))
    ran = ledger.run(["printf", "one\\n"])
    piped = ledger.read_piped(b"two\n", label="piped")
    read = ledger.read(pdf)
    versions = {r.source.kind + "/" + ledger.details(r.source.id).versions[0]["extractor"]:
                ledger.details(r.source.id).versions[0]["extractor_version"]
                for r in (ran, piped, read)}
    assert versions["command/command"] == versions["command/stdin"] == text_extractor_version()
    [(name, pdf_version)] = [(k, v) for k, v in versions.items() if k.startswith("file/")]
    assert pdf_version.endswith(f"; fetchledger pdf.{PDF_REVISION}"), (name, pdf_version)


OLD_OUTPUT = "cafe\u0301 au\u200b lait"  # what output stored before NFC: decomposed, invisible


@pytest.mark.parametrize("kind", ["command", "stdin", "pdf"])
def test_a_text_stored_before_normalization_gets_it(tmp_path: Path, ledger: Ledger,
                                                     kind: str) -> None:
    """A version stored before the text was NFC without invisible characters (with the
    extractor version of then) becomes a new version under today's revision."""
    if kind == "pdf":
        raw = make_pdf([["The caf\u00e9 au lait is served at noon."]])
        document = Document(kind="file", locator=str(tmp_path / "menu.pdf"),
                            display=str(tmp_path / "menu.pdf"),
                            text="The cafe\u0301 au\u200b lait is served at noon.", raw=raw,
                            extractor="pdfium", extractor_version="pypdfium2 4.0 (PDFium 1)",
                            meta={"size": len(raw), "content_type": "application/pdf"})
    else:
        raw = "caf\u00e9 au lait\n".encode()
        meta: dict[str, object] = {"argv": ["printf", "x"], "cwd": str(tmp_path),
                                   "exit_code": 0}
        if kind == "stdin":
            meta = {"label": "menu", "cwd": str(tmp_path), "piped": True}
        document = Document(kind="command", locator=f"{kind}:menu", display=f"{kind}: menu",
                            text=OLD_OUTPUT, raw=raw, extractor=kind,
                            extractor_version="0.1.0", meta=meta)
    source_id = ledger.register(document, k=0).source.id
    [outcome] = ledger.reextract([source_id])
    assert outcome.changed and outcome.source.id == source_id and outcome.source.versions == 2
    latest = ledger.details(source_id).versions[-1]
    assert "\u200b" not in ledger.text(source_id) and "caf\u00e9 au lait" in ledger.text(source_id)
    if kind == "pdf":
        assert latest["extractor_version"].endswith(f"fetchledger pdf.{PDF_REVISION}")
    else:
        assert latest["extractor"] == kind
        assert latest["extractor_version"] == text_extractor_version()


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
