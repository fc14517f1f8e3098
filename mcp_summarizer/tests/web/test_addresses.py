"""Tests for mcp_summarizer.web.addresses: which IP addresses a fetch may connect to."""

from __future__ import annotations

import ipaddress

import pytest

from mcp_summarizer.web.addresses import blocked_reason, classify_address


@pytest.mark.parametrize(
    ("address", "category"),
    [
        ("93.184.216.34", None),
        ("8.8.8.8", None),
        ("2606:4700:4700::1111", None),
        ("127.0.0.1", "loopback"),
        ("127.45.6.7", "loopback"),
        ("::1", "loopback"),
        ("10.0.0.5", "private"),
        ("172.16.3.4", "private"),
        ("192.168.1.1", "private"),
        ("fd12:3456::1", "private"),
        ("100.64.0.1", "cgnat"),
        ("100.127.255.254", "cgnat"),
        ("169.254.169.254", "metadata"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("fe80::1%eth0", "link-local"),
        ("fd00:ec2::254", "metadata"),
        ("100.100.100.200", "metadata"),
        ("::ffff:169.254.169.254", "metadata"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.1.2.3", "private"),
        ("::ffff:93.184.216.34", None),
        ("64:ff9b::a9fe:a9fe", "metadata"),
        ("2002:a9fe:a9fe::1", "metadata"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("0.1.2.3", "reserved"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "reserved"),
        ("192.0.0.8", "reserved"),
        ("198.18.0.1", "reserved"),
        ("2001:db8::1", "reserved"),
    ],
)
def test_classify_address(address, category):
    assert classify_address(address) == category
    assert classify_address(ipaddress.ip_address(address.split("%")[0])) == category


@pytest.mark.parametrize(
    ("address", "blocked_default", "blocked_private"),
    [
        ("93.184.216.34", False, False),
        ("127.0.0.1", True, False),
        ("10.0.0.5", True, False),
        ("fc00::1", True, False),
        ("100.64.0.1", True, False),
        ("169.254.169.254", True, True),
        ("169.254.10.10", True, True),
        ("fd00:ec2::254", True, True),
        ("::ffff:169.254.169.254", True, True),
        ("fe80::1", True, True),
        ("224.0.0.1", True, True),
        ("0.0.0.0", True, True),
        ("240.0.0.1", True, True),
    ],
)
def test_blocked_reason_policy(address, blocked_default, blocked_private):
    assert (blocked_reason(address, allow_private=False) is not None) is blocked_default
    assert (blocked_reason(address, allow_private=True) is not None) is blocked_private
