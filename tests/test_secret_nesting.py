"""Issue 13, third pass: secrets nested in other values, unquoted keyed values, the
secret options of other programs.

- a URL (or a query) inside another parameter's value — percent-encoded once or
  twice, or not at all — keeps its secrets out of every form a URL is shown or
  stored in (identity, display, redirect chains, headers as a WARC stores them,
  error messages), in form and JSON bodies, in argv words and ``curl -d``
  fields; the identity still tells two inner values apart (keyed marks);
- ``NAME = V`` and ``NAME: V`` inside one argument, split over words, or inside
  a word that is itself a command (``ssh host '…'``, ``watch '…'``);
- setting commands (``git config user.password V``, ``aws configure set …``)
  and the password option of the mysql clients given apart (``-p V``).

Every case failed before its fix.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from fetchledger import InvalidURL
from fetchledger.identity.command_secrets import redact_argv
from fetchledger.identity.commands import command_locator
from fetchledger.identity.secrets import (
    REDACTED,
    is_secret_name,
    redact_body,
    redact_header,
    request_secrets,
    shown_url,
)
from fetchledger.identity.urls import (
    http_identity,
    normalize_url,
    parse_http_url,
    redact_url,
    url_identity,
)

KEY = b"k" * 32
V = "n3stedS3cret"
W = "0therS3cret9"

# A URL or query inside another parameter, in the forms clients send it.
NESTED = [
    "https://h.example/login?next=https%3A%2F%2Fh2.example%2Fp%3Ftoken%3D{v}",
    "https://h.example/login?next=https%3a%2f%2fh2.example%2fp%3fapi_key%3d{v}%26x%3d1",
    "https://h.example/oauth?redirect_uri=https%3A%2F%2Fapp.example%2Fcb%3Fapi_key%3D{v}",
    "https://h.example/a?next=https%253A%252F%252Fh2%252Fp%253Ftoken%253D{v}",  # twice
    "https://h.example/a?u=https%25253A%25252F%25252Fh%25252Fp%25253Fsig%25253D{v}",
    "https://h.example/a?next=https://h2.example/p?token={v}&q=bees",  # not encoded
    "https://h.example/a?next=/p%3Fsig%3D{v}",  # a relative URL
    "https://h.example/a?state=x%26access_token%3D{v}",  # a query in a value
    "https://h.example/a?next=https%3A%2F%2Fh2%2Fp%3Fa%3D1%26client_secret%3D{v}%26b%3D2",
    "https://h.example/a?next=https%3A%2F%2Fh2%2Fp%3Bjsessionid%3D{v}",
    "https://h.example/a?next=https%3A%2F%2Fh2%2Fcb%23access_token%3D{v}",
    "https://h.example/a?next=https%3A%2F%2Fuser%3A{v}%40h2.example%2F",  # user-info
    "https://h.example/a?next=https://user:{v}@h2.example/",
    "https://h.example/a?next=https%3A%2F%2Fh2%2Fp%3Fnext%3Dhttps%253A%252F%252Fh3"
    "%252Fq%253Ftoken%253D{v}",  # a URL in a URL in a URL
]


@pytest.mark.parametrize("template", NESTED)
def test_a_secret_in_a_url_nested_in_a_parameter_is_never_shown(template: str) -> None:
    url = template.format(v=V)
    identity = url_identity(url, KEY)
    for shown in (identity, normalize_url(url), redact_url(url), shown_url(url)):
        assert V not in shown, shown
    assert REDACTED in normalize_url(url)
    assert url_identity(identity, KEY) == identity  # idempotent
    assert normalize_url(normalize_url(url)) == normalize_url(url)
    assert url_identity(template.format(v=W), KEY) != identity  # two values, two sources
    assert url_identity(template.format(v=V), KEY) == identity
    assert V in request_secrets(url)  # scrubbed from an echo
    for header in ("Location", "Referer", "Link", "Content-Location"):
        assert V not in redact_header(header, url)
    assert V not in http_identity("POST", url, b"x=1", "application/x-www-form-urlencoded",
                                  KEY)


@pytest.mark.parametrize("template", NESTED[:4])
def test_a_nested_secret_stays_out_of_error_messages(template: str) -> None:
    broken = template.format(v=V).replace("h.example", "h.example:99999")
    with pytest.raises(InvalidURL) as raised:
        parse_http_url(broken)
    assert V not in str(raised.value) and V not in str(getattr(raised.value, "hint", ""))
    assert V not in shown_url(template.format(v=V).replace("https://", "ftp://"))


def test_the_rest_of_a_nested_url_stays_shown() -> None:
    url = "https://h.example/a?next=https%3A%2F%2Fh2%2Fp%3Fa%3D1%26token%3DV1%26b%3D2&q=bees"
    assert normalize_url(url) == \
        "https://h.example/a?next=https%3A%2F%2Fh2%2Fp%3Fa%3D1%26token%3DREDACTED%26b%3D2&q=bees"
    assert normalize_url("https://h.example/a?next=%2Fp%3Fpage%3D2") == \
        "https://h.example/a?next=%2Fp%3Fpage%3D2"
    # a deeper-encoded `&` is part of the secret value, not the end of it
    assert "tail" not in normalize_url("https://h.example/a?n=%2Fp%3Ftoken%3Dab%2526tail")


@pytest.mark.parametrize(("body", "content_type"), [
    ("next=https%3A%2F%2Fh2%2Fp%3Ftoken%3D{v}&q=bees", "application/x-www-form-urlencoded"),
    ("redirect_uri=https%253A%252F%252Fh2%252Fcb%253Fapi_key%253D{v}",
     "application/x-www-form-urlencoded"),
    ('{{"next": "https://h2.example/p?token={v}", "q": "bees"}}', "application/json"),
    ('{{"a": [{{"u": "https://h2/p?x=1&api_key={v}"}}]}}', "application/json"),
    ('{{"next": "https%3A%2F%2Fh2%2Fp%3Ftoken%3D{v}"}}', "application/json"),
    ('{{"callback": "https://bob:{v}@h2.example/hook"}}', "application/json"),
])
def test_a_nested_secret_in_a_body_is_redacted_and_scrubbed(body: str, content_type: str
                                                            ) -> None:
    sent = body.format(v=V).encode()
    assert V.encode() not in redact_body(sent, content_type)
    assert V in request_secrets("https://h.example/", (), sent, content_type)


@pytest.mark.parametrize("argv", [
    ["curl", "https://h.example/login?next=https%3A%2F%2Fh2%2Fp%3Ftoken%3D{v}"],
    ["curl", "-d", "next=https%3A%2F%2Fh2%2Fp%3Ftoken%3D{v}", "https://h.example/"],
    ["curl", "--data-urlencode", "next=https://h2.example/p?token={v}", "https://h.example/"],
    ["curl", "-d", '{{"next": "https://h2/p?token={v}"}}', "https://h.example/"],
    ["tool", "?next=%2Fp%3Ftoken%3D{v}"],
    ["tool", "--redirect=https%3A%2F%2Fh2%2Fcb%3Fapi_key%3D{v}"],
    ["wget", "https://h.example/a?u=https%253A%252F%252Fh%252Fp%253Fsig%253D{v}"],
    ["sh", "-c", "curl 'https://h.example/a?next=https%3A%2F%2Fh2%2Fp%3Ftoken%3D{v}'"],
])
def test_a_nested_secret_on_a_command_line_is_redacted(argv: list[str]) -> None:
    words = [word.format(v=V) for word in argv]
    where = command_locator(words, key=KEY)
    assert V not in where.display and V not in where.locator, where.display
    assert V in where.secrets
    other = command_locator([word.format(v=W) for word in argv], key=KEY)
    assert other.display == where.display and other.locator != where.locator


# --- unquoted keyed values, split words, commands inside words ------------------------

UNQUOTED = [
    ["tool", "API_KEY = {v}"],
    ["tool", "api_key={v} user=bob"],
    ["tool", "password : {v}"],
    ["tool", "password", "=", "{v}"],
    ["tool", "password:", "{v}"],
    ["tool", "X-Api-Key:", "{v}"],
    ["tool", "--data=user=a password = {v}"],
    ["sh", "-c", "API_KEY = {v} ./run"],
    ["sh", "-c", "API_KEY= {v}"],
    ["ssh", "host", "export TOKEN={v}; ./deploy"],
    ["ssh", "host", "mysql --password {v} db"],
    ["watch", "curl --token {v} https://h.example/"],
    ["docker", "exec", "box", "psql postgresql://u:{v}@db/x"],
    ["http", "h.example", "api_key=={v}"],  # httpie: a query parameter
    ["http", "h.example", "token:={v}"],  # httpie: a raw JSON field
    ["http", "h.example", "Authorization:Bearer {v}"],
    ["curl", "-H", "Authorization: Bearer {v}", "https://h.example/"],
    ["curl", "Authorization: Bearer {v}"],
    ["mysql", "-u", "root", "-p", "{v}", "db"],
    ["mysql", "-u", "root", "-p{v}", "db"],
    ["mysql", "-u", "root", "--password", "{v}", "db"],
    ["mysql", "-u", "root", "--password={v}", "db"],
    ["curl", "-u", "user:{v}", "https://h.example/"],
    ["curl", "-H", "X-Api-Key: {v}", "https://h.example/"],
    ["git", "config", "--global", "user.password", "{v}"],
    ["aws", "configure", "set", "aws_secret_access_key", "{v}"],
    ["npm", "config", "set", "//registry.example/:_authToken", "{v}"],
    ["redis-cli", "AUTH", "{v}"],
    ["redis-cli", "config", "set", "requirepass", "{v}"],
    ["env", "TOKEN={v}", "sh", "-c", "./run"],
    ["sudo", "-u", "app", "sh", "-c", "export API_TOKEN={v} && ./run"],
]


@pytest.mark.parametrize("argv", UNQUOTED, ids=lambda argv: " ".join(argv)[:50])
def test_unquoted_keyed_values_and_split_options_are_redacted(argv: list[str]) -> None:
    words = [word.format(v=V) for word in argv]
    where = command_locator(words, key=KEY)
    assert V not in where.display and V not in where.locator, where.display
    assert REDACTED in where.display
    assert V in where.secrets  # scrubbed from the output too
    other = command_locator([word.format(v=W) for word in argv], key=KEY)
    assert other.display == where.display
    if "@" not in " ".join(argv):  # user-info is a credential, not identity (DESIGN §4)
        assert other.locator != where.locator


@pytest.mark.parametrize(("argv", "shown"), [
    (["grep", "-r", "keyword", "src/"], ["grep", "-r", "keyword", "src/"]),
    (["grep", "password", "notes.txt"], ["grep", "password", "notes.txt"]),
    (["git", "log", "--author", "me"], ["git", "log", "--author", "me"]),
    (["echo", "monkey = banana"], ["echo", "monkey = banana"]),
    (["echo", "keyword: rust"], ["echo", "keyword: rust"]),
    (["sh", "-c", "ls -la | wc -l"], ["sh", "-c", "ls -la | wc -l"]),
    (["git", "commit", "-m", "fix the token parser"], ["git", "commit", "-m",
                                                      "fix the token parser"]),
    (["git", "config", "user.name", "Bob"], ["git", "config", "user.name", "Bob"]),
    (["docker", "run", "-p", "8080:80", "img"], ["docker", "run", "-p", "8080:80", "img"]),
    (["ssh", "host", "ls /srv; uptime"], ["ssh", "host", "ls /srv; uptime"]),
    (["tool", "design = plain"], ["tool", "design = plain"]),
])
def test_words_that_only_look_keyed_stay_as_written(argv: list[str], shown: list[str]
                                                    ) -> None:
    assert redact_argv(argv) == shown


def test_the_allowlist_still_holds() -> None:
    for name in ("keyword", "monkey", "author", "design", "signal", "passenger"):
        assert not is_secret_name(name)


def test_json_bodies_keep_their_other_strings() -> None:
    body = json.dumps({"next": "https://h2/p?page=2&token=" + V, "q": "bees"}).encode()
    redacted = json.loads(redact_body(body, "application/json"))
    assert redacted == {"next": "https://h2/p?page=2&token=REDACTED", "q": "bees"}


# --- the third pass's own adversarial variants -------------------------------------------

ADVERSARIAL = [
    ["curl", "-x", "u:{v}@proxy.example:8080", "https://h.example/"],  # proxy, no scheme
    ["env", "http_proxy=u:{v}@proxy.example:3128", "curl", "https://h.example/"],
    ["redis-cli", "-u", "redis://:{v}@cache.example:6379"],
    ["curl", "-u", "{v}:", "https://api.stripe.example/v1/charges"],  # a key as the user
    ["curl", "-u{v}:", "https://api.stripe.example/v1/charges"],
    ["openssl", "enc", "-aes256", "-pass", "pass:{v}"],
    ["curl", "-E", "client.pem:{v}", "https://h.example/"],
    ["curl", "--cert", "client.pem:{v}", "https://h.example/"],
    ["tool", "auth[token]={v}"],
    ["tool", "--api-key[]={v}"],
    ["tool", "data[password]={v}"],
    ["az", "login", "-u", "me", "-p", "{v}"],
    ["heroku", "config:set", "FOO={v}"],
    ["vault", "login", "{v}"],
    ["curl", "-U", "proxyuser:{v}", "https://h.example/"],
    ["sh", "-c", 'curl -d @- https://h.example/ <<EOF\n{{"password": "{v}"}}\nEOF'],  # heredoc
    ["psql", "-c", "ALTER USER app WITH PASSWORD '{v}'"],  # SQL
    ["mysql", "-e", "CREATE USER x IDENTIFIED BY '{v}'"],
    ["sh", "-c", "psql -c \"ALTER ROLE a PASSWORD '{v}'\""],
]


# A secret's name spelled with the shell's quoting: the shell removes quotes and the
# backslash of an escape, so the program sees `--token=V` (session 5).
QUOTED_NAMES = [
    ["sh", "-c", "x --tok\\en={v}"],
    ["sh", "-c", "TOK\\EN={v} x"],
    ["sh", "-c", "x --pass\\word {v}"],
    ["sh", "-c", 'x --to""ken={v}'],
    ["sh", "-c", "export TO''KEN={v}"],
    ["bash", "-c", "x --api\\-key {v}"],
    ["sh", "-c", "x --'api'_\"key\"={v}"],
    ["sh", "-c", "sh -c \"x --tok\\\\en={v}\""],  # the inner script's escape
    ["sh", "-c", "mysql -p\\{v} db"],
]


def test_quoting_outside_a_shell_is_the_program_s_own_word() -> None:
    """Without a shell nothing removes the backslash: ``--tok\\en`` is not ``--token``."""
    assert command_locator(["x", "--tok\\en=" + V], key=KEY).display.count(V) == 1


@pytest.mark.parametrize("argv", ADVERSARIAL + QUOTED_NAMES,
                         ids=lambda argv: " ".join(argv)[:50])
def test_adversarial_command_lines_are_redacted(argv: list[str]) -> None:
    words = [word.format(v=V) for word in argv]
    where = command_locator(words, key=KEY)
    assert V not in where.display and V not in where.locator, where.display
    assert V in where.secrets


@pytest.mark.parametrize(("argv", "shown"), [
    (["docker", "run", "nginx:1.25@sha256:abcdef", "x"],
     ["docker", "run", "nginx:1.25@sha256:abcdef", "x"]),
    (["npm", "login", "--auth-type=legacy"], ["npm", "login", "--auth-type=legacy"]),
    (["vault", "login", "-method=userpass", "username=me"],
     ["vault", "login", "-method=userpass", "username=me"]),
    (["curl", "-E", "client.pem", "https://h.example/"],
     ["curl", "-E", "client.pem", "https://h.example/"]),
    (["curl", "-u", "bob", "https://h.example/"], ["curl", "-u", "bob", "https://h.example/"]),
    (["scp", "me@host.example:notes.txt", "."], ["scp", "me@host.example:notes.txt", "."]),
])
def test_adversarial_look_alikes_stay_as_written(argv: list[str], shown: list[str]) -> None:
    assert redact_argv(argv) == shown


@pytest.mark.parametrize(("name", "value"), [
    ("Location", "https://h.example/cb#access_token={v}"),
    ("Location", "/cb?x=1#access_token={v}"),
    ("Content-Location", "/a#id_token={v}"),
    ("Refresh", "0; url=/cb?token={v}"),
    ("Link", "</p?token={v}>; rel=next"),
    ("X-Redirect", "/p?api_key={v}"),
    ("Referer", "https://h.example/?next=%2Fp%3Ftoken%3D{v}"),
])
def test_secrets_in_header_urls_are_redacted_and_collected(name: str, value: str) -> None:
    shown = redact_header(name, value.format(v=V))
    assert V not in shown and REDACTED in shown
    assert V in request_secrets("https://h.example/", [(name, value.format(v=V))])


def test_basic_credentials_are_scrubbed_without_padding_and_url_safe() -> None:
    import base64

    from fetchledger.identity.secrets import scrub

    pair = f"bob:{V}??>".encode()
    secrets = request_secrets(f"https://bob:{V}%3F%3F%3E@h.example/")
    for form in (base64.b64encode(pair).decode(), base64.b64encode(pair).decode().rstrip("="),
                 base64.urlsafe_b64encode(pair).decode().rstrip("=")):
        assert form not in scrub(f"echoed {form} here", secrets)
    header = [("Authorization", "Basic " + base64.b64encode(b"carol:pw12").decode())]
    assert "Y2Fyb2w6cHcxMg" not in scrub("seen Y2Fyb2w6cHcxMg here",
                                         request_secrets("https://h.example/", header))


@pytest.mark.parametrize("spelled", [
    lambda v: v.replace("/", "\\/"),  # PHP's json_encode escapes slashes
    lambda v: v.replace("&", "&amp;").replace("<", "&lt;"),  # HTML-escaped
], ids=["php-json", "html"])
def test_an_echo_in_php_json_or_html_escapes_is_scrubbed(spelled: Any) -> None:
    from fetchledger.identity.secrets import scrub

    value = "ab/cd&ef<gh-ij=="
    secrets = request_secrets(f"https://h.example/?token={value.replace('&', '%26')}")
    assert value in secrets
    shown = scrub("echoed: " + spelled(value) + " end", secrets)
    assert "ab" not in shown and "REDACTED" in shown


def test_fullwidth_secret_names_are_secret() -> None:
    assert is_secret_name("ＡＰＩ＿ＫＥＹ") and is_secret_name("ｐａｓｓｗｏｒｄ")
    assert V not in normalize_url(f"https://h.example/?ａｐｉ＿ｋｅｙ={V}")


@pytest.mark.parametrize("template", [
    "https://h.example/?filter=%7B%22api_key%22%3A%22{v}%22%7D",
    "https://h.example/?f=%7B%22q%22%3A%22x%22%2C%22token%22%3A+%22{v}%22%7D",
    'https://h.example/?f={{"password":"{v}"}}',
    "https://h.example/?f=%257B%2522secret%2522%253A%2522{v}%2522%257D",  # encoded twice
])
def test_json_inside_a_parameter_keeps_its_secrets_out(template: str) -> None:
    url = template.format(v=V)
    assert V not in normalize_url(url) and V not in url_identity(url, KEY)
    assert url_identity(url_identity(url, KEY), KEY) == url_identity(url, KEY)
    assert url_identity(template.format(v=W), KEY) != url_identity(url, KEY)
    assert V in request_secrets(url)
    body = f"payload={url.partition('=')[2]}".encode()
    assert V.encode() not in redact_body(body, "application/x-www-form-urlencoded")


@pytest.mark.parametrize("text", [
    "x%3Dy%2526" * 10_000, "a=b&" * 25_000, '"token":"v",' * 8_000, "token%3Dy%2526" * 8_000,
])
def test_nested_reading_is_linear(text: str) -> None:
    import time

    from fetchledger.identity.secrets import plain_mark, redact_nested

    def cpu(sample: str) -> float:
        best = float("inf")
        for _ in range(3):
            started = time.process_time()
            redact_nested(sample, [], plain_mark)
            best = min(best, time.process_time() - started)
        return best

    # ten times the text: about ten times the CPU (quadratic work would be 100)
    small, big = cpu(text[: len(text) // 10]), cpu(text)
    assert big <= 30 * max(small, 0.001) and big < 0.5, (small, big)


def test_text_that_looks_like_a_recorded_mark_is_redacted_as_text() -> None:
    """The one pass of the rules marks values with NUL-delimited slots; an input holding
    such a sequence (a label can hold a NUL) is redacted the slow way, never misread."""
    from fetchledger.identity.command_secrets import redact_argv, redact_command_text

    slot = "\0\x03\U000f0000\0"
    assert redact_command_text(f"echo {slot} --token={V}").endswith("--token=REDACTED")
    assert redact_argv(["x", slot, f"--token={V}"]) == ["x", slot, "--token=REDACTED"]
