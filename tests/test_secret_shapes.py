"""Credentials recognised by their shape, not their name (DESIGN §8).

- **webhook URLs whose path is the secret** (Slack, Discord, Telegram, Teams,
  Zapier, IFTTT, PagerDuty, Datadog): the secret segment is ``REDACTED`` in every
  form a URL is shown or stored in (display, redirect chains, headers as a WARC
  stores them, error messages), its keyed mark in the identity (two webhooks, two
  sources; the same one, one), and it is scrubbed from an echo;
- **well-known token formats** (GitHub, GitLab, Slack, OpenAI, Anthropic, Stripe,
  AWS, Google, JWT, npm, PyPI, ...) wherever a value is kept: a query value under a
  plain name, a path segment, user-info, argv words and option values, header
  values of headers with plain names, JSON and form body fields;
- near misses (``sk-learn``, ``risk-free``, ``ghp`` alone, short ids) stay as written.

Every case failed before this change (the near misses are controls).
"""

from __future__ import annotations

import json
import time

import pytest

from fetchledger import InvalidURL
from fetchledger.identity.command_secrets import redact_command_text
from fetchledger.identity.commands import command_locator
from fetchledger.identity.secrets import (
    REDACTED,
    redact_body,
    redact_header,
    request_secrets,
    scrub,
    shown_url,
)
from fetchledger.identity.shapes import redact_shapes, shape_secrets
from fetchledger.identity.urls import (
    http_identity,
    normalize_url,
    parse_http_url,
    redact_url,
    url_identity,
)

KEY = b"k" * 32
_B = "Zx9Qw3Er7Ty1Ui5Op2As8Df4Gh6Jk0Lm"  # 32 mixed letters and digits
_HEX = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"  # 32 hex digits

# One made-up value of each format (none is a real credential).
TOKENS: dict[str, str] = {
    "GitHub ghp_": "ghp_" + _B + "Ab12",
    "GitHub gho_": "gho_" + _B + "Cd34",
    "GitHub ghu_": "ghu_" + _B + "Ef56",
    "GitHub ghs_": "ghs_" + _B + "Gh78",
    "GitHub ghr_": "ghr_" + _B + "Ij90",
    "GitHub github_pat_": "github_pat_11ABCDEFG0" + _B[:12] + "_" + _B + _B[:27],
    "GitLab glpat-": "glpat-" + _B[:20],
    "Slack xoxb-": "xoxb-123456789012-1234567890123-" + _B[:24],
    "Slack xoxp-": "xoxp-123456789012-123456789012-1234567890123-" + _HEX,
    "Slack xapp-": "xapp-1-A0123456789-1234567890123-" + _HEX,
    "OpenAI sk-": "sk-" + _B + "T3BlbkFJ" + _B[:8],
    "OpenAI sk-proj-": "sk-proj-" + _B + "-" + _B + "_T3BlbkFJ" + _B,
    "Anthropic sk-ant-": "sk-ant-api03-" + _B + "-" + _B + "_" + _B + "AA",
    "Stripe sk_live_": "sk_live_" + _B[:24],
    "Stripe rk_live_": "rk_live_" + _B[:24],
    "Stripe sk_test_": "sk_test_" + _B[:24],
    "AWS AKIA": "AKIA" + "IOSFODNN7EXAMPLE",
    "AWS ASIA": "ASIA" + "Y34FZKBOKMUTVV7A",
    "Google AIza": "AIza" + _B + "xyz",
    "Google ya29.": "ya29." + _B + "-" + _B[:10],
    "JWT": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
           "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "npm": "npm_" + _B + "Qr56",
    "PyPI": "pypi-AgEIcHlwaS5vcmc" + _B + _B,
    "Hugging Face": "hf_" + _B + "Ab",
    "Telegram bot token": "1234567890:AA" + _B + "x",
    "SendGrid": "SG." + _B[:22] + "." + _B + _B[:11],
    "DigitalOcean": "dop_v1_" + _HEX + _HEX,
    # issuers added in the second increment
    "OpenAI sk-None-": "sk-None-" + _B + _B[:16],
    "OpenRouter": "sk-or-v1-" + _HEX + _HEX,
    "xAI": "xai-" + _B + _B,
    "Perplexity": "pplx-" + _B + _B[:16],
    "Mailgun": "key-" + _HEX,
    "Square": "sq0atp-" + _B[:22],
    "Atlassian": "ATATT3xFfGF0" + _B + "-" + _B[:20] + "=0A1B2C3D",
    "Sentry": "sntryu_" + _HEX + _HEX,
    "Notion": "ntn_" + _B + _B[:14],
    "Heroku": "HRKU-" + _B[:8] + "-" + _B[:12],
    "Docker Hub": "dckr_pat_" + _B[:27],
    "Terraform Cloud": "Zx9Qw3Er7Ty1Ui.atlasv1." + _B + _B,
    "New Relic": "NRAK-" + "A1B2C3D4E5F6G7H8I9J0K1L2M3N",
    "Supabase": "sbp_" + _HEX + _HEX[:8],
    "Twilio": "SK" + _HEX,
    "Bitbucket": "ATBB" + _B,
}


def _other(token: str) -> str:
    """Another value of the same format (its last character changed to a digit)."""
    return token[:-1] + ("7" if token[-1] != "7" else "8")


# --- near misses: words and ids that must stay as written ----------------------------------

NEAR_MISSES = [
    "sk-learn", "scikit-learn", "risk-free", "ghp", "ghp_short", "gho_" + "x" * 35,
    "github_pat", "glpat-short", "xoxo-hugs", "xoxb-", "npm_modules", "npm_" + "a" * 35,
    "eyJ", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0",  # two parts: no JWT
    "sk-proj-management-and-tools", "sk-" + "a" * 31, "sk_live", "sk_live_short",
    "AKIA", "AKIA" + "IOSFODNN7EXAMP", "AKIA" + "IOSFODNN7EXAMPLEabc", "AKIAIOSFODNN7example",
    "AIza" + "x" * 34, "pypi-AgE", "pypi-AgEshort", "hf_hub", "hf_hub_download", "SG.json",
    "do_v1_x", "12345678:AAshort", "desk-" + _B + _B, "mask_" + _B, "taskgho_" + _B + "1234",
    "key-value", "key-" + _HEX[:31], "monkey-" + _HEX, "ops_team", "sbp_short", "xai-grok",
    "pplx-api", "HRKU-", "NRAK-abc", "sk-or-v1-short", "dckr_pat_x", "ntn_x", ".atlasv1.x",
]


@pytest.mark.parametrize("word", NEAR_MISSES)
def test_near_misses_stay_as_written_everywhere(word: str) -> None:
    assert redact_shapes(f"a {word} b", [], lambda v: REDACTED) == f"a {word} b"
    url = f"https://h.example/p/{word}?q={word}"
    assert normalize_url(url) == url and redact_url(url) == url
    assert command_locator(["tool", word, f"--opt={word}"], "/", key=KEY).display == \
        f"tool {word} --opt={word} (in /)"
    assert redact_header("X-Note", word) == word
    assert shape_secrets(f"body {word} end") == []


PAGES = [  # URLs of the same services that are pages, not credentials
    "https://hooks.slack.com/", "https://hooks.slack.com/services/",
    "https://hooks.slack.com/services/T0123", "https://api.slack.com/messaging/webhooks",
    "https://discord.com/api/webhooks", "https://discord.com/channels/123/456",
    "https://discord.com/developers/docs/resources/webhook",
    "https://core.telegram.org/bots/api", "https://api.telegram.org/",
    "https://hooks.zapier.com/", "https://learn.microsoft.com/en-us/microsoftteams/webhooks",
    "https://evilhooks.slack.com/services/T0/B0/NOTSLACK",  # not Slack's host
    "https://github.com/o/r/settings/hooks/123456789", "https://react.dev/reference/react/hooks",
    "https://docs.example.com/hooks/abcdefghijklmnopqrstuvwxyz",  # a slug: no digit in it
]


@pytest.mark.parametrize("url", PAGES)
def test_pages_of_webhook_services_stay_as_written(url: str) -> None:
    assert normalize_url(url) == url and url_identity(url, KEY) == url
    assert REDACTED not in redact_url(url)


# --- webhooks: the secret segment ----------------------------------------------------------

WEBHOOKS = {  # URL with {s} for the secret → the secret, and the display
    "Slack services": "https://hooks.slack.com/services/T00000000/B00000000/{s}",
    "Slack workflows": "https://hooks.slack.com/workflows/T0AB12CD3/A0EF45GH6/123456789/{s}",
    "Slack triggers": "https://hooks.slack.com/triggers/T0AB12CD3/1234567890/{s}",
    "Slack (host in capitals)": "https://HOOKS.SLACK.COM/services/T00000000/B00000000/{s}",
    "Discord": "https://discord.com/api/webhooks/1234567890123456789/{s}",
    "Discord (discordapp, v10, /slack)":
        "https://discordapp.com/api/v10/webhooks/1234567890123456789/{s}/slack",
    "Discord (canary, ?wait=true)": "https://canary.discord.com/api/webhooks/42/{s}?wait=true",
    "Telegram": "https://api.telegram.org/bot{s}/sendMessage?chat_id=1",
    "Telegram file": "https://api.telegram.org/file/bot{s}/photos/file_1.jpg",
    "Teams (webhook.office.com)":
        "https://contoso.webhook.office.com/webhookb2/a1b2c3d4-0000-1111-2222-333344445555@"
        "f0e1d2c3-9999-8888-7777-666655554444/IncomingWebhook/{s}",
    "Office 365 (outlook.office.com)":
        "https://outlook.office.com/webhook/a1b2c3d4-0000-1111@f0e1d2c3-9999-8888/"
        "IncomingWebhook/{s}",
    "Zapier": "https://hooks.zapier.com/hooks/catch/1234567/{s}/",
    "IFTTT": "https://maker.ifttt.com/trigger/door_opened/with/key/{s}",
    "IFTTT json": "https://maker.ifttt.com/trigger/door_opened/json/with/key/{s}",
    "PagerDuty": "https://events.pagerduty.com/integration/{s}/enqueue",
    "Datadog": "https://http-intake.logs.datadoghq.com/v1/input/{s}",
    "a webhook nested in a parameter": "https://h.example/cb?next=https%3A%2F%2Fhooks.slack.com"
                                        "%2Fservices%2FT0%2FB0%2F{s}",
    "nested twice": "https://h.example/cb?next=https%253A%252F%252Fdiscord.com%252Fapi"
                    "%252Fwebhooks%252F42%252F{s}",
    "a GitHub token as a path segment": "https://h.example/raw/{s}/file.txt",
    "Mattermost (any host)": "https://chat.example.org/hooks/{s}",
    "Rocket.Chat (any host)": "https://rc.example.org/hooks/{s}",
}
SECRET, OTHER = "wHs3cr3tV4lu3AbCdEf12", "wHs3cr3tV4lu3AbCdEf99"


def _secret_for(name: str, value: str) -> str:
    if name.startswith("Telegram"):
        return "123456789:AA" + value  # the bot's id and its token: one credential
    if name.startswith(("Teams", "Office")):  # the connector id, its owner, a signature
        return f"{value}/0a1b2c3d-4444-5555-6666-777788889999/V2sig{value}"
    if name.startswith("Mattermost"):  # 26 lowercase letters and digits
        return (value.lower() + "abcdefgh")[:26]
    if name.startswith("Rocket"):  # the integration's id and its token
        return "AbCdEfGhIjKlMnOpQ/" + value + value
    if name.startswith("a GitHub"):
        return "ghp_" + value + value[:15]
    return value


@pytest.mark.parametrize("name", list(WEBHOOKS))
def test_a_webhook_secret_is_redacted_keyed_and_scrubbed(name: str) -> None:
    secret, other = _secret_for(name, SECRET), _secret_for(name, OTHER)
    url = WEBHOOKS[name].format(s=secret)
    identity = url_identity(url, KEY)
    for shown in (identity, normalize_url(url), redact_url(url), shown_url(url)):
        assert secret not in shown, shown
    assert normalize_url(url) == WEBHOOKS[name].format(s=REDACTED) \
        or "nested" in name or "capitals" in name
    assert url_identity(identity, KEY) == identity  # idempotent
    assert normalize_url(normalize_url(url)) == normalize_url(url)
    assert url_identity(WEBHOOKS[name].format(s=other), KEY) != identity  # two webhooks
    assert url_identity(WEBHOOKS[name].format(s=secret), KEY) == identity  # the same one
    assert secret in request_secrets(url)  # scrubbed from an echo
    for header in ("Location", "Referer", "Link", "Content-Location"):
        assert secret not in redact_header(header, url)
    assert secret not in http_identity("POST", url, b'{"text": "hi"}', "application/json", KEY)
    argv = ["curl", "-X", "POST", "-d", '{"text": "hi"}', url]
    command = command_locator(argv, "/", key=KEY)
    assert secret not in command.display and secret not in command.locator
    assert secret in command.secrets
    assert command_locator([*argv[:-1], WEBHOOKS[name].format(s=other)], "/",
                           key=KEY).locator != command.locator


def test_the_ids_around_a_webhook_secret_stay_shown() -> None:
    assert normalize_url("https://hooks.slack.com/services/T0AB/B0CD/s3cr3t") == \
        "https://hooks.slack.com/services/T0AB/B0CD/REDACTED"
    assert normalize_url("https://discord.com/api/webhooks/42/t0k3n/github?wait=1") == \
        "https://discord.com/api/webhooks/42/REDACTED/github?wait=1"
    assert normalize_url("https://api.telegram.org/bot1:AAsecret/getMe") == \
        "https://api.telegram.org/botREDACTED/getMe"


def test_a_webhook_secret_stays_out_of_error_messages() -> None:
    url = "https://hooks.slack.com:99999/services/T0/B0/" + SECRET
    with pytest.raises(InvalidURL) as raised:
        parse_http_url(url)
    assert SECRET not in str(raised.value)
    assert SECRET not in shown_url(url.replace("https://", "ftp://"))
    assert SECRET not in shown_url("hooks.slack.com/services/T0/B0/" + SECRET)  # no scheme


# --- tokens, carrier by carrier ------------------------------------------------------------

URL_CARRIERS = {
    "a query value under a plain name": "https://h.example/a?q={t}&page=2",
    "a bare query word": "https://h.example/a?{t}",
    "a path segment": "https://h.example/repos/{t}/x",
    "a path segment's end": "https://h.example/v1/{t}",
    "a nested URL's query": "https://h.example/a?next=https%3A%2F%2Fh2%2Fp%3Fq%3D{t}",
    "a path parameter under a plain name": "https://h.example/a;p={t}?x=1",
}


@pytest.mark.parametrize("carrier", list(URL_CARRIERS))
@pytest.mark.parametrize("kind", list(TOKENS))
def test_a_token_in_a_url_is_redacted_and_keyed(kind: str, carrier: str) -> None:
    token = TOKENS[kind]
    template = URL_CARRIERS[carrier]
    url = template.format(t=token)
    identity = url_identity(url, KEY)
    for shown in (identity, normalize_url(url), redact_url(url), shown_url(url)):
        assert token not in shown, shown
    assert url_identity(identity, KEY) == identity
    assert normalize_url(normalize_url(url)) == normalize_url(url)
    assert url_identity(template.format(t=_other(token)), KEY) != identity
    assert token in request_secrets(url)
    assert token not in redact_header("Location", url)


@pytest.mark.parametrize("kind", list(TOKENS))
def test_a_token_as_user_info_is_redacted(kind: str) -> None:
    token = TOKENS[kind]
    for url in (f"https://{token}@h.example/p", f"https://x-access-token:{token}@h.example/p"):
        for shown in (url_identity(url, KEY), normalize_url(url), redact_url(url),
                      shown_url(url)):
            assert token not in shown
        assert token in request_secrets(url)
        assert token not in command_locator(["git", "clone", url], "/", key=KEY).display


ARGV_CARRIERS = {
    "a bare word": ["tool", "{t}"],
    "--opt=V": ["tool", "--opt={t}"],
    "--opt V": ["tool", "--opt", "{t}"],
    "NAME=V under a plain name": ["env", "NOTE={t}", "tool"],
    "-H with a plain header": ["curl", "-H", "X-Note: {t}", "https://h.example/"],
    "a JSON body": ["curl", "-d", '{{"note": "{t}"}}', "https://h.example/"],
    "a form body": ["curl", "-d", "note={t}&q=bees", "https://h.example/"],
    "inside a sentence": ["git", "commit", "-m", "rotate {t} today"],
    "sh -c": ["sh", "-c", "echo {t} | wc -c"],
    "sh -c, in a comment": ["sh", "-c", "true # {t}"],
    "in a URL's path": ["curl", "https://h.example/{t}/x"],
}


@pytest.mark.parametrize("carrier", list(ARGV_CARRIERS))
@pytest.mark.parametrize("kind", list(TOKENS))
def test_a_token_in_a_command_line_is_redacted_and_keyed(kind: str, carrier: str) -> None:
    token = TOKENS[kind]
    argv = [word.format(t=token) for word in ARGV_CARRIERS[carrier]]
    command = command_locator(argv, "/", key=KEY)
    assert token not in command.display and token not in command.locator
    assert REDACTED in command.display
    assert token in command.secrets  # scrubbed from the output
    other = [word.format(t=_other(token)) for word in ARGV_CARRIERS[carrier]]
    assert command_locator(other, "/", key=KEY).locator != command.locator
    assert command_locator(argv, "/", key=KEY).locator == command.locator
    assert token not in command_locator(argv, "/", shell=True, key=KEY).display


@pytest.mark.parametrize("kind", list(TOKENS))
def test_a_token_in_a_header_or_body_is_redacted_and_scrubbed(kind: str) -> None:
    token = TOKENS[kind]
    for name, value in (("X-Note", token), ("X-Note", f"Bearer {token}"),
                        ("Referer", f"https://app.example/cb?q={token}"),
                        ("Link", f"</p/{token}>; rel=next"), ("User-Agent", f"bot/{token}")):
        assert token not in redact_header(name, value), (name, value)
        assert token in request_secrets("https://h.example/", [(name, value)])
    for body, content_type in (
            (json.dumps({"note": token, "q": "bees"}), "application/json"),
            (json.dumps({"a": [{"b": f"deploy with {token} now"}]}), "application/json"),
            (f"note={token}&q=bees", "application/x-www-form-urlencoded"),
            (f"q=bees&{token}", "application/x-www-form-urlencoded")):
        assert token not in redact_body(body.encode(), content_type).decode()
        assert token in request_secrets("https://h.example/", (), body.encode(), content_type)
        one = http_identity("POST", "https://h.example/", body.encode(), content_type, KEY)
        two = http_identity("POST", "https://h.example/", body.replace(token, _other(token))
                            .encode(), content_type, KEY)
        assert one == two  # a credential in a body is not identity (like `password=`)
    plain = f"hello {token} bye".encode()
    assert token in request_secrets("https://h.example/", (), plain, "text/plain")


@pytest.mark.parametrize("kind", list(TOKENS))
def test_an_echoed_token_is_scrubbed(kind: str) -> None:
    token = TOKENS[kind]
    secrets = request_secrets(f"https://h.example/a?q={token}")
    echoed = f'{{"args": {{"q": "{token}"}}, "url": "https://h.example/a?q={token}"}}'
    assert token not in scrub(echoed, secrets)


def test_the_label_of_piped_text_is_redacted() -> None:
    token = TOKENS["GitHub ghp_"]
    assert token not in redact_command_text(f"gh api --token-file x {token}")


# --- linear time ---------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "a" * 100_000, "eyJ-" * 25_000, "ghp_" * 25_000, "sk-" * 33_000, "eyJaaaaaaaa." * 8_000,
    "hooks.slack.com/services/" * 4_000, "outlook.office.com%2Fwebhook%2F" * 3_000,
    "1234567890:AA" * 7_000, "ghp%5F" * 16_000, "AKIA" * 25_000,
    " ".join(TOKENS["GitHub ghp_"][:-6] + f"{i:06d}" for i in range(2_500)),
    "hooks.slack.com/services/T0/B0/XXXXXXX " * 2_500,
])
def test_shape_redaction_is_linear(text: str) -> None:
    def cpu_ms(sample: str) -> float:
        best = float("inf")
        for _ in range(3):
            started = time.process_time()
            redact_shapes(sample, [], lambda v: REDACTED)
            best = min(best, time.process_time() - started)
        return best * 1000

    small, big = cpu_ms(text[: len(text) // 10]), cpu_ms(text)
    assert big <= 50, f"{big:.1f} ms of CPU for {len(text):,} characters"
    assert big <= 20 * max(small, 1.0), (small, big)  # a floor above timer noise


# --- private keys -----------------------------------------------------------------------

KEY_BODY = ("MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n"
            "7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFc\n"
            "zGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo9z+40RQzuVaE")
PRIVATE_KEYS = {
    "RSA": f"-----BEGIN RSA PRIVATE KEY-----\n{KEY_BODY}\n-----END RSA PRIVATE KEY-----",
    "PKCS#8": f"-----BEGIN PRIVATE KEY-----\n{KEY_BODY}\n-----END PRIVATE KEY-----",
    "OpenSSH": f"-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY}\n"
               "-----END OPENSSH PRIVATE KEY-----",
    "encrypted": "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n"
                 f"DEK-Info: AES-128-CBC,0F1E2D3C\n\n{KEY_BODY}\n-----END RSA PRIVATE KEY-----",
    "PGP": f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{KEY_BODY}\n"
           "-----END PGP PRIVATE KEY BLOCK-----",
}
_LINE = KEY_BODY.split("\n")[1]  # any line of the body is the secret too


@pytest.mark.parametrize("kind", list(PRIVATE_KEYS))
def test_a_private_key_is_redacted_wherever_it_is_carried(kind: str) -> None:
    key = PRIVATE_KEYS[kind]
    other = key.replace("MIIEow", "MIIEox")
    for body, content_type in ((json.dumps({"note": key}), "application/json"),
                               (f"note={key}", "application/x-www-form-urlencoded"),
                               (key, "text/plain")):
        assert _LINE in request_secrets("https://h.example/", (), body.encode(), content_type)
        if content_type != "text/plain":
            assert _LINE not in redact_body(body.encode(), content_type).decode()
    for make in (lambda k: ["tool", "--note", k], lambda k: ["tool", f"--note={k}"],
                 lambda k: ["sh", "-c", f"cat > id <<'EOF'\n{k}\nEOF"],
                 lambda k: ["curl", "-d", json.dumps({"note": k}), "https://h.example/"]):
        argv = make(key)
        command = command_locator(argv, "/", key=KEY)
        assert _LINE not in command.display and _LINE not in command.locator, argv
        assert "-----REDACTED-----END " in command.display  # the armour lines stay
        assert _LINE in command.secrets
        assert command_locator(make(other), "/", key=KEY).locator != command.locator
    echoed = f"you sent:\n{key}\nthanks"
    assert _LINE not in scrub(echoed, request_secrets("https://h/", (), key.encode(),
                                                      "text/plain"))


@pytest.mark.parametrize("text", [
    "-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0B\n"
    "-----END PUBLIC KEY-----", "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE\n"
    "-----END CERTIFICATE-----", "-----BEGIN RSA PRIVATE KEY-----\n-----END RSA PRIVATE KEY-----",
])
def test_public_keys_certificates_and_empty_blocks_stay(text: str) -> None:
    assert redact_shapes(text, [], lambda v: REDACTED) == text


@pytest.mark.parametrize("text", [
    "-----BEGIN RSA PRIVATE KEY-----" * 3_000 + "!-----END RSA PRIVATE KEY-----",
    "-----BEGIN RSA PRIVATE KEY-----" * 3_000 + "-----END RSA PRIVATE KEY-----",
    "-----BEGIN RSA PRIVATE KEY-----!" + "-----END " * 11_000,
    ("-----BEGIN RSA PRIVATE KEY-----" + "QUFB" * 8 + "-----END RSA PRIVATE KEY-----") * 1_100,
    "/hooks/" * 14_000, "SK " * 33_000,
])
def test_private_key_and_hook_redaction_is_linear(text: str) -> None:
    test_shape_redaction_is_linear(text)
