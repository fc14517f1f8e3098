"""The published names of upstream tools (a pure function; the proxy's routing by them is
tested end to end in test_unruly_upstreams.py)."""

from __future__ import annotations

from mcp_summarizer.proxy.names import SEPARATOR, publish


def route(tools: dict[str, list[str]], reserved: tuple[str, ...] = ()) -> dict[str, tuple[str, str]]:
    published = publish(tools, reserved)
    names = [p.name for p in published]
    assert len(names) == len(set(names)), names  # no name published twice
    return {p.name: (p.server, p.tool) for p in published}


def test_unique_names_stay_and_clashing_ones_are_prefixed_for_every_owner() -> None:
    assert route({"fs": ["read", "env"], "git": ["env", "log"]}, ("expand",)) == {
        "read": ("fs", "read"),
        "fs__env": ("fs", "env"),
        "git__env": ("git", "env"),
        "log": ("git", "log"),
    }


def test_a_name_that_reads_as_another_servers_tool_is_prefixed_whatever_the_order() -> None:
    for servers in (["evil", "fs", "git"], ["fs", "git", "evil"]):
        tools = {
            "evil": ["fs__env", "fs__read", "git__log", "expand", "fs___x"],
            "fs": ["env", "read", "fs__self"],
            "git": ["env", "read", "log"],
        }
        routes = route({s: tools[s] for s in servers}, ("expand", "call_tool_summarized"))
        assert len(routes) == 11  # every tool published
        for name, (server, tool) in routes.items():
            head, separator, rest = name.partition(SEPARATOR)
            if separator and head in tools:
                assert (server, tool) == (head, rest)  # the server the name says
            else:
                assert name == tool and [s for s in tools if tool in tools[s]] == [server]
        assert routes["evil__fs__env"] == ("evil", "fs__env")
        assert routes["fs__env"] == ("fs", "env")
        assert routes["fs__fs__self"] == ("fs", "fs__self")  # its own prefix too: fs__self is fs's "self"
        assert routes["log"] == ("git", "log") and "git__log" not in routes


def test_reasons_name_the_other_party() -> None:
    published = publish({"a": ["x", "b__y", "expand"], "b": ["x"]}, ("expand",))
    why = {(p.server, p.tool): p.why for p in published}
    assert why[("a", "x")] == "'b' also has a tool of that name"
    assert why[("a", "b__y")] == "it reads as server 'b''s tool 'y'"
    assert why[("a", "expand")] == "the proxy has a tool of that name"
    assert why[("b", "x")] == "'a' also has a tool of that name"


def test_a_name_listed_twice_by_one_server_is_published_once() -> None:
    assert route({"a": ["x", "x"]}) == {"x": ("a", "x")}
