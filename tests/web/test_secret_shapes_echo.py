"""Credentials known by their shape, end to end: webhook URLs and token formats sent
to a loopback server that echoes the request (its path, headers and body).

The webhook hosts (``hooks.slack.com``, ``discord.com``, ``api.telegram.org``)
resolve to the loopback server through the stub resolver. Nothing of a secret may
be stored (locators, displays, text, raw bytes, metadata, aliases, attempts) or
shown (``list``/``show``/``--json``, ``show --text``, the WARC export, error
messages); the identity tells two webhooks apart and finds the same one again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from fetchledger import Ledger, RetrievalFailed

from .conftest import StubDNS
from .webserver import LoopbackServer
from conftest import stored_decoded

SLACK = "SL4CKh00kS3cr3tV4lu3xyz"
SLACK_2 = "SL4CKh00kS3cr3tV4lu3abc"
DISCORD = "D1sc0rdW3bh00kT0k3n-_abcdefghijklmnopqrstuvwxyz0123456789"
TELEGRAM = "123456789:AAT3l3gr4mB0tT0k3nabcdefghijklmno"
GITHUB = "ghp_" + "G1tHubT0k3nV4lu3" * 2 + "Ab12"
AWS = "AKIA" + "ECH0ED7EXAMPLE42"
JWT = ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJlY2hvZWQtdXNlciJ9."
       "S1gn4tur3V4lu3S1gn4tur3V4lu3S1gn4tur3V4lu3")
SLACK_TOKEN = "xoxb-123456789012-1234567890123-" + "Sl4ckB0tT0k3nV4lu3xyzAB"
STRIPE = "sk_live_" + "Str1p3K3yV4lu3Str1p3K3y"
MATTERMOST = "m4tt3rm0sth00kabcdefghijk"[:26].ljust(26, "x")
KEY_LINE = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw"
PRIVATE_KEY = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_LINE}\n-----END OPENSSH PRIVATE KEY-----"
ALL = (SLACK, SLACK_2, DISCORD, TELEGRAM, GITHUB, AWS, JWT, SLACK_TOKEN, STRIPE, MATTERMOST,
       KEY_LINE)


@pytest.fixture
def hosts(dns: StubDNS) -> StubDNS:
    for host in ("hooks.slack.com", "discord.com", "api.telegram.org"):
        dns[host] = ["127.0.0.1"]
    return dns


@pytest.fixture
def led(ledger_path: Path, hosts: StubDNS) -> Iterator[Ledger]:
    with Ledger(ledger_path, allow_private=True) as opened:
        yield opened


def _on(web: LoopbackServer, host: str, path: str) -> str:
    return f"http://{host}:{web.port}{path}"


def _shown(run_cli: object, ledger_path: Path, ids: list[int], tmp_path: Path) -> bytes:
    """What the CLI shows of the ledger: list, list --failed, show, show --text (text and
    --json), and the WARC export."""
    out: list[str] = []
    for args in (["list"], ["list", "--failed"], *(["show", str(i)] for i in ids),
                 *(["show", str(i), "--text"] for i in ids)):
        for mode in ([], ["--json"]):
            result = run_cli("--ledger", str(ledger_path), *mode, *args)  # type: ignore[operator]
            assert result.exit_code == 0, (args, result.stderr)
            out.extend((result.stdout, result.stderr))
    warc = tmp_path / "ledger.warc"
    result = run_cli("--ledger", str(ledger_path), "export", "--format", "warc",  # type: ignore[operator]
                     "-o", str(warc))
    assert result.exit_code == 0, result.stderr
    return "\n".join(out).encode() + warc.read_bytes()


def _leaks(blob: bytes) -> list[str]:
    return [value for value in ALL if value.encode() in blob]


def test_webhooks_are_two_sources_and_store_no_secret(
        web: LoopbackServer, led: Ledger, ledger_path: Path, tmp_path: Path,
        run_cli: object) -> None:
    one = led.fetch(_on(web, "hooks.slack.com", f"/services/T0AB12/B0CD34/{SLACK}"))
    assert SLACK in web.hits[-1].path  # it was sent, and echoed
    two = led.fetch(_on(web, "hooks.slack.com", f"/services/T0AB12/B0CD34/{SLACK_2}"))
    again = led.fetch(_on(web, "hooks.slack.com", f"/services/T0AB12/B0CD34/{SLACK}"))
    assert one.source.id != two.source.id and again.source.id == one.source.id
    assert one.source.locator == \
        f"http://hooks.slack.com:{web.port}/services/T0AB12/B0CD34/REDACTED"
    posted = led.http_request(
        "POST", _on(web, "discord.com", f"/api/webhooks/1234567890/{DISCORD}?wait=true"),
        headers={"Content-Type": "application/json"}, body='{"content": "deployed, bees"}')
    assert posted.source.locator.startswith(
        f"POST http://discord.com:{web.port}/api/webhooks/1234567890/REDACTED?wait=true")
    bot = led.fetch(_on(web, "api.telegram.org", f"/bot{TELEGRAM}/getMe"))
    assert bot.source.locator == f"http://api.telegram.org:{web.port}/botREDACTED/getMe"
    assert one.warnings and bot.warnings  # the echo held the secret: redacted
    ids = [one.source.id, two.source.id, posted.source.id, bot.source.id]
    assert _leaks(stored_decoded(ledger_path)) == []
    assert _leaks(_shown(run_cli, ledger_path, ids, tmp_path)) == []
    assert b"bees" in stored_decoded(ledger_path)  # the rest of the echo is kept
    assert b"REDACTED" in stored_decoded(ledger_path)


def test_tokens_a_request_carried_are_scrubbed_from_the_echo(
        web: LoopbackServer, led: Ledger, ledger_path: Path, tmp_path: Path,
        run_cli: object) -> None:
    got = [
        led.fetch(web.url(f"/echo?q=bees&note={GITHUB}")),  # a plain name
        led.fetch(web.url(f"/echo/{AWS}/bees")),  # a path segment
        led.http_request("GET", web.url("/echo?q=bees"),
                         headers={"X-Note": f"deploy {SLACK_TOKEN}", "User-Agent": f"ci/{JWT}"}),
        led.http_request("POST", web.url("/echo"), headers={"Content-Type": "application/json"},
                         body=json.dumps({"q": "bees", "note": f"key {STRIPE}"})),
        led.http_request("POST", web.url("/echo"), headers={
            "Content-Type": "application/x-www-form-urlencoded"}, body=f"q=bees&note={GITHUB}"),
        led.http_request("POST", web.url("/echo"), headers={"Content-Type": "text/plain"},
                         body=f"bees and {AWS}"),
    ]
    for value in (GITHUB, AWS, SLACK_TOKEN, JWT, STRIPE):
        assert any(value in hit.path or value in json.dumps(hit.headers)
                   or value.encode() in hit.body for hit in web.hits)  # each was sent
    assert all(result.warnings for result in got)
    assert _leaks(stored_decoded(ledger_path)) == []
    assert _leaks(_shown(run_cli, ledger_path, [r.source.id for r in got], tmp_path)) == []
    assert b"bees" in stored_decoded(ledger_path)


def test_a_redirect_to_a_webhook_and_a_failed_one_store_no_secret(
        web: LoopbackServer, led: Ledger, ledger_path: Path, tmp_path: Path,
        run_cli: object) -> None:
    target = _on(web, "hooks.slack.com", f"/services/T0AB12/B0CD34/{SLACK}")
    redirected = led.fetch(web.url(f"/redirect-to?url={target}"))
    assert SLACK in web.hits[-1].path
    assert redirected.source.locator.endswith("/services/T0AB12/B0CD34/REDACTED")
    with pytest.raises(RetrievalFailed) as failed:  # an attempt, and its message
        led.fetch(_on(web, "hooks.slack.com", f"/triggers/T0AB12/123/{SLACK_2}"))
    assert SLACK_2 not in str(failed.value)
    with pytest.raises(RetrievalFailed):
        led.fetch(web.url(f"/status/404?note={GITHUB}"))
    assert _leaks(stored_decoded(ledger_path)) == []
    assert _leaks(_shown(run_cli, ledger_path, [redirected.source.id], tmp_path)) == []
    failed_list = run_cli("--ledger", str(ledger_path), "--json", "list",  # type: ignore[operator]
                          "--failed")
    attempts = json.loads(failed_list.stdout)
    assert len(attempts) == 2 and all("REDACTED" in a["locator"] for a in attempts)


def test_a_command_that_prints_a_token_it_was_given_stores_none(
        led: Ledger, ledger_path: Path, tmp_path: Path, run_cli: object) -> None:
    got = [led.run(["echo", "token", GITHUB]),
           led.run(["sh", "-c", f"echo {AWS}; echo {SLACK_TOKEN} | tr a-z A-Z; echo bees"]),
           led.run(["printf", "%s\\n", f"https://hooks.slack.com/services/T0/B0/{SLACK}"])]
    result = run_cli("--ledger", str(ledger_path), "run", "--", "echo", JWT)  # type: ignore[operator]
    assert result.exit_code == 0 and JWT not in result.stdout + result.stderr
    assert all("REDACTED" in r.source.locator for r in got)
    assert got[0].source.id != led.run(["echo", "token", GITHUB[:-1] + "9"]).source.id
    assert got[0].source.id == led.run(["echo", "token", GITHUB]).source.id
    assert _leaks(stored_decoded(ledger_path)) == []
    assert _leaks(_shown(run_cli, ledger_path, [r.source.id for r in got], tmp_path)) == []


def test_curl_to_a_webhook_shows_and_stores_no_secret(
        web: LoopbackServer, hosts: StubDNS, ledger_path: Path, tmp_path: Path,
        run_cli: object) -> None:
    def curl(*args: str) -> object:
        return run_cli("--ledger", str(ledger_path), "--allow-private",  # type: ignore[operator]
                       "--json", "curl", *args)

    posted = [curl("-X", "POST", "-H", "Content-Type: application/json", "-d",
                   '{"text": "bees"}', _on(web, "hooks.slack.com", f"/services/T0/B0/{secret}"))
              for secret in (SLACK, SLACK_2, SLACK)]
    assert all(r.exit_code == 0 for r in posted), [r.stderr for r in posted]  # type: ignore[attr-defined]
    ids = [json.loads(r.stdout)[0]["source"]["id"] for r in posted]  # type: ignore[attr-defined]
    assert ids[0] != ids[1] and ids[2] == ids[0]
    bot = curl("-A", f"ci/{GITHUB}", _on(web, "api.telegram.org", f"/bot{TELEGRAM}/getMe"))
    assert bot.exit_code == 0  # type: ignore[attr-defined]
    missing = curl(_on(web, "hooks.slack.com", f"/triggers/T0/123/{SLACK_2}"))
    assert missing.exit_code == 3  # type: ignore[attr-defined]
    printed = "".join(r.stdout + r.stderr for r in (*posted, bot, missing)).encode()  # type: ignore[attr-defined]
    assert _leaks(printed) == [] and b"REDACTED" in printed
    assert _leaks(stored_decoded(ledger_path)) == []
    assert _leaks(_shown(run_cli, ledger_path, ids[:2], tmp_path)) == []


def test_a_self_hosted_webhook_and_a_private_key_store_no_secret(
        web: LoopbackServer, led: Ledger, ledger_path: Path, tmp_path: Path,
        run_cli: object) -> None:
    hook = led.http_request("POST", web.url(f"/hooks/{MATTERMOST}"),
                            headers={"Content-Type": "application/json"},
                            body=json.dumps({"text": "bees", "note": PRIVATE_KEY}))
    assert MATTERMOST in web.hits[-1].path and KEY_LINE.encode() in web.hits[-1].body
    assert "/hooks/REDACTED" in hook.source.locator and hook.warnings
    ran = led.run(["printf", "%s\\n", PRIVATE_KEY])
    assert "REDACTED" in ran.source.locator
    assert _leaks(stored_decoded(ledger_path)) == []
    assert _leaks(_shown(run_cli, ledger_path, [hook.source.id, ran.source.id], tmp_path)) == []


def test_a_batch_of_webhooks_shows_and_stores_no_secret(
        web: LoopbackServer, hosts: StubDNS, ledger_path: Path, tmp_path: Path,
        run_cli: object) -> None:
    lines = [_on(web, "hooks.slack.com", f"/services/T0/B0/{SLACK}"),
             _on(web, "discord.com", f"/api/webhooks/42/{DISCORD}"),
             web.url(f"/echo?q=bees&note={GITHUB}"),
             _on(web, "hooks.slack.com", f"/triggers/T0/1/{SLACK_2}")]  # a 404: an attempt
    listed = tmp_path / "urls.txt"
    listed.write_text("\n".join(lines) + "\n")
    for mode in ([], ["--json"]):
        result = run_cli("--ledger", str(ledger_path), "--allow-private", *mode,  # type: ignore[operator]
                         "batch", str(listed), "--concurrency", "2")
        assert result.exit_code in (0, 3), result.stderr
        assert _leaks((result.stdout + result.stderr).encode()) == [], result.stdout
    assert _leaks(stored_decoded(ledger_path)) == []
    assert _leaks(_shown(run_cli, ledger_path, [1, 2, 3], tmp_path)) == []


def test_the_mcp_tools_show_and_store_no_token(web: LoopbackServer, ledger_path: Path,
                                              tmp_path: Path, run_cli: object) -> None:
    from mcp_session import McpSession, text_of

    session = McpSession(["mcp", "--ledger", str(ledger_path), "--allow-private",
                          "--allow-command", "echo"], cwd=tmp_path, workdir=tmp_path / "logs")
    try:
        results = [
            session.call("fetch", url=web.url(f"/echo/{AWS}?q=bees&note={GITHUB}")),
            session.call("http_request", method="POST", url=web.url("/echo"),
                         headers={"X-Note": SLACK_TOKEN, "Content-Type": "application/json"},
                         body=json.dumps({"q": "bees", "note": PRIVATE_KEY})),
            session.call("run_command", argv=["echo", "deploy", STRIPE]),
            session.call("fetch", url=web.url(f"/status/404?note={JWT}")),  # an error
        ]
        assert [r.is_error for r in results] == [False, False, False, True]
        shown = "".join(text_of(r) + json.dumps(r.structured_content) for r in results)
        shown += text_of(session.call("get_source", id=1)) + text_of(
            session.call("read_source", id=2))
    finally:
        session.close()
    assert _leaks(shown.encode()) == [] and "REDACTED" in shown
    assert _leaks(stored_decoded(ledger_path)) == []
    assert _leaks(_shown(run_cli, ledger_path, [1, 2, 3], tmp_path)) == []
