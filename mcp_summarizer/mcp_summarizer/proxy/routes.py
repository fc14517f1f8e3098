"""The proxy's published tools: the name each upstream tool is published under (`proxy.names`),
the route from that name to its server, and the listing every client reads.

The listing is made once each time an upstream lists its tools (at start, after a restart),
not for each client's tools/list; and it is kept under `LISTING_BYTES`: the MCP Python SDK's
client refuses a server-sent event over 1 MiB, so a larger listing leaves that client with no
tools at all.  When the upstreams' tools would be more, each gets a fair share (what a
smaller one leaves goes to the others) and keeps its first tools within it; each upstream
that lost tools so is named in a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import mcp_types as types

from mcp_summarizer.proxy.listing import MAX_LISTING_BYTES, MAX_NAME
from mcp_summarizer.proxy.names import Published, publish
from mcp_summarizer.proxy.tools import published_tool

__all__ = ["LISTING_BYTES", "Routed", "fair_shares", "route"]

logger = logging.getLogger("mcp_summarizer")

LISTING_BYTES = MAX_LISTING_BYTES  # the whole listing, the proxy's own tools included


class _Server(Protocol):
    @property
    def name(self) -> str: ...

    tools: list[types.Tool]


S = TypeVar("S", bound=_Server)


@dataclass(frozen=True, slots=True)
class Routed(Generic[S]):
    routes: dict[str, tuple[S, types.Tool]]  # published name -> (its server, its own tool)
    listing: list[types.Tool]  # as clients read it: the proxy's own tools, then the routes'


def route(
    servers: Sequence[S], own: list[types.Tool], inline: dict[str, Any], told: set[Published]
) -> Routed[S]:
    """The routes and the listing of ``servers``' tools beside ``own``; what is renamed or
    left out is logged once (``told`` remembers it across calls)."""
    tools = {(s.name, t.name): (s, t) for s in reversed(servers) for t in reversed(s.tools)}
    published: list[tuple[Published, types.Tool]] = []
    for name in publish({s.name: [t.name for t in s.tools] for s in servers}, [t.name for t in own]):
        long = len(name.name) > MAX_NAME  # prefixed, it is over what MCP allows: left out
        if name.why and name not in told:
            told.add(name)
            reason = (
                f"{name.why}; {name.name!r} is over the {MAX_NAME} characters MCP allows"
                if long
                else name.why
            )
            logger.warning(
                "proxy_tool_left_out" if long else "proxy_tool_renamed",
                extra={"server": name.server, "tool": name.tool, "published": name.name, "reason": reason},
            )
        if not long:
            published.append((name, published_tool(name.name, tools[name.server, name.tool][1], inline)))
    room = LISTING_BYTES - sum(_size(t) for t in own)
    sizes = [_size(tool) for _, tool in published]
    owners = [name.server for name, _ in published]
    shares = fair_shares(_totals(owners, sizes), room)
    used: dict[str, int] = {}
    left: dict[str, int] = {}
    routes: dict[str, tuple[S, types.Tool]] = {}
    listing = list(own)
    for (name, tool), size in zip(published, sizes, strict=True):
        if left.get(name.server) or used.get(name.server, 0) + size > shares[name.server]:
            left[name.server] = left.get(name.server, 0) + 1  # and every one after it
            continue
        used[name.server] = used.get(name.server, 0) + size
        routes[name.name] = tools[name.server, name.tool]
        listing.append(tool)
    for server, count in left.items():
        logger.warning(
            "proxy_tools_left_out",
            extra={
                "server": server,
                "past_limits": count,
                "reason": f"the proxy's tool listing is kept under {LISTING_BYTES // 1024} KB "
                "(larger ones are refused by MCP clients); this server's share was "
                f"{shares[server]:,} bytes",
            },
        )
    return Routed(routes, listing)


def fair_shares(sizes: Mapping[str, int], room: int) -> dict[str, int]:
    """Each one's share of ``room``: its size when all fit, else equal shares, what a smaller
    one leaves going to the others (water-filling)."""
    shares: dict[str, int] = {}
    left, room = dict(sizes), max(room, 0)
    while left:
        equal = room // len(left)
        small = {k: v for k, v in left.items() if v <= equal}
        if not small:
            return {**shares, **dict.fromkeys(left, equal)}
        for key, size in small.items():
            shares[key] = size
            room -= size
            del left[key]
    return shares


def _totals(owners: list[str], sizes: list[int]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for owner, size in zip(owners, sizes, strict=True):
        totals[owner] = totals.get(owner, 0) + size
    return totals


def _size(tool: types.Tool) -> int:
    return len(tool.model_dump_json(by_alias=True, exclude_none=True).encode())
