"""The names the proxy publishes its upstream tools under: each reaches the server it names.

A tool keeps its own name when that name is its alone; otherwise it is published as
``<server>__<tool>``: when another server (or the proxy itself) has a tool of that name, and
when the name reads as another tool's prefixed name (``fs__env`` from a server other than
``fs``).  Server names never contain ``__`` nor end in ``_`` (`server_list`, which reads the
proxy's list of servers, refuses them), so a prefixed name has one reading: no name can be
taken by another server, whatever its tools are called, and every tool is published (none
hidden behind another of the same name).

Prefixing only the names involved, not refusing the config: tools are only known once the
servers run, and change when a server restarts; a server out of the user's hands must not be
able to stop the proxy by adding a tool.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["SEPARATOR", "Published", "publish"]

SEPARATOR = "__"


@dataclass(frozen=True, slots=True)
class Published:
    name: str  # as listed to the proxy's clients
    server: str
    tool: str  # its own name on the server
    why: str = ""  # why it does not keep its own name ("" when it does)


def publish(tools: Mapping[str, Sequence[str]], reserved: Collection[str] = ()) -> list[Published]:
    """``tools``: each server's tool names, in the servers' order; ``reserved``: the proxy's
    own tool names.  A name a server lists twice is published once."""
    owners: dict[str, list[str]] = {}
    for server, names in tools.items():
        for tool in dict.fromkeys(names):
            owners.setdefault(tool, []).append(server)
    published = []
    for server, names in tools.items():
        for tool in dict.fromkeys(names):
            why = _why_prefixed(server, tool, owners[tool], tools, reserved)
            published.append(Published(f"{server}{SEPARATOR}{tool}" if why else tool, server, tool, why))
    return published


def _why_prefixed(
    server: str, tool: str, owners: list[str], servers: Collection[str], reserved: Collection[str]
) -> str:
    if tool in reserved:
        return "the proxy has a tool of that name"
    others = [s for s in owners if s != server]
    if others:
        verb = "has" if len(others) == 1 else "have"
        return f"{', '.join(map(repr, others))} also {verb} a tool of that name"
    head, separator, rest = tool.partition(SEPARATOR)
    if separator and head in servers:
        return f"it reads as server {head!r}'s tool {rest!r}"
    return ""
