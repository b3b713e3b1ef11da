"""A page Chromium rendered replays as rendered: its stored raw bytes are the DOM, so
``reextract`` and ``--offline`` make its text again without a browser, and ``refresh``
renders it again (the shell's own text would otherwise stand for the page)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fetchledger import Ledger
from fetchledger.adapters.browser import unavailable_reason

from .webserver import LoopbackServer

REQUIRED = os.environ.get("FETCHLEDGER_TEST_BROWSER") == "1"
pytestmark = pytest.mark.skipif(unavailable_reason() is not None and not REQUIRED,
                                reason=f"no browser: {unavailable_reason()}")


def test_a_rendered_page_replays_as_rendered(web: LoopbackServer, ledger_path: Path) -> None:
    with Ledger(ledger_path, allow_hosts=["127.0.0.1"]) as online:
        rendered = online.fetch(web.url("/app/shell"), query="harbour froze")
        text = online.text(1)
        assert online.details(1).versions[0]["extractor"] == "browser"
    hits = len(web.hits)

    with Ledger(ledger_path, offline=True) as offline:
        [outcome] = offline.reextract()
        assert not outcome.changed and outcome.error is None
        again = offline.fetch(web.url("/app/shell"), query="harbour froze")
        assert again.text_lines() == rendered.text_lines()
        assert offline.source(1).versions == 1
    assert len(web.hits) == hits  # neither the page nor its script was asked for

    with Ledger(ledger_path, allow_hosts=["127.0.0.1"]) as online:
        [refreshed] = online.refresh([1])
        assert refreshed.error is None and refreshed.drifted == ()
        assert online.text(1) == text
        assert online.details(1).versions[-1]["extractor"] == "browser"
    assert any(h.path == "/app/app.js" for h in web.hits[hits:])  # rendered again
