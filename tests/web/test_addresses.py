"""The address policy as a pure function: every spelling, every class of address."""

from __future__ import annotations

import ipaddress

import pytest

from fetchledger.errors import BlockedAddress, InvalidURL
from fetchledger.identity.addresses import parse_ip_host
from fetchledger.net.policy import AddressPolicy, refusal_reason


@pytest.mark.parametrize("spelling", [
    "127.0.0.1", "127.1", "0x7f.1", "0x7F.0.0.1", "2130706433", "0177.0.0.1", "0177.1",
    "017700000001", "0x7f000001", "127.0.0.1.", "[::ffff:127.0.0.1]", "::ffff:7f00:1",
])
def test_every_spelling_of_loopback_is_127_0_0_1(spelling: str) -> None:
    ip = parse_ip_host(spelling)
    assert ip is not None
    assert refusal_reason(ip) is not None
    assert refusal_reason(ip).startswith("loopback")  # type: ignore[union-attr]


@pytest.mark.parametrize("host", ["example.com", "localhost", "a.b-c.example", "xn--r8jz45g.jp",
                                  "1.example", "example.123a"])
def test_host_names_are_not_addresses(host: str) -> None:
    assert parse_ip_host(host) is None


@pytest.mark.parametrize("host", ["1.2.3.4.5", "256.1.1.1", "08.1.1.1", "1.2.3.0x100",
                                  "4294967296", "[::1", "[fe80::zz]"])
def test_numeric_hosts_that_are_no_address_are_invalid(host: str) -> None:
    with pytest.raises(InvalidURL):
        parse_ip_host(host)


@pytest.mark.parametrize(("address", "reason"), [
    ("127.0.0.1", "loopback"), ("127.200.1.9", "loopback"), ("::1", "loopback"),
    ("10.0.0.5", "private"), ("172.16.0.1", "private"), ("192.168.1.1", "private"),
    ("fc00::1", "private"), ("fd12:3456::1", "private"),
    ("169.254.1.1", "link-local"), ("fe80::1", "link-local"),
    ("100.64.0.1", "carrier-grade NAT"), ("100.127.255.254", "carrier-grade NAT"),
    ("224.0.0.1", "multicast"), ("239.255.255.250", "multicast"), ("ff02::1", "multicast"),
    ("0.0.0.0", "unspecified"), ("::", "unspecified"),
    ("240.0.0.1", "reserved"), ("255.255.255.255", "reserved"), ("fec0::1", "site-local"),
    ("169.254.169.254", "cloud-metadata"), ("fd00:ec2::254", "cloud-metadata"),
    ("100.100.100.200", "cloud-metadata"), ("168.63.129.16", "cloud-metadata"),
    ("192.0.0.192", "cloud-metadata"),
])
def test_refused_classes(address: str, reason: str) -> None:
    assert refusal_reason(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize(("address", "inner"), [
    ("::ffff:10.0.0.1", "private (10.0.0.1 inside IPv4-mapped)"),
    ("64:ff9b::7f00:1", "loopback (127.0.0.1 inside NAT64)"),
    ("64:ff9b::a9fe:a9fe", "cloud-metadata (169.254.169.254 inside NAT64)"),
    ("2002:c0a8:0101::1", "private (192.168.1.1 inside 6to4)"),
    ("2002:7f00:1::", "loopback (127.0.0.1 inside 6to4)"),
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback (127.0.0.1 inside Teredo client)"),
    ("::7f00:1", "loopback (127.0.0.1 inside IPv4-compatible)"),
])
def test_ipv6_wrapping_an_ipv4_address_is_judged_by_it(address: str, inner: str) -> None:
    assert refusal_reason(ipaddress.ip_address(address)) == inner


@pytest.mark.parametrize("address", ["93.184.216.34", "1.1.1.1", "8.8.8.8",
                                     "2606:4700:4700::1111", "64:ff9b::5db8:d822",
                                     "2002:5db8:d822::1"])
def test_public_addresses_pass(address: str) -> None:
    assert refusal_reason(ipaddress.ip_address(address)) is None


def test_allow_private_opens_everything_but_cloud_metadata() -> None:
    policy = AddressPolicy.of(allow_private=True)
    for address in ("127.0.0.1", "10.0.0.5", "fe80::1", "100.64.0.1", "::ffff:192.168.0.1"):
        assert policy.refusal(ipaddress.ip_address(address), "host") is None
    assert policy.refusal(ipaddress.ip_address("169.254.169.254"), "host") == "cloud-metadata"


def test_allow_host_matches_the_host_name_case_insensitively() -> None:
    policy = AddressPolicy.of(allow_hosts=["Intranet.Example.", "169.254.169.254"])
    private = ipaddress.ip_address("10.0.0.5")
    assert policy.refusal(private, "intranet.example") is None
    assert policy.refusal(private, "INTRANET.example.") is None
    assert policy.refusal(private, "other.example") == "private"
    metadata = ipaddress.ip_address("169.254.169.254")
    assert policy.refusal(metadata, "169.254.169.254") is None


def test_a_refusal_names_the_policy_and_the_switch() -> None:
    with pytest.raises(BlockedAddress) as caught:
        AddressPolicy().check(ipaddress.ip_address("10.0.0.5"), "intranet.example")
    message = caught.value.message
    assert caught.value.status == "blocked_address"
    assert "address policy" in message and "private" in message
    assert "--allow-private" in message and "--allow-host intranet.example" in message
    assert "FETCHLEDGER_ALLOW_PRIVATE=1" in message
    with pytest.raises(BlockedAddress) as metadata:
        AddressPolicy.of(allow_private=True).check(ipaddress.ip_address("169.254.169.254"), "m")
    assert "--allow-host m" in metadata.value.message
    assert "--allow-private" not in metadata.value.message
