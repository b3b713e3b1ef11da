"""Stored raw bytes replay exactly: for every kind of page the loopback server serves, the
text ``reextract`` makes from the stored bytes is the text the fetch stored, and an
``--offline`` fetch hands out the same snippets as the online one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fetchledger import Ledger, OfflineMiss
from fetchledger.cli import cli

from .webserver import LoopbackServer

pytestmark = pytest.mark.both_backends

PAGES = [
    "/pages/article", "/pages/news", "/pages/accents-cp1252", "/pages/accents-wrong-header",
    "/pages/accents-utf8-as-latin1", "/pages/accents-no-charset", "/pages/japanese",
    "/pages/notes", "/pages/readme", "/pages/data", "/pages/untyped", "/pdf", "/gzip", "/br",
    "/chunked", "/redirect/2", "/needs-cookie",
]


@pytest.fixture
def fetched(web: LoopbackServer, ledger_path: Path) -> dict[str, list[str]]:
    """Every page fetched online (query "water"); its snippet lines by path."""
    with Ledger(ledger_path, allow_private=True) as online:
        return {path: online.fetch(web.url(path), query="water").text_lines()
                for path in PAGES}


def test_reextract_of_fresh_fetches_changes_nothing(fetched: dict[str, list[str]],
                                                    ledger_path: Path) -> None:
    with Ledger(ledger_path) as ledger:
        outcomes = ledger.reextract()
        assert len(outcomes) == len(PAGES) - 1  # /redirect/2 ends at /pages/article
        assert [(o.source.locator, o.changed, o.error, o.skipped) for o in outcomes
                if o.changed or o.error or o.skipped] == []


def test_offline_fetch_hands_out_the_online_snippets(fetched: dict[str, list[str]],
                                                     web: LoopbackServer,
                                                     ledger_path: Path) -> None:
    hits = len(web.hits)
    with Ledger(ledger_path, offline=True) as offline:
        again = {path: offline.fetch(web.url(path), query="water").text_lines()
                 for path in PAGES}
        assert again == fetched
        assert len(offline.sources()) == len(PAGES) - 1  # the same sources, no new ones
        assert all(s.versions == 1 for s in offline.sources())
    assert len(web.hits) == hits  # not one request reached the server


def test_offline_curl_and_http_request_replay_their_sources(web: LoopbackServer,
                                                            ledger_path: Path) -> None:
    with Ledger(ledger_path, allow_private=True) as online:
        posted = online.http_request("POST", web.url("/echo"), body='{"q": "tide"}',
                                     headers={"Content-Type": "application/json"})
        head = online.curl(["-I", web.url("/pages/article")])
    hits = len(web.hits)
    with Ledger(ledger_path, offline=True) as offline:
        again = offline.http_request("POST", web.url("/echo"), body='{"q": "tide"}',
                                     headers={"Content-Type": "application/json"})
        assert again.text_lines() == posted.text_lines()
        assert offline.curl(["-I", web.url("/pages/article")]).text_lines() == \
            head.text_lines()
        with pytest.raises(OfflineMiss):  # another body is another source: not in the ledger
            offline.http_request("POST", web.url("/echo"), body='{"q": "wind"}')
    assert len(web.hits) == hits


def test_offline_miss_is_an_attempt_and_exit_3(web: LoopbackServer, ledger_path: Path) -> None:
    hits = len(web.hits)
    result = CliRunner().invoke(cli, ["--offline", "--json", "fetch", web.url("/pages/news")])
    assert result.exit_code == 3
    [failure] = json.loads(result.stdout)
    assert failure["error"]["status"] == "offline_miss"
    assert len(web.hits) == hits
    with Ledger(ledger_path) as ledger:
        assert ledger.sources() == []
        [attempt] = ledger.attempts(failed=True)
        assert attempt.status == "offline_miss"


def test_offline_capped_bytes_are_a_miss(web: LoopbackServer, ledger_path: Path) -> None:
    from fetchledger import Limits

    with Ledger(ledger_path, allow_private=True, limits=Limits(max_raw_stored=100)) as online:
        online.fetch(web.url("/pages/article"))
    with Ledger(ledger_path, offline=True, limits=Limits(max_raw_stored=100)) as offline, \
            pytest.raises(OfflineMiss, match="kept 100 of its"):
        offline.fetch(web.url("/pages/article"))
