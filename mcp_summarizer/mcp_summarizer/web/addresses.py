"""Which IP addresses a fetch may connect to: public ones, and private ones when allowed.

Pure :mod:`ipaddress` logic, no network access.  Cloud metadata endpoints, link-local,
multicast, unspecified and reserved addresses are always refused; loopback, private and CGNAT
addresses only unless ``allow_private``.  IPv4 addresses embedded in IPv6 (mapped, NAT64,
6to4) are judged as the IPv4 address they carry.
"""

from __future__ import annotations

import ipaddress

from mcp_summarizer.errors import BlockedAddressError

__all__ = ["IPAddress", "blocked_reason", "check_address", "classify_address", "ip_literal"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_net = ipaddress.ip_network

# Cloud metadata endpoints. Always refused, even with allow_private=True.
# 169.254.0.0/16 is link-local anyway; the others sit in otherwise "allowable" ranges.
METADATA_NETWORKS = (
    _net("169.254.169.254/32"),  # AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle...
    _net("fd00:ec2::254/128"),  # AWS IMDS over IPv6
    _net("100.100.100.200/32"),  # Alibaba Cloud (inside CGNAT space)
)
CGNAT_NETWORK = _net("100.64.0.0/10")
PRIVATE_NETWORKS = (
    _net("10.0.0.0/8"),
    _net("172.16.0.0/12"),
    _net("192.168.0.0/16"),
    _net("fc00::/7"),  # unique local addresses
    _net("fec0::/10"),  # deprecated site-local
)
# Special-purpose ranges that Python 3.11's is_global misreports (or that we refuse anyway).
SPECIAL_NETWORKS = (
    _net("0.0.0.0/8"),  # "this network"; 0.0.0.0 reaches localhost on Linux
    _net("192.0.0.0/24"),  # IETF protocol assignments (3.11 says 192.0.0.8 is global)
    _net("192.0.2.0/24"),
    _net("198.18.0.0/15"),
    _net("198.51.100.0/24"),
    _net("203.0.113.0/24"),
    _net("240.0.0.0/4"),  # reserved, includes 255.255.255.255
    _net("100::/64"),  # discard-only
    _net("2001:db8::/32"),  # documentation
)
NAT64_NETWORK = _net("64:ff9b::/96")

# Categories that allow_private=True lets through. Everything else that is not public stays
# refused: link-local, metadata, multicast, unspecified, reserved/special-purpose.
PRIVATE_CATEGORIES = frozenset({"loopback", "private", "cgnat"})


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for (mapped, NAT64, 6to4), if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in NAT64_NETWORK:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.sixtofour is not None:
        return ip.sixtofour
    return None


def classify_address(ip: IPAddress | str) -> str | None:
    """Return the category of a non-public address, or None for a public (global) one.

    Categories: "metadata", "link-local", "unspecified", "loopback", "multicast", "cgnat",
    "private", "reserved". IPv4 addresses embedded in IPv6 (``::ffff:a.b.c.d``, NAT64
    ``64:ff9b::/96``, 6to4 ``2002::/16``) are classified as the IPv4 address they carry.
    """
    if isinstance(ip, str):
        ip = ipaddress.ip_address(ip.strip("[]"))
    if isinstance(ip, ipaddress.IPv6Address):
        if any(ip in net for net in METADATA_NETWORKS if net.version == 6):
            return "metadata"
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            return classify_address(embedded)
        if ip.scope_id is not None:
            ip = ipaddress.IPv6Address(str(ip).split("%", 1)[0])
    if any(ip in net for net in METADATA_NETWORKS if net.version == ip.version):
        return "metadata"
    if ip.is_link_local:
        return "link-local"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_multicast:
        return "multicast"
    if ip.version == 4 and ip in CGNAT_NETWORK:
        return "cgnat"
    if any(ip in net for net in PRIVATE_NETWORKS if net.version == ip.version):
        return "private"
    if any(ip in net for net in SPECIAL_NETWORKS if net.version == ip.version):
        return "reserved"
    if ip.is_reserved or ip.is_private or not ip.is_global:
        return "reserved"
    return None


def blocked_reason(ip: IPAddress | str, allow_private: bool) -> str | None:
    """Why connecting to ``ip`` is refused under the given policy, or None if allowed."""
    category = classify_address(ip)
    if category is None or (allow_private and category in PRIVATE_CATEGORIES):
        return None
    return category


def ip_literal(host: str) -> IPAddress | None:
    """The address ``host`` spells (``[::1]`` too), or None for a name."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def check_address(host: str, ip: IPAddress, allow_private: bool) -> None:
    """Raise :class:`BlockedAddressError` naming why ``host`` at ``ip`` is refused, if it is."""
    reason = blocked_reason(ip, allow_private)
    if reason is not None:
        hint = "" if reason not in PRIVATE_CATEGORIES else "; FETCH_ALLOW_PRIVATE=true allows it"
        raise BlockedAddressError(f"refusing to connect to {host!r}: address {ip} is {reason}{hint}")
