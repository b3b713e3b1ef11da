"""Per-host async clients for concurrent callers (batch).

One pool for every host would cost a scan of all its connections on every
request, so each host gets a client of its own: a pool of a few connections,
kept while the host has work and closed after. They share one TLS context
(building one loads the CA bundle, about 20 ms) and one address policy.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterable

import httpx

from ..config import Limits
from .client import AsyncHTTPClient
from .connections import async_transport
from .policy import AddressPolicy

__all__ = ["HostClients"]


class HostClients:
    """An :class:`AsyncHTTPClient` per host key (host name + port), made on demand."""

    def __init__(self, limits: Limits, *, allow_private: bool = False,
                 allow_hosts: Iterable[str] = (), connections: int = 4) -> None:
        self.limits = limits
        self.allow_private = allow_private
        self.allow_hosts = tuple(allow_hosts)
        self.connections = connections
        self._policy = AddressPolicy.of(allow_private, self.allow_hosts)
        self._tls: ssl.SSLContext | None = None
        self._clients: dict[str, AsyncHTTPClient] = {}

    def get(self, key: str) -> AsyncHTTPClient:
        """The host's client, made on first use."""
        client = self._clients.get(key)
        if client is None:
            if self._tls is None:
                self._tls = httpx.create_ssl_context()
            client = self._clients[key] = AsyncHTTPClient(
                self.limits, allow_private=self.allow_private, allow_hosts=self.allow_hosts,
                transport=async_transport(self._policy, None,
                                          max_connections=self.connections,
                                          max_keepalive=self.connections,
                                          ssl_context=self._tls))
        return client

    async def close(self, key: str) -> None:
        """Close the host's client (its connections), if it has one."""
        client = self._clients.pop(key, None)
        if client is not None:
            await client.aclose()

    async def aclose(self) -> None:
        """Close every host's client."""
        for key in list(self._clients):
            await self.close(key)
