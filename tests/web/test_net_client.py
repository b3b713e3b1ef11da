"""The HTTP client against a real loopback server: redirects, codings, deadlines, caps."""

from __future__ import annotations

import asyncio
import json
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from fetchledger.config import Limits
from fetchledger.errors import (
    CorruptContent,
    HTTPStatusError,
    NetworkError,
    RetrievalTimeout,
    TooLarge,
    UnsupportedType,
)
from fetchledger.net.client import USER_AGENT, AsyncHTTPClient, HTTPClient, HTTPRequest

from .webserver import LoopbackServer, self_signed, site_page

ARTICLE = site_page("article.html").encode()


@pytest.fixture
def client() -> Iterator[HTTPClient]:
    with HTTPClient(allow_private=True) as opened:
        yield opened


def limited(**limits: float) -> HTTPClient:
    return HTTPClient(Limits(**limits), allow_private=True)  # type: ignore[arg-type]


@pytest.mark.parametrize("path", ["/gzip", "/deflate", "/raw-deflate", "/br", "/gzip-br"])
def test_content_codings_are_decoded(web: LoopbackServer, client: HTTPClient, path: str) -> None:
    response = client.get(web.url(path))
    assert response.content == ARTICLE
    assert response.received < len(ARTICLE)
    assert "gzip" in web.hits[-1].headers["Accept-Encoding"]
    assert "br" in web.hits[-1].headers["Accept-Encoding"]


def test_unknown_coding_is_unsupported(web: LoopbackServer, client: HTTPClient) -> None:
    with pytest.raises(UnsupportedType, match=r"zstd"):
        client.get(web.url("/zstd"))


def test_chunked_body(web: LoopbackServer, client: HTTPClient) -> None:
    response = client.get(web.url("/chunked"))
    assert response.content == site_page("news.html").encode()


def test_honest_user_agent(web: LoopbackServer, client: HTTPClient) -> None:
    echoed = json.loads(client.get(web.url("/echo")).content)
    assert echoed["headers"]["User-Agent"] == USER_AGENT
    assert USER_AGENT.startswith("fetchledger/")


def test_redirect_chain_is_followed_and_recorded(web: LoopbackServer,
                                                 client: HTTPClient) -> None:
    response = client.get(web.url("/redirect/3"))
    assert response.content == ARTICLE
    assert response.url == web.url("/pages/article")
    assert response.redirects == tuple(web.url(f"/redirect/{n}") for n in (3, 2, 1))


def test_redirect_limit(web: LoopbackServer) -> None:
    with limited(max_redirects=2) as client:
        with pytest.raises(HTTPStatusError, match=r"more than 2 redirects"):
            client.get(web.url("/redirect/3"))
        assert client.get(web.url("/redirect/2")).status == 200


def test_redirect_loop_is_an_http_error_naming_the_loop(web: LoopbackServer,
                                                        client: HTTPClient) -> None:
    hits = len(web.hits)
    with pytest.raises(HTTPStatusError, match=r"loop") as caught:
        client.get(web.url("/loop/a"))
    assert caught.value.status == "http_error"
    assert len(web.hits) - hits == 11  # the request and ten redirects, then it stops


def test_unfollowed_redirect_names_its_location(web: LoopbackServer, client: HTTPClient) -> None:
    with pytest.raises(HTTPStatusError) as caught:
        client.send(HTTPRequest(web.url("/redirect/1"), follow_redirects=False))
    assert caught.value.http_status == 302
    assert web.url("/pages/article") in caught.value.message


@pytest.mark.parametrize(("path", "why"), [
    ("/no-location", "without a Location"),
    ("/redirect-to?url=http://[::1", "malformed Location"),
    ("/redirect-to?url=http://exa mple.com/", "malformed Location"),
])
def test_bad_redirects_are_http_errors(web: LoopbackServer, client: HTTPClient, path: str,
                                       why: str) -> None:
    with pytest.raises(HTTPStatusError, match=why):
        client.get(web.url(path))


def test_cookies_set_during_redirects_are_carried(web: LoopbackServer,
                                                  client: HTTPClient) -> None:
    response = client.get(web.url("/set-cookie"))
    assert b"lighthouse" in response.content
    # and forgotten afterwards: the next request starts without them
    with pytest.raises(HTTPStatusError, match=r"redirects"):
        client.send(HTTPRequest(web.url("/needs-cookie"), follow_redirects=False))


def test_post_becomes_get_after_303_and_302(web: LoopbackServer, client: HTTPClient) -> None:
    for status in (302, 303):
        response = client.send(HTTPRequest(
            web.url(f"/redirect-to?status={status}&url=/echo"), "POST",
            (("Content-Type", "text/plain"),), b"payload"))
        echoed = json.loads(response.content)
        assert echoed["method"] == "GET" and echoed["body"] == ""
        assert "Content-Type" not in echoed["headers"]


def test_307_keeps_method_and_body(web: LoopbackServer, client: HTTPClient) -> None:
    response = client.send(HTTPRequest(web.url("/redirect-to?status=307&url=/echo"), "POST",
                                       (("Content-Type", "text/plain"),), b"payload"))
    echoed = json.loads(response.content)
    assert (echoed["method"], echoed["body"]) == ("POST", "payload")


def test_credentials_are_dropped_when_a_redirect_changes_origin(web: LoopbackServer,
                                                                dns: object) -> None:
    secret = (("Authorization", "Bearer tok-123456"), ("X-Api-Key", "k-123456"),
              ("X-Trace", "7"))
    with HTTPClient(allow_private=True) as client:
        same = json.loads(client.send(HTTPRequest(
            web.url("/redirect-to?url=/echo"), headers=secret)).content)
        other = json.loads(client.send(HTTPRequest(
            web.url(f"/redirect-to?url=http://localhost:{web.port}/echo"),
            headers=secret)).content)
    assert same["headers"]["Authorization"] == "Bearer tok-123456"
    assert "Authorization" not in other["headers"] and "X-Api-Key" not in other["headers"]
    assert other["headers"]["X-Trace"] == "7"


def test_user_info_becomes_basic_auth_and_leaves_the_url(web: LoopbackServer,
                                                         client: HTTPClient) -> None:
    url = web.url("/echo").replace("http://", "http://alice:wonder%40land@")
    response = client.get(url)
    echoed = json.loads(response.content)
    assert echoed["headers"]["Authorization"] == "Basic YWxpY2U6d29uZGVyQGxhbmQ="
    assert "alice" not in response.url


def test_http_errors_carry_the_status(web: LoopbackServer, client: HTTPClient) -> None:
    for code in (400, 401, 403, 404, 410, 429, 500, 503):
        with pytest.raises(HTTPStatusError) as caught:
            client.get(web.url(f"/status/{code}"))
        assert caught.value.http_status == code and f"HTTP {code}" in caught.value.message


def test_head_has_no_body(web: LoopbackServer, client: HTTPClient) -> None:
    response = client.send(HTTPRequest(web.url("/pages/article"), "HEAD"))
    assert response.status == 200 and response.content == b""
    assert web.hits[-1].method == "HEAD"


def test_one_deadline_for_a_stalled_body(web: LoopbackServer) -> None:
    started = time.monotonic()
    with limited(total_timeout=0.6) as client, pytest.raises(RetrievalTimeout,
                                                              match=r"0.6 s"):
        client.get(web.url("/stall"))
    assert time.monotonic() - started < 2.0


def test_one_deadline_when_no_headers_come(web: LoopbackServer) -> None:
    started = time.monotonic()
    with limited(total_timeout=0.6) as client, pytest.raises(RetrievalTimeout):
        client.get(web.url("/stall-headers"))
    assert time.monotonic() - started < 2.0


def test_a_slow_drip_cannot_outlive_the_deadline(web: LoopbackServer) -> None:
    """Each piece arrives well within any read timeout; the whole still must not."""
    started = time.monotonic()
    with limited(total_timeout=0.5) as client, pytest.raises(RetrievalTimeout):
        client.get(web.url("/slow?delay=0.05"))  # 15 pieces: 0.75 s in all
    assert time.monotonic() - started < 1.5
    with limited(total_timeout=5) as client:
        assert client.get(web.url("/slow?delay=0.01")).content == ARTICLE


def test_the_deadline_spans_redirects(web: LoopbackServer) -> None:
    with limited(total_timeout=0.5) as client, pytest.raises(RetrievalTimeout):
        client.get(web.url("/redirect-to?url=/slow%3Fdelay%3D0.05"))


def test_per_request_timeout_overrides_the_limit(web: LoopbackServer,
                                                 client: HTTPClient) -> None:
    with pytest.raises(RetrievalTimeout, match=r"0.3 s"):
        client.send(HTTPRequest(web.url("/stall"), total_timeout=0.3))


def test_body_cap_as_received(web: LoopbackServer) -> None:
    with limited(max_body_bytes=1_000_000) as client:
        with pytest.raises(TooLarge, match=r"1,000,000 bytes as received"):
            client.get(web.url("/huge?bytes=3000000"))
        assert len(client.get(web.url("/huge?bytes=200000")).content) >= 200_000


def test_announced_length_over_the_cap_stops_before_reading(web: LoopbackServer,
                                                             client: HTTPClient) -> None:
    started = time.monotonic()
    with pytest.raises(TooLarge, match=r"announces 10,000,000,000 bytes"):
        client.get(web.url("/announce-huge"))
    assert time.monotonic() - started < 1.0


@pytest.mark.parametrize("kind", ["gzip", "gzip-gzip", "deflate", "br"])
def test_decompression_bombs_stop_at_the_cap_with_memory_bounded(web: LoopbackServer,
                                                                 kind: str) -> None:
    from .webserver import bomb

    bomb(kind)  # built before measuring
    with limited(max_decoded_bytes=4_000_000) as client:
        tracemalloc.start()
        try:
            with pytest.raises(TooLarge, match=r"decodes to over 4,000,000 bytes"):
                client.get(web.url(f"/bomb/{kind}"))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 16_000_000, f"peak {peak:,} bytes while decoding a 1 GiB bomb"


def test_default_caps_hold_a_bomb_too(web: LoopbackServer, client: HTTPClient) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(TooLarge, match=r"50,000,000"):
            client.get(web.url("/bomb/gzip-gzip"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 80_000_000


def test_a_damaged_compressed_body_is_corrupt(web: LoopbackServer, client: HTTPClient) -> None:
    from .webserver import Reply

    web.replies["mutable"] = Reply(200, {"Content-Type": "text/html",
                                         "Content-Encoding": "gzip"}, b"\x1f\x8b\x08garbage")
    with pytest.raises(CorruptContent):
        client.get(web.url("/mutable"))


def test_connection_failures(web: LoopbackServer, client: HTTPClient) -> None:
    with pytest.raises(NetworkError, match=r"reset|broke off|failed"):
        client.get(web.url("/reset"))
    with pytest.raises(NetworkError, match=r"cannot connect to 127.0.0.1:9"):
        client.get("http://127.0.0.1:9/")


def test_the_async_client_behaves_the_same(web: LoopbackServer) -> None:
    async def scenario() -> None:
        async with AsyncHTTPClient(Limits(total_timeout=0.6, max_decoded_bytes=3_000_000),
                                   allow_private=True) as client:
            response = await client.get(web.url("/redirect/2"))
            assert response.content == ARTICLE and len(response.redirects) == 2
            assert (await client.get(web.url("/br"))).content == ARTICLE
            many = await asyncio.gather(*(client.get(web.url("/gzip")) for _ in range(8)))
            assert all(r.content == ARTICLE for r in many)
            with pytest.raises(RetrievalTimeout):
                await client.get(web.url("/stall"))
            with pytest.raises(RetrievalTimeout):
                await client.get(web.url("/slow?delay=0.05"))
            with pytest.raises(TooLarge):
                await client.get(web.url("/bomb/gzip-gzip"))
            with pytest.raises(HTTPStatusError, match=r"loop"):
                await client.get(web.url("/loop/a"))
            with pytest.raises(HTTPStatusError, match=r"not followed"):
                await client.send(HTTPRequest(web.url("/redirect/1"), follow_redirects=False))
            with pytest.raises(NetworkError):
                await client.get("http://127.0.0.1:9/")

    asyncio.run(scenario())


def test_tls_checks_certificates_against_the_host_name(tmp_path: Path, dns: object,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The guarded backend connects to the judged address but verifies TLS for the name."""
    certificate, key = self_signed(tmp_path)
    server = LoopbackServer(tls=(certificate, key)).start()
    try:
        url = f"https://localhost:{server.port}/pages/article"
        with HTTPClient(allow_private=True) as client, \
                pytest.raises(NetworkError, match=r"certificate"):
            client.get(url)  # not trusted: refused, as it must be
        monkeypatch.setenv("SSL_CERT_FILE", str(certificate))
        with HTTPClient(allow_private=True) as client:
            assert client.get(url).content == ARTICLE
        with HTTPClient(allow_hosts=["localhost"]) as client:
            assert client.get(url).status == 200
    finally:
        server.stop()
