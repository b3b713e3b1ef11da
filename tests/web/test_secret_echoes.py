"""Issue 13, echoed credentials: a page that echoes the request stores none of its
secrets, in any form the request sent them (plain, percent-encoded, the Basic
base64 of user-info), short values included."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from fetchledger import Ledger, RetrievalFailed

from .webserver import LoopbackServer
from conftest import stored_decoded


@pytest.fixture
def led(ledger_path: Path) -> Iterator[Ledger]:
    with Ledger(ledger_path, allow_private=True) as opened:
        yield opened


@pytest.mark.parametrize(("user", "password"), [
    ("alice", "pw1"), ("bob", "p@ss w0rd!"), ("carol", "longer-password-value"),
])
def test_user_info_is_scrubbed_in_every_form_it_was_sent(
        web: LoopbackServer, led: Ledger, ledger_path: Path, user: str, password: str) -> None:
    url = web.url("/echo?q=bees").replace("://", f"://{quote(user)}:{quote(password, safe='')}@")
    got = led.fetch(url)
    sent = web.hits[-1].headers["Authorization"]
    basic = base64.b64encode(f"{user}:{password}".encode()).decode()
    assert sent == f"Basic {basic}"  # it was sent
    stored = stored_decoded(ledger_path)
    for form in (basic, password, quote(password, safe=""), f"{user}:{password}"):
        assert form.encode() not in stored.replace(b"REDACTED", b"")
    assert b"REDACTED" in stored and got.warnings


@pytest.mark.parametrize("name", ["accesstoken", "apiToken", "sig", "Session_Id", "pwd"])
def test_secret_query_values_are_scrubbed_short_or_long(
        web: LoopbackServer, led: Ledger, ledger_path: Path, name: str) -> None:
    for value in ("s3c", "a-much-longer-s3cret"):
        led.fetch(web.url(f"/echo?q=bees&{name}={value}"))
    stored = stored_decoded(ledger_path)
    assert b"s3c\"" not in stored and b"=s3c" not in stored
    assert b"a-much-longer-s3cret" not in stored


def test_header_and_body_secrets_are_scrubbed_when_echoed(
        web: LoopbackServer, led: Ledger, ledger_path: Path) -> None:
    basic = base64.b64encode(b"dave:hunter").decode()
    led.http_request("POST", web.url("/echo"), headers={
        "Authentication": "tok-9z", "X-Session-Token": "ses5", "Cookie": "sessionid=c00k",
        "Authorization": f"Basic {basic}", "Content-Type": "application/json"},
        body='{"clientSecret": "cs-77", "q": "bees"}')
    stored = stored_decoded(ledger_path).replace(b"REDACTED", b"")
    for value in (b"tok-9z", b"ses5", b"c00k", basic.encode(), b"hunter", b"cs-77"):
        assert value not in stored, value
    assert b"bees" in stored  # the rest of the echo is kept


# --- issue 13, second pass: secrets in redirect targets and path parameters ----------


@pytest.mark.parametrize("where", ["query", "path"])
def test_a_secret_only_a_redirect_target_carried_is_scrubbed_when_echoed(
        web: LoopbackServer, led: Ledger, ledger_path: Path, where: str) -> None:
    got = led.fetch(web.url(f"/redirect-secret/{where}"))
    assert "r3dir3cted-value" in web.hits[-1].path  # it was sent
    stored = stored_decoded(ledger_path)
    assert b"r3dir3cted-value" not in stored
    assert b"bees" in stored and got.warnings


def test_a_secret_path_parameter_is_redacted_and_keyed(
        web: LoopbackServer, led: Ledger, ledger_path: Path) -> None:
    one = led.fetch(web.url("/echo;jsessionid=AAAA1111?q=bees"))
    two = led.fetch(web.url("/echo;jsessionid=BBBB2222?q=bees"))
    again = led.fetch(web.url("/echo;JSESSIONID=AAAA1111?q=bees".replace("JSESSIONID",
                                                                           "jsessionid")))
    assert one.source.id != two.source.id and again.source.id == one.source.id
    assert one.source.locator.endswith("/echo;jsessionid=REDACTED?q=bees")
    stored = stored_decoded(ledger_path)
    assert b"AAAA1111" not in stored and b"BBBB2222" not in stored


# --- issue 13, third pass: a secret in a URL nested in a parameter ------------------------

NESTED = ["next=https%3A%2F%2Fh2.example%2Fp%3Ftoken%3D{v}",
          "redirect_uri=https%253A%252F%252Fapp%252Fcb%253Fapi_key%253D{v}",
          "next=/p?sig={v}"]


@pytest.mark.parametrize("query", NESTED)
def test_a_nested_secret_is_stored_nowhere_and_still_keys_the_identity(
        web: LoopbackServer, led: Ledger, ledger_path: Path, tmp_path: Path, query: str) -> None:
    from fetchledger.cite.export import export

    one = led.fetch(web.url("/echo?q=bees&" + query.format(v="n3st3dV4lue")))
    assert "n3st3dV4lue" in web.hits[-1].path  # it was sent
    two = led.fetch(web.url("/echo?q=bees&" + query.format(v="0th3rV4lue")))
    assert one.source.id != two.source.id and "REDACTED" in one.source.locator
    with pytest.raises(RetrievalFailed) as failed:  # an attempt, and its message
        led.fetch(web.url("/status/404?" + query.format(v="att3mptV4lue")))
    assert "att3mptV4lue" not in str(failed.value)
    out = tmp_path / "ledger.warc"
    export(led, "warc", out)
    stored = stored_decoded(ledger_path) + out.read_bytes()
    for value in (b"n3st3dV4lue", b"0th3rV4lue", b"att3mptV4lue"):
        assert value not in stored, value
    assert b"bees" in stored and one.warnings


def test_a_nested_secret_in_a_posted_body_is_scrubbed_from_the_echo(
        web: LoopbackServer, led: Ledger, ledger_path: Path) -> None:
    led.http_request("POST", web.url("/echo"), headers={"Content-Type": "application/json"},
                     body='{"next": "https://h2.example/cb?access_token=b0dyS3cret", "q": "bees"}')
    led.http_request("POST", web.url("/echo"), headers={
        "Content-Type": "application/x-www-form-urlencoded"},
        body="q=bees&next=https%3A%2F%2Fh2%2Fp%3Fapi_key%3Df0rmS3cret")
    stored = stored_decoded(ledger_path)
    assert b"b0dyS3cret" not in stored and b"f0rmS3cret" not in stored
    assert b"bees" in stored


def test_secrets_a_response_header_hands_out_are_stored_nowhere(
        web: LoopbackServer, led: Ledger, ledger_path: Path, tmp_path: Path) -> None:
    """Issue 13, third pass: relative URLs, fragments and refresh targets in the headers
    of a response (a HEAD request stores them as its text; every exchange keeps them)."""
    from fetchledger.cite.export import export

    head = led.http_request("HEAD", web.url("/header-secrets"))
    led.fetch(web.url("/header-secrets"))
    out = tmp_path / "ledger.warc"
    export(led, "warc", out)
    stored = stored_decoded(ledger_path) + out.read_bytes()
    for value in (b"h3ad3rS3cret", b"r3fr3shS3cret", b"fr4gm3ntS3cret"):
        assert value not in stored, value
    assert "rel=next" in led.text(head.source.id)


def test_a_secret_in_a_referer_is_scrubbed_when_echoed(
        web: LoopbackServer, led: Ledger, ledger_path: Path) -> None:
    led.http_request("GET", web.url("/echo?q=bees"), headers={
        "Referer": "https://app.example/cb?code=1&access_token=r3f3r3rS3cret"})
    assert b"r3f3r3rS3cret" not in stored_decoded(ledger_path)


def test_a_session_cookie_set_on_the_way_is_scrubbed_when_echoed(
        web: LoopbackServer, led: Ledger, ledger_path: Path) -> None:
    """Issue 13, third pass: a redirect sets a session cookie, the client sends it to the
    next hop, and the page echoes it: the request never carried it at first."""
    got = led.fetch(web.url("/session-then-echo"))
    assert "s3ss10nS3cretV" in web.hits[-1].headers.get("Cookie", "")  # it was sent
    assert b"s3ss10nS3cretV" not in stored_decoded(ledger_path)
    assert b"bees" in stored_decoded(ledger_path) and got.warnings


# --- session 7: URL values secret by their name and shape, end to end --------------------

CALLBACKS = ["/echo?code={v}&state=st4te-value", "/echo?q=bees&ticket=ST-1-{v}-cas01",
             "/echo/reset-password/{v}", "/echo?hash={h}"]


@pytest.mark.parametrize("path", CALLBACKS)
def test_a_callback_code_or_link_token_is_stored_nowhere_and_keys_the_identity(
        web: LoopbackServer, led: Ledger, ledger_path: Path, tmp_path: Path, path: str) -> None:
    from fetchledger.cite.export import export

    values = ("4f0AX4XfWh7Kq9ZtR2mB", "Zq8Rt2mB4f0AX4XfWh7K")
    digests = ("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b", "5d41402abc4b2a76b9719d911017c592")
    one = led.fetch(web.url(path.format(v=values[0], h=digests[0])))
    assert values[0] in web.hits[-1].path or digests[0] in web.hits[-1].path  # it was sent
    two = led.fetch(web.url(path.format(v=values[1], h=digests[1])))
    again = led.fetch(web.url(path.format(v=values[0], h=digests[0])))
    assert one.source.id != two.source.id and again.source.id == one.source.id
    assert "REDACTED" in one.source.locator
    out = tmp_path / "ledger.warc"
    export(led, "warc", out)
    stored = stored_decoded(ledger_path) + out.read_bytes()
    for value in (*values, *digests):
        assert value.encode() not in stored, value
    assert b"echo" in stored
