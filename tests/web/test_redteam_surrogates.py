"""Issue 13, red-team pass of session 6: text that is not Unicode (a lone surrogate).

JSON may spell half a surrogate pair (``"\\ud83d"`` without its low half); Python's
parser keeps it, and no UTF-8 store or terminal can hold it. A JSON page, a JSON
key, a search result's title and query (``ingest``) made a traceback from the store
(``surrogates not allowed``); a curl argument that is not UTF-8 made one from the
HTTP client. Now the text is stored with U+FFFD in its place (one character for one),
and a curl argument that is not UTF-8 is bad input (exit 2, one line, nothing
recorded).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from fetchledger import Ledger
from fetchledger.errors import InvalidArgument

from .webserver import LoopbackServer, Reply

JSON_BODIES = {
    "value": b'{"note": "The harbour \\ud83d sees two tides a day."}',
    "low half": b'{"note": "The harbour sees \\udc00 two tides a day."}',
    "key": b'{"\\ud800": "The harbour sees two tides a day."}',
    "pair kept": b'{"note": "The harbour \\ud83d\\ude00 sees two tides."}',
}


@pytest.mark.parametrize("name", list(JSON_BODIES))
def test_a_json_page_with_a_lone_surrogate_is_stored(name: str, web: LoopbackServer,
                                                     run_cli: Any) -> None:
    web.replies["mutable"] = Reply(200, {"Content-Type": "application/json"},
                                   JSON_BODIES[name])
    result = run_cli("--json", "fetch", "--allow-private", web.url("/mutable"))
    assert result.exit_code == 0, result.stderr
    source_id = json.loads(result.stdout)[0]["source"]["id"]
    text = run_cli("show", str(source_id), "--text").stdout
    assert "harbour" in text and not any("\ud800" <= c <= "\udfff" for c in text)
    if name == "pair kept":
        assert "\U0001f600" in text  # a whole pair is one character, kept
    else:
        assert "\ufffd" in text


def test_search_results_with_lone_surrogates_are_ingested(web: LoopbackServer, run_cli: Any,
                                                          tmp_path: Path) -> None:
    web.replies["mutable"] = Reply(200, {"Content-Type": "text/plain"},
                                   b"The harbour sees two tides a day.")
    results = tmp_path / "results.json"
    url = json.dumps(web.url("/mutable"))
    results.write_text('{"query": "tides \\ud800", "results": [{"url": ' + url
                       + ', "title": "Tides \\udc00 table", "snippet": "two \\ud83d tides"}]}',
                       encoding="utf-8")
    result = run_cli("--json", "ingest", "--allow-private", str(results))
    assert result.exit_code == 0, result.stderr
    shown = run_cli("--json", "show", "1")
    assert shown.exit_code == 0
    search = json.loads(shown.stdout)["search"][0]
    assert search["query"] == "tides \ufffd" and search["title"] == "Tides \ufffd table"


# Python holds bytes of argv that are not UTF-8 as lone surrogates (surrogateescape).
NOT_UTF8 = os.fsdecode(b"\xff\xfe")


@pytest.mark.parametrize("args", [
    ["-d", f"a={NOT_UTF8}"], ["--data-raw", NOT_UTF8], ["--json", f'{{"a": "{NOT_UTF8}"}}'],
    ["-H", f"X-Note: {NOT_UTF8}"], ["-H", f"Authorization: Bearer {NOT_UTF8}secret"],
    ["-A", NOT_UTF8], ["-e", NOT_UTF8], ["-b", f"sid={NOT_UTF8}"],
])
def test_a_curl_argument_that_is_not_utf8_is_bad_input(args: list[str], web: LoopbackServer,
                                                       run_cli: Any, ledger_path: Any) -> None:
    for json_flag in ([], ["--json"]):
        result = run_cli(*json_flag, "curl", "--allow-private", *args, web.url("/mutable"))
        assert result.exit_code == 2, (args, result.stderr)
        if json_flag:
            assert json.loads(result.stdout)["error"]["status"] == "invalid_argument"
        else:
            error, *hint = result.stderr.splitlines()  # one error line, then its hint
            assert error.startswith("fetchledger: error: curl argument ") and len(hint) <= 1
            assert "not valid UTF-8" in error and "secret" not in result.stderr
    with Ledger(ledger_path) as ledger:
        assert ledger.attempts() == [] and ledger.sources() == []


def test_http_request_with_a_body_or_header_that_is_not_unicode(web: LoopbackServer,
                                                                ledger_path: Any) -> None:
    with Ledger(ledger_path, allow_private=True) as ledger:
        with pytest.raises(InvalidArgument, match="not valid UTF-8"):
            ledger.http_request("POST", web.url("/mutable"), body="a \ud800 b")
        with pytest.raises(InvalidArgument, match="not valid UTF-8"):
            ledger.http_request("GET", web.url("/mutable"), headers={"X-Note": "\udcff"})
        assert ledger.attempts() == []
