"""The session id that carries the client's name: it reads back as made, is a valid header
value of bounded size, is new each time, and anything else reads as no name."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from mcp_summarizer.clients.session_id import MAX_NAME_BYTES, make, name_in

# The spec's session id: visible ASCII only (0x21-0x7E).
VISIBLE = re.compile(r"[\x21-\x7e]+")


@given(st.text(min_size=1, max_size=400).filter(str.strip))
def test_a_name_reads_back_cut_to_its_first_bytes(name: str) -> None:
    sid = make(name)
    assert VISIBLE.fullmatch(sid) and len(sid) <= 3 + 32 + 1 + 172
    read = name_in(sid)
    kept = name.encode("utf-8", "replace")[:MAX_NAME_BYTES].decode("utf-8", "ignore")
    assert read == (kept if kept.strip() else None)


def test_the_four_clients_names_whole_and_each_id_new() -> None:
    for name in ["claude-code", "codex-mcp-client", "github-copilot-developer", "opencode"]:
        assert name_in(make(name)) == name
    assert make("opencode") != make("opencode")


@given(st.text(max_size=300))
def test_anything_else_reads_as_no_name_without_failing(value: str) -> None:
    read = name_in(value)
    assert read is None or value.startswith("v1.")


def test_not_ours() -> None:
    for value in [
        None,
        "",
        "v1",
        "v1..",
        "V1." + "0" * 32 + ".b3BlbmNvZGU",
        "v1." + "0" * 32 + ".b3BlbmNvZGU=",
        "v1." + "g" * 32 + ".b3BlbmNvZGU",
        " v1." + "0" * 32 + ".b3BlbmNvZGU",
    ]:
        assert name_in(value) is None, value
    assert name_in("v1." + "0" * 32 + ".b3BlbmNvZGU") == "opencode"
