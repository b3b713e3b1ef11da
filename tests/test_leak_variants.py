"""Issue 13, a second red-team pass: variants of each class the first pass did not try.

Secret names in other spellings (session cookies, CSRF tokens, HMAC headers,
passcodes, other languages); secrets on a command line in other forms (program
options, one-dash and colon options, values inside another option's value, JSON,
form bodies, path parameters, fragments, ``$'...'`` quoting); a secret longer than
pyahocorasick's trie survives; names that are not UTF-8; host labels over 63
characters; tag characters in displays. Every case failed before its fix.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from fetchledger import InvalidArgument, InvalidPath, InvalidURL
from fetchledger.identity.command_secrets import redact_argv, redact_command_text
from fetchledger.identity.commands import command_locator, piped_locator
from fetchledger.identity.secrets import is_secret_name, request_secrets, scrub, shown_url
from fetchledger.identity.urls import file_locator, normalize_url, redact_url, url_identity
from fetchledger.text.normalize import printable

KEY = b"k" * 32
VALUE = "hunter22x"

NEW_SECRET_NAMES = [
    "PHPSESSID", "connect.sid", "SID", "HSID", "_gh_sess", "X-CSRF-Token", "csrftoken",
    "_xsrf", "X-Shopify-Hmac-Sha256", "passcode", "passwort", "Kennwort", "mot_de_passe",
    "contraseña", "senha", "client_assertion", "SAMLResponse", "mnemonic", "creds",
    "db_pw", "X-Hub-Signature-256", "ASP.NET_SessionId",
]
STILL_PLAIN = ["code", "state", "nonce", "inside", "consider", "username", "email",
               "client_id", "app_id", "lang", "passenger", "keyword", "signal"]


@pytest.mark.parametrize("name", NEW_SECRET_NAMES)
def test_more_secret_names(name: str) -> None:
    assert is_secret_name(name)
    assert VALUE not in redact_url(f"https://h.example/p?{name}={VALUE}")
    assert redact_argv(["tool", f"--{name}={VALUE}"]) == ["tool", f"--{name}=REDACTED"]


@pytest.mark.parametrize("name", STILL_PLAIN)
def test_names_that_stay_plain(name: str) -> None:
    assert not is_secret_name(name)


ARGV_FORMS = [
    ["curl", "-d", f'{{"password":"{VALUE}","q":"bees"}}', "https://x.example/"],
    ["curl", "-d", f"user=bob&password={VALUE}&q=bees", "https://x.example/"],
    ["curl", f"-ubob:{VALUE}", "https://x.example/"],
    ["curl", f"--user=bob:{VALUE}", "https://x.example/"],
    ["curl", "-b", f"PHPSESSID={VALUE}; lang=en", "https://x.example/"],
    ["curl", f"https://x.example/a;jsessionid={VALUE}?q=1"],
    ["curl", f"https://x.example/cb#access_token={VALUE}&state=1"],
    ["mysql", f"-p{VALUE}", "db"],
    ["sshpass", "-p", VALUE, "ssh", "host"],
    ["docker", "login", "-p", VALUE, "-u", "bob", "registry.example"],
    ["redis-cli", "-a", VALUE, "ping"],
    ["ldapsearch", "-w", VALUE, "-D", "cn=admin"],
    ["tool", "-token", VALUE],
    ["tool", f"/token:{VALUE}"],
    ["tool", f"--token:{VALUE}"],
    ["tool", f"--header=Authorization: Bearer {VALUE}"],
    ["git", "-c", f"http.extraHeader=Authorization: Bearer {VALUE}", "fetch"],
    ["kubectl", "create", "secret", "generic", "s", f"--from-literal=password={VALUE}"],
    ["tool", "--opt", f'{{"api_key": "{VALUE}"}}'],
    ["python3", "-c", f"import os; os.environ['TOKEN'] = '{VALUE}'"],
    ["tool", f"x/?token={VALUE}"],
    ["tool", f"?token={VALUE}&q=1"],
    ["sh", "-c", f"TOKEN=$'{VALUE}' ./fetch"],
    ["bash", "-c", f'curl -d "password={VALUE}" https://x.example/'],
]


@pytest.mark.parametrize("argv", ARGV_FORMS, ids=lambda argv: " ".join(argv)[:60])
def test_a_secret_in_another_command_line_form_is_redacted_and_scrubbed(argv: list[str]
                                                                       ) -> None:
    where = command_locator(argv, key=KEY)
    assert VALUE not in where.display and VALUE not in where.locator
    assert "REDACTED" in where.display
    assert VALUE in where.secrets  # so the command's output is scrubbed of it too
    other = command_locator([word.replace(VALUE, "other-v4lue") for word in argv], key=KEY)
    assert other.display == where.display and other.locator != where.locator


def test_the_rest_of_a_form_body_and_a_cookie_jar_file_stay_shown() -> None:
    assert redact_argv(["curl", "-d", f"user=bob&password={VALUE}&q=bees"]) == \
        ["curl", "-d", "user=bob&password=REDACTED&q=bees"]
    assert redact_argv(["curl", "-b", "cookies.txt", "https://x.example/"]) == \
        ["curl", "-b", "cookies.txt", "https://x.example/"]
    assert redact_argv(["docker", "run", "-p", "8080:80", "img"]) == \
        ["docker", "run", "-p", "8080:80", "img"]
    # a lone -p asks for the password, and mysql reads the next word as the database;
    # but a password typed there is the likelier leak (issue 13, third pass)
    assert redact_argv(["mysql", "-p", "db"]) == ["mysql", "-p", "REDACTED"]


def test_a_header_glued_to_dash_h_does_not_make_the_next_word_a_secret() -> None:
    assert redact_argv(["curl", f"-HX-Api-Key:{VALUE}", "https://x.example/"]) == \
        ["curl", "-HX-Api-Key: REDACTED", "https://x.example/"]


def test_quoted_and_escaped_secrets_in_scripts() -> None:
    assert redact_command_text('x --token="a\\"b9c8d7" && echo "a\\"b9c8d7"') == \
        "x --token=REDACTED && echo REDACTED"
    assert "hunter22x" in command_locator(["sh", "-c", "TOKEN=$'hunter\\x322x' ./fetch"],
                                          key=KEY).secrets  # bash decodes \x32 to "2"


@pytest.mark.parametrize("url", [
    "http://x.example/a;jsessionid=S3SS10N1?q=1", "http://x.example/a;JSESSIONID=S3SS10N1",
    "http://x.example/a;sid=S3SS10N1;v=2/b",
])
def test_a_secret_path_parameter_is_marked_in_the_identity(url: str) -> None:
    identity = url_identity(url, KEY)
    assert "S3SS10N1" not in identity and "REDACTED~" in identity
    assert url_identity(identity, KEY) == identity  # idempotent
    assert "S3SS10N1" not in normalize_url(url) and "S3SS10N1" not in shown_url(url)
    assert "S3SS10N1" in request_secrets(url)  # scrubbed from an echo
    assert url_identity(url.replace("S3SS10N1", "0THER2"), KEY) != identity


def test_a_host_label_over_63_characters_is_an_invalid_url() -> None:
    with pytest.raises(InvalidURL):
        normalize_url(f"http://{'a' * 64}.example/")
    assert normalize_url(f"http://{'a' * 63}.example/")


def test_a_secret_longer_than_the_trie_can_free_does_not_kill_the_process() -> None:
    """pyahocorasick frees its trie recursively: a 700,000-character secret overflowed
    the C stack (a segfault) when the automaton was collected."""
    script = ("from fetchledger.identity.secrets import scrub\n"
              "v = 'ab' * 350_000\n"
              "assert scrub('x ' + v + ' y', [v]) == 'x REDACTED y'\n"
              "import gc; gc.collect(); print('ok')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-500:]
    assert scrub("a abcdefghij b", ["abcdefghij", "z" * 10_000]) == "a REDACTED b"


def test_names_that_are_not_utf8_are_bad_input(tmp_path: Path) -> None:
    odd = tmp_path / "caf\udce9.txt"  # the byte 0xE9, as Python keeps it
    odd.write_bytes(b"text\n")
    with pytest.raises(InvalidPath, match="not valid UTF-8"):
        file_locator(odd)
    with pytest.raises(InvalidArgument, match="not valid UTF-8"):
        command_locator(["cat", "caf\udce9.txt"], tmp_path, key=KEY)
    with pytest.raises(InvalidArgument, match="not valid UTF-8"):
        piped_locator("cat caf\udce9.txt", tmp_path, key=KEY)
    folder = tmp_path / "d\udcff"
    folder.mkdir()
    with pytest.raises(InvalidPath, match="not valid UTF-8"):
        command_locator(["true"], folder, key=KEY)


def test_tag_and_annotation_characters_are_shown_as_escapes() -> None:
    assert printable("a\U000e0041\U000e0069b\ufff9c") == "a\\U000e0041\\U000e0069b\\ufff9c"


@pytest.mark.parametrize("args", [
    [b"read", b"caf\xe9.txt"], [b"run", b"--", b"cat", b"caf\xe9.txt"],
    [b"run", b"--shell", b"--", b"cat caf\xe9.txt"], [b"read", b"-", b"--label", b"\xff"],
    [b"--json", b"read", b"caf\xe9.txt"],
])
def test_not_utf8_on_the_command_line_is_exit_2_and_records_nothing(tmp_path: Path,
                                                                    args: list[bytes]) -> None:
    (tmp_path / "caf\udce9.txt").write_bytes(b"Some text of the file.\n")
    ledger = tmp_path / "l.db"
    done = subprocess.run([sys.executable.encode(), b"-m", b"fetchledger", b"--ledger",
                           bytes(ledger), *args], cwd=tmp_path, input=b"piped text\n",
                          capture_output=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr[-800:]
    errors = done.stderr.decode().strip().splitlines()
    assert errors[0].startswith("fetchledger: error: ") and "not valid UTF-8" in errors[0]
    assert "Traceback" not in done.stderr.decode()
    if ledger.exists():
        with sqlite3.connect(ledger) as db:
            assert db.execute("SELECT count(*) FROM source").fetchone() == (0,)


def test_a_batch_line_with_a_host_label_over_63_characters_is_invalid_url(run_cli: object
                                                                         ) -> None:
    lines = f"http://{'a' * 64}.example/\nhttp://xn--a.example/\n"
    result = run_cli("batch", "-", input=lines)  # type: ignore[operator]
    assert result.exit_code == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(errors) == 2 and all("invalid" in line for line in errors), errors
    assert "dns_error" not in result.stderr and "Traceback" not in result.stderr


# --- session 7 (branch leaks): URL values secret by their name and their shape -------
#
# OAuth/SSO callback values (`?code=`, CAS `?ticket=ST-…`, `?nonce=`, `?pat=`, `?hash=`)
# and single-use link segments (`/token/V`, `/reset-password/V`) were shown and stored
# in clear. Redacted when the value is token-like (16 characters or more of a token's
# alphabet, the character classes changing often: random, not a word or a slug), or
# when the query carries OAuth companions (`state=`, `redirect_uri=`, `client_id=`...);
# a CAS ticket by its prefix. A word (`?code=python`), a number or a slug stays shown.
CALLBACK_VALUE = "4f0AX4XfWh7Kq9ZtR2mB"
URL_SECRETS = [
    f"https://app.example/callback?code={CALLBACK_VALUE}",
    f"https://app.example/callback?code={CALLBACK_VALUE}&state=xyz",
    "https://app.example/callback?code=sh0rt&state=af0ifjsldkj",  # companion: any value
    "https://app.example/cb?state=af0ifjsldkj&code=Sp1xlOBeZQQYbYS6WxSbIA",
    f"https://app.example/cb?code_verifier={CALLBACK_VALUE}",  # PKCE
    "https://cas.example/app?ticket=ST-1-8kQw2mZ9xLp4RtYv-cas01",
    "https://cas.example/app?ticket=PT-42-QwErTyUiOp-cas",
    f"https://sso.example/login?ticket={CALLBACK_VALUE}",
    f"https://idp.example/auth?response_type=id_token&client_id=app&nonce={CALLBACK_VALUE}",
    "https://idp.example/auth?nonce=n-0S6_WzA2Mj&redirect_uri=https%3A%2F%2Fa%2Fcb",
    f"https://git.example/api?pat={CALLBACK_VALUE}",
    "https://site.example/confirm?hash=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
    "https://site.example/verify?email=a%40b.c&hash=5d41402abc4b2a76b9719d911017c592",
    f"https://site.example/unsubscribe?uid=7&verification_code={CALLBACK_VALUE}",
    f"https://app.example/cb#code={CALLBACK_VALUE}&state=s1",  # a fragment: dropped anyway
    f"https://app.example/token/{CALLBACK_VALUE}",
    f"https://app.example/reset-password/{CALLBACK_VALUE}",
    f"https://app.example/password/reset/{CALLBACK_VALUE}?lang=en",
    f"https://app.example/users/verify/{CALLBACK_VALUE}",
    "https://app.example/invite/550e8400-e29b-41d4-a716-446655440000",
    f"https://app.example/auth/magic-link/{CALLBACK_VALUE}/",
    f"https://app.example/api/session/{CALLBACK_VALUE}/refresh",
    f"https://app.example/confirm-email/{CALLBACK_VALUE}",
    f"https://app.example/account?reset={CALLBACK_VALUE}",
    f"https://app.example/join?invite={CALLBACK_VALUE}&team=7",
    f"https://app.example/email?confirm={CALLBACK_VALUE}",
    f"https://sp.example/acs?SAMLart={CALLBACK_VALUE}",
    "https://app.example/activate?activation=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
    "https://app.example/reset/MQ/bk9p3x-1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d/",  # Django
    f"https://app.example/accounts/verify-email/{CALLBACK_VALUE}",
]


@pytest.mark.parametrize("url", URL_SECRETS)
def test_callback_values_and_single_use_link_segments_are_redacted(url: str) -> None:
    secret = _secret_in(url)
    identity = url_identity(url, KEY)
    assert secret not in identity and ("REDACTED~" in identity or "#" in url), identity
    assert url_identity(identity, KEY) == identity  # idempotent
    assert secret not in normalize_url(url) and secret not in shown_url(url)
    assert secret not in redact_url(url)
    assert secret in request_secrets(url) or "#" in url  # scrubbed from an echo
    other = url.replace(secret, secret[::-1])
    if "#" not in url:  # (a fragment is no part of an identity)
        assert url_identity(other, KEY) != identity  # two values, two sources
    shown = redact_argv(["curl", url])[1]  # on a command line too
    assert secret not in shown and "REDACTED" in shown
    assert secret not in redact_command_text(f"curl '{url}'")


def _secret_in(url: str) -> str:
    for secret in (CALLBACK_VALUE, "ST-1-8kQw2mZ9xLp4RtYv-cas01", "PT-42-QwErTyUiOp-cas",
                   "sh0rt", "Sp1xlOBeZQQYbYS6WxSbIA", "n-0S6_WzA2Mj",
                   "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
                   "5d41402abc4b2a76b9719d911017c592",
                   "550e8400-e29b-41d4-a716-446655440000",
                   "bk9p3x-1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d"):
        if secret in url:
            return secret
    raise AssertionError(url)


URL_LOOK_ALIKES = [
    "https://docs.example/search?code=python", "https://errors.example/e?code=404",
    "https://docs.example/lang?code=en-US", "https://shop.example/cart?promo_code=SUMMER2024",
    "https://maps.example/?postcode=SW1A1AA", "https://docs.example/x?hash=main",
    "https://blog.example/posts?ticket=JIRA-1234", "https://cdn.example/app.js?hash=abc123",
    "https://docs.example/token/overview", "https://docs.example/reset-password/how-it-works",
    "https://blog.example/invite/how-to-invite-your-team-in-2024",
    "https://etherscan.example/token/0x1f9840a85d5af5bf1d1762f925bdaddc4201f984",
    "https://docs.example/auth/getting-started-with-single-sign-on",
    "https://docs.example/api/PythonTutorialForBeginners2024",
    "https://github.example/o/r/commit/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
    "https://github.example/o/r/blob/5d41402abc4b2a76b9719d911017c592/README.md",
    "https://news.example/article?id=550e8400-e29b-41d4-a716-446655440000",
    "https://app.example/account?reset=true", "https://app.example/?login=alice",
    "https://github.example/auth0/node-jsonwebtoken/blob/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b/R",
    "https://app.example/reset/MQ/done/", "https://app.example/reset/done/ThisIsAPlainTitle",
]


@pytest.mark.parametrize("url", URL_LOOK_ALIKES)
def test_words_numbers_slugs_and_ids_under_those_names_stay_shown(url: str) -> None:
    assert "REDACTED" not in normalize_url(url) and "REDACTED" not in shown_url(url)
    assert "REDACTED" not in url_identity(url, KEY)
