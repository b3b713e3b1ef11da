"""robots.txt, honoured on request (``fetch --robots``; batch turns it on by default).

Rules follow RFC 9309 (parsed by Protego: longest match wins, ``*`` and
``$`` patterns), for the product token ``fetchledger``. One robots.txt per
origin (scheme, host, port) is fetched through the same HTTP client — so it
obeys the same address policy, limits and deadline — and cached for a day.

- 2xx: the rules apply (only the first 500 KiB are parsed, as RFC 9309 allows).
- 4xx (none there, forbidden...): everything is allowed.
- 5xx: the site is treated as disallowed (RFC 9309 §2.3.1.4); cached briefly.
- Network failures, blocked addresses and timeouts are raised as they are:
  the page itself would fail the same way, and that status is the honest one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx
from protego import Protego

from ..errors import HTTPStatusError, RobotsDenied
from ..hints import Hint
from ..identity.urls import parse_http_url, redact_url
from .client import AsyncHTTPClient, HTTPClient, HTTPRequest, HTTPResponse

__all__ = ["ROBOTS_TOKEN", "RobotsCache"]

ROBOTS_TOKEN = "fetchledger"
MAX_ROBOTS_BYTES = 500 * 1024
TTL = 24 * 3600.0
UNREACHABLE_TTL = 60.0


@dataclass(frozen=True)
class _Rules:
    parser: Protego | None  # None: everything allowed
    disallow_all: str | None  # the reason, when the whole site is off limits
    expires: float


class RobotsCache:
    """robots.txt rules per origin; thread-safe, shared by sync and async callers."""

    def __init__(self, token: str = ROBOTS_TOKEN) -> None:
        self.token = token
        self._rules: dict[str, _Rules] = {}
        self._lock = threading.Lock()

    @staticmethod
    def robots_url(url: str | httpx.URL) -> str:
        parsed = url if isinstance(url, httpx.URL) else parse_http_url(url)
        return str(parsed.copy_with(userinfo=b"", path="/robots.txt", query=None,
                                    fragment=None))

    def check(self, url: str, client: HTTPClient) -> None:
        """Raise RobotsDenied when robots.txt disallows ``url`` for fetchledger."""
        key = self.robots_url(url)
        rules = self._cached(key)
        if rules is None:
            rules = self._store(key, self._rules_from(key, lambda: client.send(
                HTTPRequest(key, headers=(("Accept", "text/plain, */*;q=0.1"),)))))
        self._judge(url, rules)

    async def check_async(self, url: str, client: AsyncHTTPClient) -> None:
        key = self.robots_url(url)
        rules = self._cached(key)
        if rules is None:
            try:
                response: HTTPResponse | HTTPStatusError = await client.send(
                    HTTPRequest(key, headers=(("Accept", "text/plain, */*;q=0.1"),)))
            except HTTPStatusError as error:
                response = error
            rules = self._store(key, self._rules_from(key, lambda: _unwrap(response)))
        self._judge(url, rules)

    def _cached(self, key: str) -> _Rules | None:
        with self._lock:
            rules = self._rules.get(key)
        return rules if rules is not None and rules.expires > time.monotonic() else None

    def _store(self, key: str, rules: _Rules) -> _Rules:
        with self._lock:
            self._rules[key] = rules
        return rules

    def _rules_from(self, key: str, fetch: Callable[[], HTTPResponse]) -> _Rules:
        now = time.monotonic()
        try:
            response = fetch()
        except HTTPStatusError as error:
            status = error.http_status or 0
            if 400 <= status < 500:
                return _Rules(None, None, now + TTL)
            if status >= 500:
                return _Rules(None, f"its robots.txt is unreachable (HTTP {status}), and "
                                    f"RFC 9309 then treats the whole site as disallowed",
                              now + UNREACHABLE_TTL)
            return _Rules(None, None, now + TTL)  # a redirect we could not follow
        body = response.content[:MAX_ROBOTS_BYTES].decode("utf-8", "replace")
        return _Rules(Protego.parse(body), None, now + TTL)

    def _judge(self, url: str, rules: _Rules) -> None:
        shown = redact_url(url)
        host = parse_http_url(url).host
        if rules.disallow_all:
            raise RobotsDenied(f"{host} is off limits: {rules.disallow_all}",
                               hint=Hint("{no_robots}"))
        if rules.parser is not None and not rules.parser.can_fetch(str(url), self.token):
            raise RobotsDenied(f"robots.txt of {host} disallows {shown} for {self.token}",
                               hint=Hint("{no_robots}"))


def _unwrap(response: HTTPResponse | HTTPStatusError) -> HTTPResponse:
    if isinstance(response, HTTPStatusError):
        raise response
    return response
