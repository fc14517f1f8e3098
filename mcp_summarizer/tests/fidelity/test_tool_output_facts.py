"""The facts tool outputs are made of: bare numbers, ids with digits, IP addresses, UUIDs,
hashes, e-mail addresses, `file:line`. Found, normalized, counted once, and seen by the
receipt when a summary drops or changes them."""

from __future__ import annotations

import pytest

from mcp_summarizer.fidelity.facts import KINDS, facts
from mcp_summarizer.fidelity.receipt import receipt

SERVERS = "\n".join(
    f"Server node-{i:03d} listens on port {20000 + i} since 2019-08-{i % 28 + 1:02d}." for i in range(1, 61)
)


def found(text: str) -> list[tuple[str, str]]:
    return [(f.kind, f.key) for f in facts(text)]


def test_sixty_server_lines_count_their_ports_and_ids() -> None:
    r = receipt(SERVERS, SERVERS)
    assert r.counts["bare_number"] == {"source": 60, "kept": 60}
    assert r.counts["id"] == {"source": 60, "kept": 60}
    assert r.counts["date"] == {"source": 28, "kept": 28}
    assert r.source_facts == r.kept_facts == 148 and r.invented == []


def test_dropping_the_ports_and_ids_shows_in_dropped() -> None:
    dates_only = "\n".join(f"A server started on 2019-08-{i % 28 + 1:02d}." for i in range(1, 61))
    r = receipt(SERVERS, dates_only)
    assert r.counts["bare_number"] == {"source": 60, "kept": 0}
    assert r.counts["id"] == {"source": 60, "kept": 0}
    assert r.kept_facts == 28 and r.source_facts == 148
    assert len(r.dropped) == 20 and {"node-001", "port 20001"} <= set(r.dropped)
    assert all(d.startswith(("node-", "port ")) for d in r.dropped)


def test_keeping_half_the_servers_keeps_half_their_ports_and_ids() -> None:
    half = "\n".join(SERVERS.split("\n")[:30])
    r = receipt(SERVERS, half)
    assert r.counts["bare_number"] == {"source": 60, "kept": 30}
    assert r.counts["id"] == {"source": 60, "kept": 30}


@pytest.mark.parametrize(
    ("text", "kind", "key"),
    [
        ("Listening on port 8080.", "bare_number", "8080"),
        ("The proxy answered 404 twice.", "bare_number", "404"),
        ("Exited with code 137", "bare_number", "137"),
        ("See line 7 of it", "bare_number", "7"),  # one digit after "line"
        ("Took 0.25 of the slot", "bare_number", "0.25"),
        ("Ticket #0042 is open", "bare_number", "42"),  # as a number: leading zeros go
        ("Server node-017 is up", "id", "node-017"),
        ("Fixed in JIRA-1234.", "id", "jira-1234"),
        ("Patched CVE-2024-12345 today", "id", "cve-2024-12345"),
        ("Raised E1234 again", "id", "e1234"),
        ("Region us-east-1 is down", "id", "us-east-1"),
        ("Host 10.0.0.1 is down", "ip", "10.0.0.1"),
        ("Reach 192.168.1.254:8443 now", "ip", "192.168.1.254:8443"),
        ("Bound to 2001:DB8:0:0::1 here", "ip", "2001:db8::1"),  # the compressed form
        ("Only ::1 answers", "ip", "::1"),
        ("Link fe80::1ff:fe23:4567:890a up", "ip", "fe80::1ff:fe23:4567:890a"),
        ("Job 123E4567-E89B-12D3-A456-426614174000 failed", "uuid", "123e4567-e89b-12d3-a456-426614174000"),
        ("Reverted a1b2c3d today", "hash", "a1b2c3d"),
        (
            "Digest 9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08.",
            "hash",
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        ),
        ("Mail John.Doe+ops@Example.COM now", "email", "john.doe+ops@example.com"),
        ("Raised at server.py:42 in main", "file_line", "server.py:42"),
        ("At src/app/Main.go:117:9, a panic", "file_line", "src/app/main.go:117:9"),
    ],
)
def test_each_new_kind_is_found_and_normalized(text: str, kind: str, key: str) -> None:
    assert (kind, key) in found(text), found(text)
    assert kind in KINDS


def test_a_bare_number_shows_the_word_that_says_what_it_is() -> None:
    texts = {f.text for f in facts("Listening on port 8080; HTTP 503 then status: 200.")}
    assert texts == {"port 8080", "HTTP 503", "status: 200"}


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("Since 2019-08-17 it runs.", ("date", "2019-08-17")),
        ("At 2026-03-01T10:00:07Z it ran.", ("date", "2026-03-01")),  # no "00:07", no "10"
        ("Needs 3.11.4 or later.", ("version", "3.11.4")),
        ("Needs v2.0.1 or later.", ("version", "2.0.1")),
        ("It is 12.5 ms long.", ("number", "12.5ms")),
        ("It costs 1,000 gold.", ("number", "1000gold")),
        ("It weighs 4,500 in all.", ("number", "4500")),
        ("Server node-017 only.", ("id", "node-017")),
        ("CVE-2024-12345 only.", ("id", "cve-2024-12345")),
        ("Host 10.0.0.1:8080 only.", ("ip", "10.0.0.1:8080")),
        ("At server.py:42 only.", ("file_line", "server.py:42")),
        ("Job 123e4567-e89b-12d3-a456-426614174000 only.", ("uuid", "123e4567-e89b-12d3-a456-426614174000")),
        ("Mail ops1@example.com only.", ("email", "ops1@example.com")),
        ("Costs $42 only.", ("number", "$42")),
    ],
)
def test_a_number_inside_a_longer_fact_is_that_fact_only(text: str, fact: tuple[str, str]) -> None:
    assert found(text) == [fact]


@pytest.mark.parametrize(
    "text",
    [
        "It was the 17th time.",  # an ordinal
        "Open 10:30 to 18:45 daily.",  # times
        "Pages 10-20 of it.",  # a range
        "Call 555-123-4567 now.",  # a phone number
        "10. Tenth step\n 11) eleventh step",  # list markers
        "Take 3 apples.",  # one digit, nothing says what it is
        "The wall was defaced by them.",  # a word of hex letters
        "Use std::vector and A::B here.",  # C++ and Perl names
        "A run 12345678901234567890123 of digits.",  # data, not a number
    ],
)
def test_what_is_not_a_fact(text: str) -> None:
    assert found(text) == [], found(text)


def test_a_host_and_its_port_are_two_facts() -> None:
    assert found("Connect to example.com:8080 or localhost:9090.") == [
        ("identifier", "example.com"),
        ("bare_number", "8080"),
        ("bare_number", "9090"),
    ]


def test_changed_numbers_and_ids_are_flagged_as_invented() -> None:
    """A port, an id, an address, a hash the source does not hold, even where the source holds
    a longer one that starts the same ("2001" in "20017", "JIRA-123" in "JIRA-1234")."""
    source = "node-017 on 10.0.0.17 listens on port 20017 (JIRA-1234, commit a1b2c3d4e5f6)."
    summary = "node-018 on 10.0.0.18 listens on port 2001 (JIRA-123, commit ffb2c3d4e5f6)."
    r = receipt(source, summary)
    assert sorted(r.invented) == sorted(["node-018", "10.0.0.18", "port 2001", "JIRA-123", "ffb2c3d4e5f6"])
    assert r.invented_keys == {
        ("id", "node-018"),
        ("ip", "10.0.0.18"),
        ("bare_number", "2001"),
        ("id", "jira-123"),
        ("hash", "ffb2c3d4e5f6"),
    }
    assert receipt(source, "node-017 listens on 20017; a1b2c3d4 was the commit.").invented == []


def test_the_meta_shape_is_the_same_with_the_new_kinds_in_counts() -> None:
    meta = receipt(SERVERS, "Servers listen.").as_meta()
    assert set(meta) == {
        "counts",
        "source_facts",
        "kept_facts",
        "invented_facts",
        "kept",
        "dropped",
        "invented",
    }
    counts = meta["counts"]
    assert isinstance(counts, dict) and set(counts) == {"bare_number", "id", "date"}


def test_a_value_ending_in_a_digit_is_not_found_inside_a_longer_one() -> None:
    """A made-up value is invented even where the source's text holds a longer one that starts
    with it, in a code span too, and a bare number even inside an address or a decimal; an
    abbreviated hash, and an id the source holds in a path, are found."""
    source = "Encodings: UTF-16 only. Host 10.180.3.4 took 0.180 s. Commit a1b2c3d4e5f6 is at /srv/node-017."
    r = receipt(source, "Use `utf-1`; it answered 180.")
    assert sorted(r.invented) == ["180", "`utf-1`"]
    assert receipt(source, "Commit `a1b2c3d4` touched node-017; use `UTF-16`.").invented == []
