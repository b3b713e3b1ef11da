"""The address policy (DESIGN §8): which IP addresses fetchledger connects to.

By default no connection goes to a loopback, private, link-local,
carrier-grade NAT, multicast, reserved, unspecified or cloud-metadata address,
however it is spelled (:func:`fetchledger.identity.addresses.parse_ip_host`
reads every spelling). IPv6 addresses that carry an IPv4 address are judged by
that address too.

:mod:`fetchledger.net.connections` applies the policy to the address it
actually connects to, on every redirect hop. ``--allow-private`` opens every
class except cloud metadata; ``--allow-host NAME`` opens one host name (or
literal address) whatever it resolves to.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..errors import BlockedAddress
from ..identity.addresses import IPAddress, embedded_ipv4

__all__ = ["AddressPolicy", "blocked", "refusal_reason"]

# Instance-metadata services: they hand out cloud credentials, so they stay
# closed even under --allow-private (only --allow-host opens them).
_METADATA = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean, ...
    "169.254.170.2",    # AWS ECS task metadata
    "169.254.169.123",  # AWS time sync
    "fd00:ec2::254",    # AWS IMDS over IPv6
    "100.100.100.200",  # Alibaba Cloud
    "192.0.0.192",      # Oracle Cloud
    "168.63.129.16",    # Azure WireServer (a public address)
))


_CGNAT = ipaddress.ip_network("100.64.0.0/10")


_TRANSLATIONS = frozenset({"IPv4-mapped", "NAT64"})


def refusal_reason(ip: IPAddress) -> str | None:
    """Why the default policy refuses ``ip`` (``"loopback"``, ``"private"``, ...), or None."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            ip = ipaddress.IPv6Address(str(ip).split("%", 1)[0])
        embedded = embedded_ipv4(ip)
        for mechanism, inner in embedded:
            reason = refusal_reason(inner)
            if reason is not None:
                return f"{reason} ({inner} inside {mechanism})"
        if embedded and embedded[0][0] in _TRANSLATIONS and ip not in _METADATA:
            return None  # a pure translation of a public IPv4 address (DNS64, mapped)
    if ip in _METADATA:
        return "cloud-metadata"
    checks = (
        (ip.is_loopback, "loopback"),
        (ip.is_unspecified, "unspecified"),
        (isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT, "carrier-grade NAT"),
        (ip.is_link_local, "link-local"),
        (ip.is_multicast, "multicast"),  # Python 3.11 calls 224.0.0.1 global
        (isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local, "site-local"),
        (ip.is_reserved, "reserved"),
        (ip.is_private, "private"),
        (not ip.is_global, "reserved"),
    )
    return next((name for failed, name in checks if failed), None)


def _host_key(host: str) -> str:
    host = host.strip().lower().rstrip(".")
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


@dataclass(frozen=True)
class AddressPolicy:
    """The default refusal of non-public addresses, and the switches that open it."""

    allow_private: bool = False
    allow_hosts: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, allow_private: bool = False, allow_hosts: Iterable[str] = ()) -> AddressPolicy:
        return cls(allow_private, frozenset(_host_key(h) for h in allow_hosts if h.strip()))

    def host_allowed(self, host: str) -> bool:
        """True when ``--allow-host`` names this URL host (case-insensitively)."""
        return _host_key(host) in self.allow_hosts

    def refusal(self, ip: IPAddress, host: str) -> str | None:
        """Why connecting to ``ip`` for URL host ``host`` is refused, or None if allowed."""
        if self.host_allowed(host):
            return None
        reason = refusal_reason(ip)
        if reason is None or (self.allow_private and not reason.startswith("cloud-metadata")):
            return None
        return reason

    def check(self, ip: IPAddress, host: str) -> None:
        """Raise BlockedAddress when the policy refuses ``ip`` for ``host``."""
        reason = self.refusal(ip, host)
        if reason is not None:
            raise blocked(ip, host, reason)


def blocked(ip: IPAddress, host: str, reason: str) -> BlockedAddress:
    """The BlockedAddress error: it names the policy and the switch that opens it."""
    where = str(ip) if _host_key(host) == str(ip) else f"{host} ({ip})"
    if reason.startswith("cloud-metadata"):
        opener = f"only --allow-host {_host_key(host)} opens a cloud-metadata address"
    else:
        opener = (f"--allow-private (or FETCHLEDGER_ALLOW_PRIVATE=1) or "
                  f"--allow-host {_host_key(host)} opens it")
    return BlockedAddress(
        f"refused by the address policy: {where} is a {reason} address; {opener}")

