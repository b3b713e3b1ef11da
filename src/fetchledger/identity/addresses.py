"""IP addresses as URL hosts spell them, in every spelling a resolver accepts.

``127.1``, ``0x7f.1``, ``2130706433``, ``0177.0.0.1``, ``[::ffff:127.0.0.1]``,
NAT64 ``[64:ff9b::7f00:1]``, 6to4, Teredo...: :func:`parse_ip_host` reads the
address a host names, and :func:`embedded_ipv4` the IPv4 addresses an IPv6
address carries. The policy that judges them is :mod:`fetchledger.net.policy`.
"""

from __future__ import annotations

import ipaddress
import re

from ..errors import InvalidURL

__all__ = ["IPAddress", "embedded_ipv4", "parse_ip_host"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
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


def embedded_ipv4(ip: ipaddress.IPv6Address) -> list[tuple[str, ipaddress.IPv4Address]]:
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


