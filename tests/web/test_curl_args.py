"""curl's arguments, read as curl reads them."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest

from fetchledger.adapters.curl_args import parse_curl_args, split_own_options
from fetchledger.errors import BadInput, InvalidArgument


def headers(args: list[str]) -> dict[str, str | None]:
    return {name.lower(): value for name, value in parse_curl_args(args).headers}


def test_a_plain_get() -> None:
    command = parse_curl_args(["https://example.com/x"])
    assert (command.method, command.url, command.body, command.follow) == \
        ("GET", "https://example.com/x", None, False)


def test_url_anywhere_and_flags_combined() -> None:
    command = parse_curl_args(["-sSL", "https://example.com/", "-XPUT", "-d", "a=1"])
    assert command.follow and command.method == "PUT" and command.body == b"a=1"
    assert command.url == "https://example.com/"


def test_data_makes_a_form_post_and_joins_with_ampersands() -> None:
    command = parse_curl_args(["-d", "a=1", "--data", "b=2", "--data-raw", "@c", "u.example"])
    assert command.method == "POST"
    assert command.body == b"a=1&b=2&@c"
    assert command.url == "http://u.example"  # curl's default scheme
    assert headers(["-d", "a=1", "u.example"])["content-type"] == \
        "application/x-www-form-urlencoded"


def test_json_sets_body_and_headers() -> None:
    command = parse_curl_args(["--json", '{"a": 1}', "https://api.example/"])
    assert command.method == "POST" and json.loads(command.body or b"") == {"a": 1}
    found = headers(["--json", "{}", "https://api.example/"])
    assert found["content-type"] == "application/json"
    assert found["accept"] == "application/json"
    own = headers(["--json", "{}", "-H", "Content-Type: application/vnd.x+json", "h.example"])
    assert own["content-type"] == "application/vnd.x+json"


def test_get_moves_data_into_the_query() -> None:
    command = parse_curl_args(["-G", "-d", "q=bees", "-d", "n=2", "https://s.example/find?x=1"])
    assert command.method == "GET" and command.body is None
    assert command.url == "https://s.example/find?x=1&q=bees&n=2"


def test_data_urlencode_forms(tmp_path: Path) -> None:
    source = tmp_path / "q.txt"
    source.write_text("a b&c")
    command = parse_curl_args(["--data-urlencode", "q=a b&c", "--data-urlencode", "=x y",
                               "--data-urlencode", f"f@{source}", "https://s.example/"])
    assert command.body == b"q=a%20b%26c&x%20y&f=a%20b%26c"


def test_data_from_files_as_curl_reads_them(tmp_path: Path) -> None:
    source = tmp_path / "body.txt"
    source.write_bytes(b"line one\r\nline two\n")
    assert parse_curl_args(["-d", f"@{source}", "h.example"]).body == b"line oneline two"
    assert parse_curl_args(["--data-binary", f"@{source}", "h.example"]).body == \
        b"line one\r\nline two\n"
    assert parse_curl_args(["-d", "@-", "h.example"], read_stdin=lambda: b"from stdin\n"
                           ).body == b"from stdin"
    with pytest.raises(BadInput, match=r"no such file"):
        parse_curl_args(["-d", f"@{tmp_path / 'missing'}", "h.example"])


def test_headers_user_agent_referer_cookie_and_user() -> None:
    found = headers(["-H", "X-Trace: 7", "-H", "Accept:", "-H", "X-Empty;", "-A", "bot/1",
                     "-e", "https://ref.example/", "-b", "a=1; b=2", "-u", "alice:s3cret",
                     "https://h.example/"])
    assert found["x-trace"] == "7"
    assert found["accept"] is None  # removes the default
    assert found["x-empty"] == ""
    assert found["user-agent"] == "bot/1"
    assert found["referer"] == "https://ref.example/"
    assert found["cookie"] == "a=1; b=2"
    assert found["authorization"] == "Basic " + base64.b64encode(b"alice:s3cret").decode()
    assert "s3cret" in parse_curl_args(["-u", "alice:s3cret", "h.example"]).extra_secrets


def test_headers_from_a_file_and_from_stdin(tmp_path: Path) -> None:
    listed = tmp_path / "headers.txt"
    listed.write_bytes(b"Authorization: Bearer tok-1\r\nX-Team: blue\n\nAccept:\n")
    command = parse_curl_args(["-H", "@" + str(listed), "-H", "X-Last: 1", "h.example"])
    assert command.headers == (("Authorization", "Bearer tok-1"), ("X-Team", "blue"),
                               ("Accept", None), ("X-Last", "1"))
    piped = parse_curl_args(["-H", "@-", "h.example"], read_stdin=lambda: b"X-From: stdin\n")
    assert piped.headers == (("X-From", "stdin"),)
    with pytest.raises(BadInput, match="curl reads headers from @FILE") as missing:
        parse_curl_args(["-H", "@" + str(tmp_path / "nope.txt"), "h.example"])
    assert missing.value.exit_code == 2
    listed.write_text("no colon on this line\n")
    with pytest.raises(InvalidArgument, match="Name: value"):
        parse_curl_args(["-H", "@" + str(listed), "h.example"])


def test_connect_timeout_reaches_the_client() -> None:
    from fetchledger.config import Limits
    from fetchledger.net.client import _Exchange
    from fetchledger.net.policy import AddressPolicy

    command = parse_curl_args(["--connect-timeout", "2.5", "-m", "20", "https://h.example/"])
    assert command.connect_timeout == 2.5
    exchange = _Exchange(command.http_request(), Limits(), AddressPolicy.of(False, ()), "ua")
    assert exchange.timeouts["connect"] == 2.5 and exchange.timeouts["read"] == 20
    default = _Exchange(parse_curl_args(["h.example"]).http_request(), Limits(),
                        AddressPolicy.of(False, ()), "ua")
    assert default.timeouts["connect"] == Limits().connect_timeout
    with pytest.raises(InvalidArgument, match="--connect-timeout must be a number of seconds"):
        parse_curl_args(["--connect-timeout", "0", "h.example"])


@pytest.mark.parametrize(("args", "reason"), [
    (["-v", "h.example"], "registered, not traced; `fetchledger show N --json`"),
    (["-sSv", "h.example"], "registered, not traced"),
    (["--verbose", "h.example"], "registered, not traced"),
    (["-w", "%{http_code}", "h.example"], "put --json before the verb"),
    (["--write-out", "%{http_code}", "h.example"], "put --json before the verb"),
    (["--retry", "3", "h.example"], "does not retry by itself"),
])
def test_options_done_another_way_say_how(args: list[str], reason: str) -> None:
    with pytest.raises(InvalidArgument, match=re.escape(reason)) as caught:
        parse_curl_args(args)
    assert "unknown or unsupported" not in caught.value.message


def test_always_on_options_are_accepted_and_explained(run_cli: Any) -> None:
    command = parse_curl_args(["-fsS", "--compressed", "--no-progress-meter", "h.example"])
    assert command == parse_curl_args(["h.example"])
    shown = run_cli("curl", "--help").stdout
    for option, meaning in [("-f, --fail", "always a failed retrieval"),
                            ("-s, --silent", "no progress meter"),
                            ("-S, --show-error", "one line on stderr"),
                            ("--compressed", "always asked for and")]:
        line = next(line for line in shown.splitlines() if line.strip().startswith(option))
        assert meaning in line, line
    assert "-H @FILE" in shown and "--connect-timeout" in shown


def test_head_and_max_time() -> None:
    command = parse_curl_args(["-I", "--max-time", "2.5", "https://h.example/"])
    assert command.method == "HEAD" and command.max_time == 2.5
    assert parse_curl_args(["-m", "4", "h.example"]).max_time == 4


@pytest.mark.parametrize(("args", "message"), [
    ([], "no URL"),
    (["-s"], "no URL"),
    (["https://a.example/", "https://b.example/"], "one URL"),
    (["-k", "https://a.example/"], "TLS"),
    (["--insecure", "https://a.example/"], "TLS"),
    (["-o", "out.html", "https://a.example/"], "not to a file"),
    (["-x", "http://proxy:3128", "https://a.example/"], "proxy"),
    (["--resolve", "a.example:443:10.0.0.1", "https://a.example/"], "address policy"),
    (["-F", "f=@x", "https://a.example/"], "multipart"),
    (["--frobnicate", "https://a.example/"], "unsupported curl option --frobnicate"),
    (["-Z", "https://a.example/"], "unsupported curl option -Z"),
    (["-H", "NoColonHere", "https://a.example/"], "Name: value"),
    (["-u", "alice", "https://a.example/"], "USER:PASSWORD"),
    (["-b", "cookies.txt", "https://a.example/"], "cookie files"),
    (["--max-time", "soon", "https://a.example/"], "max-time"),
    (["-I", "-d", "x=1", "https://a.example/"], "HEAD"),
    (["https://a.example/", "-H"], "needs a value"),
])
def test_rejected_command_lines(args: list[str], message: str) -> None:
    with pytest.raises(InvalidArgument, match=message) as caught:
        parse_curl_args(args)
    assert caught.value.exit_code == 2


def test_an_error_never_echoes_a_password() -> None:
    with pytest.raises(InvalidArgument) as caught:
        parse_curl_args(["-u", "alice", "-H", "Authorization Bearer tok-123", "h.example"])
    assert "tok-123" not in caught.value.message


def test_fetchledger_options_are_taken_out_wherever_they_stand() -> None:
    rest, own = split_own_options([
        "--ledger", "/tmp/l.db", "-H", "--ledger", "https://h.example/", "--allow-private",
        "--allow-host=Intra.Example", "--query", "bees", "--snippets", "5", "--json", "{}"])
    assert rest == ["-H", "--ledger", "https://h.example/", "--json", "{}"]
    assert own.ledger == "/tmp/l.db" and own.allow_private
    assert own.allow_hosts == ("Intra.Example",) and own.query == "bees" and own.k == 5
    with pytest.raises(InvalidArgument, match=r"snippets"):
        split_own_options(["--snippets", "0", "h.example"])


@pytest.mark.parametrize("header", ["X-Api-Key_s3cr3tV4lue", "Authorization s3cr3tV4lue x",
                                    "s3cr3tV4lue"])
def test_a_malformed_header_is_refused_without_echoing_its_value(header: str) -> None:
    """Issue 13, third pass: the refusal named the whole header, a secret glued on."""
    with pytest.raises(InvalidArgument) as refused:
        parse_curl_args(["-H", header, "https://h.example/"])
    assert "s3cr3tV4lue" not in str(refused.value) and "Name: value" in str(refused.value)
