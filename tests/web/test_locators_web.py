"""Identity of web and HTTP sources (DESIGN §4) and redaction of secrets."""

from __future__ import annotations

import pytest

from fetchledger.errors import InvalidURL
from fetchledger.identity.secrets import is_secret_name, shown_url
from fetchledger.identity.secrets import request_secrets as secret_values
from fetchledger.identity.urls import http_locator, normalize_url, parse_http_url, redact_url


@pytest.mark.parametrize(("given", "canonical"), [
    ("HTTPS://Example.COM:443/a/../b/./c", "https://example.com/b/c"),
    ("http://example.com:80", "http://example.com/"),
    ("http://example.com:8080/x", "http://example.com:8080/x"),
    ("https://example.com/page#section-2", "https://example.com/page"),
    ("https://example.com/p?utm_source=news&utm_medium=mail&id=7&fbclid=abc&gclid=x",
     "https://example.com/p?id=7"),
    ("https://example.com/p?b=2&a=1", "https://example.com/p?b=2&a=1"),  # order kept
    ("https://example.com/p?ref=main&msclkid=1&_ga=2", "https://example.com/p?ref=main"),
    ("https://example.com/p?", "https://example.com/p"),
    ("https://example.com/a%7eb%2fc?x=%41%2f", "https://example.com/a~b%2Fc?x=A%2F"),
    ("https://EXAMPLE.com./", "https://example.com/"),
    ("http://例え.jp/パス", "http://xn--r8jz45g.jp/%E3%83%91%E3%82%B9"),
    ("http://0x7f.1:8000/", "http://127.0.0.1:8000/"),
    ("http://2130706433/", "http://127.0.0.1/"),
    ("http://[::FFFF:127.0.0.1]/", "http://[::ffff:7f00:1]/"),
    ("https://user:pass@example.com/x", "https://REDACTED@example.com/x"),
    ("https://example.com/x?api_key=123&q=1&access_token=9",
     "https://example.com/x?api_key=REDACTED&q=1&access_token=REDACTED"),
])
def test_normalized_url(given: str, canonical: str) -> None:
    assert normalize_url(given) == canonical


def test_normalizing_is_idempotent() -> None:
    for url in ("HTTPS://Example.COM:443/a/../b?utm_x=1&k=v#f", "http://u:p@h.example/?token=t"):
        once = normalize_url(url)
        assert normalize_url(once) == once


def test_requests_differing_only_in_a_secret_are_one_identity() -> None:
    assert normalize_url("https://api.example/v1?token=aaa&q=1") == \
        normalize_url("https://api.example/v1?token=bbb&q=1")
    assert http_locator("POST", "https://api.example/v1", b'{"q": 1, "password": "one"}',
                        "application/json") == \
        http_locator("POST", "https://api.example/v1", b'{"password": "two", "q": 1}',
                     "application/json")
    assert http_locator("POST", "https://api.example/v1", b"q=1&secret=a",
                        "application/x-www-form-urlencoded") == \
        http_locator("POST", "https://api.example/v1", b"q=1&secret=b",
                     "application/x-www-form-urlencoded")


def test_http_locator_names_method_url_and_body_hash() -> None:
    post = http_locator("post", "https://api.example/items?utm_source=x", b"name=lamp")
    assert post.startswith("POST https://api.example/items body:sha256=")
    assert len(post.rsplit("=", 1)[1]) == 64
    assert http_locator("DELETE", "https://api.example/items/3") == \
        "DELETE https://api.example/items/3"
    assert http_locator("POST", "https://api.example/items", b"name=lamp") != \
        http_locator("POST", "https://api.example/items", b"name=desk")


def test_redact_url_keeps_the_rest_as_given() -> None:
    assert redact_url("https://u:p@Example.com/a%7e?utm_source=x&sig=abc#frag") == \
        "https://REDACTED@example.com/a%7e?utm_source=x&sig=REDACTED"


@pytest.mark.parametrize("name", ["key", "api_key", "apiKey", "API-KEY", "access_token", "token",
                                  "client_secret", "password", "passwd", "X-Amz-Signature",
                                  "X-Amz-Credential", "sig", "session_id", "auth"])
def test_secret_parameter_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["q", "id", "page", "keyword", "monkey", "author", "passenger",
                                  "ref", "lang", "sort"])
def test_ordinary_parameter_names(name: str) -> None:
    assert not is_secret_name(name)


@pytest.mark.parametrize(("name", "secret"), [
    ("Authorization", True), ("Proxy-Authorization", True), ("Cookie", True),
    ("Set-Cookie", True), ("X-API-Key", True), ("X-Auth-Token", True), ("Api-Secret", True),
    ("Accept", False), ("Content-Type", False), ("User-Agent", False), ("Keep-Alive", False),
    ("X-Request-Id", False),
])
def test_secret_headers(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_secret_values_of_a_request() -> None:
    found = secret_values(
        "https://alice:wonder-pass@api.example/v1?api_key=key-123456&q=bees",
        [("Authorization", "Bearer tok-abcdef"), ("Cookie", "sid=sess-998877; theme=dark"),
         ("Accept", "text/html")],
        b'{"password": "hunter-22", "q": "bees"}', "application/json")
    for secret in ("wonder-pass", "key-123456", "tok-abcdef", "sess-998877", "hunter-22"):
        assert secret in found
    assert "bees" not in found and "text/html" not in found


@pytest.mark.parametrize(("bad", "why"), [
    ("ftp://example.com/x", "only http and https"),
    ("file:///etc/passwd", "only http and https"),
    ("javascript:alert(1)", "only http and https"),
    ("example.com/page", "not a URL"),
    ("http://", "no host"),
    ("http://exa mple.com/", "invalid host"),
    ("http://example.com:99999/", "invalid port"),
    ("http://1.2.3.4.5/", "invalid IPv4"),
    ("", "empty URL"),
    ("http://example.com/\nx", "control characters"),
])
def test_invalid_urls(bad: str, why: str) -> None:
    with pytest.raises(InvalidURL, match=why) as caught:
        parse_http_url(bad)
    assert caught.value.exit_code == 2
    assert "\n" not in caught.value.message


def test_error_messages_never_show_a_secret() -> None:
    with pytest.raises(InvalidURL) as caught:
        parse_http_url("http://bob:hunter22@/x?token=sekrit")
    assert "hunter22" not in caught.value.message and "sekrit" not in caught.value.message
    assert "sekrit" not in shown_url("htp:/broken?token=sekrit&x=1")
