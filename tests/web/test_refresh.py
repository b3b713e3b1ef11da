"""``refresh``: conditional re-fetches (a 304 keeps the version), changed pages as new
versions of the same id, every recorded quote that drifted reported, failures recorded
as attempts, and ``check`` warning about quotations taken from an older version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fetchledger import Ledger
from fetchledger.cite import check
from fetchledger.cli import cli

from .webserver import LoopbackServer, Versioned

pytestmark = pytest.mark.both_backends

FIRST = (b"<html><head><title>Bridge works</title></head><body><article>"
         b"<h1>Bridge works</h1>"
         b"<p>The bridge opens in May. Traffic will be diverted for six weeks.</p>"
         b"<p>The council approved the budget of 2.4 million euros.</p>"
         b"</article></body></html>")
SECOND = FIRST.replace(b"opens in May", b"opens in June").replace(
    b"The council approved the budget of 2.4 million euros.", b"The council met on Monday.")


@pytest.fixture
def bridge(web: LoopbackServer) -> str:
    web.versioned["bridge"] = Versioned(FIRST, last_modified="Tue, 01 Dec 2026 08:00:00 GMT")
    return web.url("/versioned/bridge")


def _sent(web: LoopbackServer, path: str) -> list[dict[str, str]]:
    return [{k.lower(): v for k, v in h.headers.items()} for h in web.hits if h.path == path]


def test_an_unchanged_page_costs_a_304_and_keeps_its_version(
        web: LoopbackServer, bridge: str, ledger_path: Path) -> None:
    with Ledger(ledger_path, allow_private=True) as ledger:
        first = ledger.fetch(bridge)
        [outcome] = ledger.refresh()
        assert not outcome.changed and outcome.source.version == 1 and not outcome.drifted
        assert outcome.checked == len(first.snippets)
        assert "304" in outcome.note
        headers = _sent(web, "/versioned/bridge")[-1]
        assert headers["if-none-match"] == web.versioned["bridge"].tag
        assert headers["if-modified-since"] == "Tue, 01 Dec 2026 08:00:00 GMT"
        source = ledger.source(1)
        assert source.versions == 1 and source.last_retrieved >= first.source.last_retrieved
        last = ledger.attempts()[-1]
        assert (last.status, last.message) == ("ok", "not modified (HTTP 304): version 1 kept")


def test_last_modified_alone_is_a_validator(web: LoopbackServer, ledger_path: Path) -> None:
    web.versioned["dated"] = Versioned(FIRST, etag=False,
                                       last_modified="Mon, 30 Nov 2026 12:00:00 GMT")
    with Ledger(ledger_path, allow_private=True) as ledger:
        ledger.fetch(web.url("/versioned/dated"))
        [outcome] = ledger.refresh([1])
    assert "304" in outcome.note
    sent = _sent(web, "/versioned/dated")[-1]
    assert "if-none-match" not in sent
    assert sent["if-modified-since"] == "Mon, 30 Nov 2026 12:00:00 GMT"


def test_a_changed_page_is_a_new_version_and_its_lost_quotes_drift(
        web: LoopbackServer, bridge: str, ledger_path: Path) -> None:
    with Ledger(ledger_path, allow_private=True) as ledger:
        ledger.fetch(bridge, k=1)
        opens = ledger.quote(1, "The bridge opens in May.").snippets[0]
        budget = ledger.quote(1, "The council approved the budget of 2.4 million euros.")
        kept = ledger.quote(1, "Traffic will be diverted for six weeks.").snippets[0]
        web.versioned["bridge"] = Versioned(SECOND)
        [outcome] = ledger.refresh([1])
        assert outcome.changed and outcome.source.id == 1 and outcome.source.version == 2
        assert [s.id for s in ledger.sources()] == [1]
        drifted = {(q.text, q.version, q.start, q.end) for q in outcome.drifted}
        assert (opens.text, 1, opens.start, opens.end) in drifted
        assert (budget.snippets[0].text, 1, budget.snippets[0].start,
                budget.snippets[0].end) in drifted
        assert kept.text not in {q.text for q in outcome.drifted}
        assert ledger.text(1, version=1) != ledger.text(1)

        again = ledger.refresh([1])[0]  # 304 now: the drifted quotes stay drifted
        assert not again.changed and {q.text for q in again.drifted} == {
            q.text for q in outcome.drifted}


def test_check_warns_about_a_quotation_of_an_older_version(
        web: LoopbackServer, bridge: str, ledger_path: Path) -> None:
    with Ledger(ledger_path, allow_private=True) as ledger:
        ledger.fetch(bridge)
        draft = ('The works start soon: "The bridge opens in May."[1] Cars detour.[1]\n\n'
                 'Detours last: "Traffic will be diverted for six weeks."[1]\n')
        assert "quote-drifted" not in {p.rule for p in check(ledger, draft).problems}
        web.versioned["bridge"] = Versioned(SECOND)
        ledger.refresh([1])
        report = check(ledger, draft)
        [drift] = [p for p in report.problems if p.rule == "quote-drifted"]
        assert drift.severity == "warning" and drift.line == 1 and drift.ids == (1,)
        assert "version 1 of [1]" in drift.message and "latest version 2" in drift.message
        assert report.ok  # a warning: the quotation is real, in the version it came from


def test_no_validators_means_a_full_fetch_and_same_content_no_version(
        web: LoopbackServer, ledger_path: Path) -> None:
    web.versioned["plain"] = Versioned(FIRST, etag=False)
    with Ledger(ledger_path, allow_private=True) as ledger:
        ledger.fetch(web.url("/versioned/plain"))
        [outcome] = ledger.refresh([1])
    assert not outcome.changed and outcome.note == "unchanged: version 1"
    sent = _sent(web, "/versioned/plain")[-1]
    assert "if-none-match" not in sent and "if-modified-since" not in sent


def test_a_failed_fetch_is_an_attempt_and_the_source_keeps_its_versions(
        web: LoopbackServer, bridge: str, ledger_path: Path) -> None:
    with Ledger(ledger_path, allow_private=True) as ledger:
        ledger.fetch(bridge)
    del web.versioned["bridge"]
    result = CliRunner().invoke(cli, ["--allow-private", "--json", "refresh", "1"])
    assert result.exit_code == 3
    data = json.loads(result.stdout)
    assert data["error"]["status"] == "http_error" and data["changed"] is False
    assert result.stderr.startswith("fetchledger: error: ")
    with Ledger(ledger_path) as ledger:
        assert ledger.source(1).versions == 1
        assert ledger.attempts(failed=True)[-1].status == "http_error"


def test_what_refresh_does_not_repeat_is_skipped(web: LoopbackServer, bridge: str,
                                                 ledger_path: Path) -> None:
    with Ledger(ledger_path, allow_private=True) as ledger:
        ledger.run(["echo", "tide at 06:42"])
        ledger.http_request("POST", web.url("/echo"), body="q=tide")
        ledger.fetch(web.url("/pages/article?api_key=s3cret"))
        ledger.fetch(bridge)
        hits = len(web.hits)
        outcomes = ledger.refresh()
    assert [o.skipped for o in outcomes] == ["not_refreshable"] * 3 + [None]
    assert [h.path for h in web.hits[hits:]] == ["/versioned/bridge"]
    assert "command" in outcomes[0].note and "secrets" in outcomes[2].note


def test_files_are_read_again(tmp_path: Path, ledger: Ledger) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("The tide turns at 06:42.\n\nThe ferry leaves at noon.\n")
    ledger.read(path)
    path.write_text("The tide turns at 06:50.\n\nThe ferry leaves at noon.\n")
    [outcome] = ledger.refresh([1])
    assert outcome.changed and [q.text for q in outcome.drifted] == ["The tide turns at 06:42."]
    path.unlink()
    [gone] = ledger.refresh([1])
    assert gone.error is not None and gone.source.versions == 2


def test_cli_text_and_exit_codes(web: LoopbackServer, bridge: str, ledger_path: Path) -> None:
    runner = CliRunner()
    with Ledger(ledger_path, allow_private=True) as ledger:
        ledger.fetch(bridge, k=1)
    unchanged = runner.invoke(cli, ["--allow-private", "refresh", "--all"])
    assert unchanged.exit_code == 0
    assert unchanged.stdout == ("[1] Bridge works — 127.0.0.1: unchanged (HTTP 304 Not "
                                "Modified): version 1\n")
    web.versioned["bridge"] = Versioned(SECOND)
    changed = runner.invoke(cli, ["--allow-private", "refresh", "1"])
    assert changed.exit_code == 1
    header, line = changed.stdout.splitlines()
    assert header == ("[1] Bridge works — 127.0.0.1: changed: version 2 (was 1); 1 of 1 "
                      "recorded quote drifted")
    assert line.startswith('[1] drifted: "The bridge opens in May.') and \
        line.endswith("(version 1, characters 13-37)")
    as_json = runner.invoke(cli, ["--allow-private", "refresh", "--json", "1"])
    data = json.loads(as_json.stdout)
    assert set(data) == {"source", "changed", "version", "drifted"}
    assert data["drifted"] == [{"quote": data["drifted"][0]["quote"], "start": 13, "end": 37,
                                "version": 1}]


@pytest.mark.parametrize("args", [["9"], [], ["1", "--all"]])
def test_cli_bad_input_records_nothing(web: LoopbackServer, bridge: str, ledger_path: Path,
                                       args: list[str]) -> None:
    with Ledger(ledger_path, allow_private=True) as ledger:
        ledger.fetch(bridge)
        attempts = len(ledger.attempts())
    hits = len(web.hits)
    result = CliRunner().invoke(cli, ["--allow-private", "refresh", *args])
    assert result.exit_code == 2 and result.stderr.startswith("fetchledger: error: ")
    assert len(web.hits) == hits
    with Ledger(ledger_path) as ledger:
        assert len(ledger.attempts()) == attempts
