"""The address policy (DESIGN §8): which hosts and IP addresses fetchledger connects to.

By default no connection goes to a loopback, private, link-local,
carrier-grade NAT, multicast, reserved, unspecified or cloud-metadata address,
however it is spelled: ``127.1``, ``0x7f.1``, ``2130706433``, ``0177.0.0.1``,
``[::ffff:127.0.0.1]``, NAT64 ``[64:ff9b::7f00:1]``, 6to4, Teredo... IPv6
addresses that carry an IPv4 address are judged by that address too.

This module only classifies; :mod:`fetchledger.net` applies the policy to the
address it actually connects to, on every redirect hop. ``--allow-private``
opens every class except cloud metadata; ``--allow-host NAME`` opens one
host name (or literal address) whatever it resolves to.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .errors import BlockedAddress, InvalidURL

__all__ = [
    "AddressPolicy",
    "IPAddress",
    "parse_ip_host",
    "refusal_reason",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

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
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
_TRANSLATIONS = frozenset({"IPv4-mapped", "NAT64"})
_NUMBER_PART = re.compile(r"^(?:0[xX][0-9a-fA-F]*|[0-9]+)$")


def parse_ip_host(host: str) -> IPAddress | None:
    """The IP address a URL host spells, in any spelling a resolver accepts; None for a name.

    IPv4 follows the WHATWG URL standard (what browsers and ``inet_aton`` do):
    one to four parts, each decimal, octal (leading ``0``) or hex (``0x``),
    the last part filling the remaining bytes — so ``127.1``, ``0x7f.1``,
    ``0177.0.0.1`` and ``2130706433`` are all 127.0.0.1. Raises InvalidURL for
    a host that looks numeric but is no valid address (``1.2.3.4.5``, ``256.1.1.1``).
    """
    host = host.strip()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host.split("%", 1)[0])
        except ValueError as exc:
            raise InvalidURL(f"invalid IPv6 address {host!r}") from exc
    parts = host.split(".")
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()  # a trailing dot
    if not parts or not _NUMBER_PART.match(parts[-1]):
        return None  # a host name (WHATWG: only a numeric last label makes an IPv4 host)
    if len(parts) > 4 or not all(_NUMBER_PART.match(part) for part in parts):
        raise InvalidURL(f"invalid IPv4 address {host!r}")
    numbers = [_ipv4_number(part, host) for part in parts]
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        raise InvalidURL(f"invalid IPv4 address {host!r}: a part is out of range")
    value = numbers[-1]
    for index, number in enumerate(numbers[:-1]):
        value += number << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def _ipv4_number(part: str, host: str) -> int:
    try:
        if part[:2].lower() == "0x":
            return int(part[2:] or "0", 16)
        if len(part) > 1 and part.startswith("0"):
            return int(part, 8)
        return int(part, 10)
    except ValueError as exc:  # "08" is not octal
        raise InvalidURL(f"invalid IPv4 address {host!r}") from exc


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[tuple[str, ipaddress.IPv4Address]]:
    """IPv4 addresses an IPv6 address carries, with the name of the mechanism."""
    found: list[tuple[str, ipaddress.IPv4Address]] = []
    if ip.ipv4_mapped is not None:
        found.append(("IPv4-mapped", ip.ipv4_mapped))
    if any(ip in net for net in _NAT64):
        found.append(("NAT64", ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)))
    if ip in _IPV4_COMPATIBLE and int(ip) > 1:
        found.append(("IPv4-compatible", ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)))
    if ip.sixtofour is not None:
        found.append(("6to4", ip.sixtofour))
    if ip.teredo is not None:
        server, client = ip.teredo
        found.extend((("Teredo server", server), ("Teredo client", client)))
    return found


def refusal_reason(ip: IPAddress) -> str | None:
    """Why the default policy refuses ``ip`` (``"loopback"``, ``"private"``, ...), or None."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            ip = ipaddress.IPv6Address(str(ip).split("%", 1)[0])
        embedded = _embedded_ipv4(ip)
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
