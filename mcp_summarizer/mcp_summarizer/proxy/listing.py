"""An upstream's tool listing, made safe to publish.  Pure, no I/O.

Tool names and descriptions are written by the upstream's author, and reach every client's
model.  A name that is not a valid MCP tool name (SEP-986: 1-128 of ``A-Z a-z 0-9 _ - .``)
is left out, with a warning: an empty or blank name, a newline, a right-to-left override
(which shows one name and calls another), 10,000 characters.  A description is cut at
`MAX_DESCRIPTION` characters (Claude Code cuts them at 2 KB too), a title at `MAX_TITLE`; a
tool still over `MAX_TOOL_BYTES` (its schema, say) is left out; so are the tools past the first
`MAX_TOOLS` listed, or past `MAX_LISTING_BYTES` in all: a listing of 50,000 tools (34 MB)
would cost every client's tools/list seconds, and their models the context.

`trim_listing` is the stdio transport's: a listing message too large to parse on the event
loop without stalling every other call is read a tool at a time in a worker thread (each
tool a separate decode, so the thread hands the interpreter back between them) and only the
tools kept are passed on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.shared.tool_name_validation import TOOL_NAME_REGEX

__all__ = [
    "LEFT_OUT_KEY",
    "MAX_DESCRIPTION",
    "MAX_LISTING_BYTES",
    "MAX_NAME",
    "MAX_TOOLS",
    "Screened",
    "name_problem",
    "screen",
    "trim_listing",
]

MAX_TOOLS = 1000  # per upstream
MAX_NAME = 128  # SEP-986, and so for a published <server>__<tool> too
MAX_DESCRIPTION = 2048  # characters
MAX_TITLE = 200
MAX_TOOL_BYTES = 64 * 1024  # one tool's JSON, its description cut
MAX_LISTING_BYTES = 768 * 1024  # one upstream's tools in all (the whole listing too: `proxy.routes`)
# The count of tools a trimmed listing left out, in its result's `_meta`.
LEFT_OUT_KEY = "io.github.mythline/tools-left-out"

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True, slots=True)
class Screened:
    tools: list[types.Tool]
    left_out: list[tuple[str, str]] = field(default_factory=list)  # (name, why), each tool
    past_limits: int = 0  # tools left out past MAX_TOOLS / MAX_LISTING_BYTES
    cut: int = 0  # descriptions or titles cut


def name_problem(name: str) -> str:
    """Why ``name`` is not a valid MCP tool name ("" when it is)."""
    if not name:
        return "the name is empty"
    if len(name) > MAX_NAME:
        return f"the name is {len(name)} characters, over the {MAX_NAME} MCP allows"
    if not TOOL_NAME_REGEX.fullmatch(name):
        bad = sorted({c for c in name if not re.fullmatch(r"[A-Za-z0-9._-]", c)})[:5]
        return f"the name has characters MCP tool names may not have: {', '.join(map(ascii, bad))}"
    return ""


def screen(tools: Sequence[types.Tool], left_before: int = 0) -> Screened:
    """The tools to publish, in their order, and what was left out or cut, and why;
    ``left_before``: tools a trimmed listing had already left out past the limits."""
    kept: list[types.Tool] = []
    left_out: list[tuple[str, str]] = []
    cut = 0
    total = 0
    for n, tool in enumerate(tools):
        if n >= MAX_TOOLS:
            return Screened(kept, left_out, len(tools) - n + left_before, cut)
        if problem := name_problem(tool.name):
            left_out.append((tool.name, problem))
            continue
        update: dict[str, Any] = {}
        if tool.description and len(tool.description) > MAX_DESCRIPTION:
            update["description"] = tool.description[: MAX_DESCRIPTION - 1] + "…"
        if tool.title and len(tool.title) > MAX_TITLE:
            update["title"] = tool.title[: MAX_TITLE - 1] + "…"
        if update:
            tool = tool.model_copy(update=update)
            cut += 1
        size = len(tool.model_dump_json(by_alias=True, exclude_none=True).encode())
        if size > MAX_TOOL_BYTES:
            left_out.append((tool.name, f"its listing is {size:,} bytes, over {MAX_TOOL_BYTES:,}"))
            continue
        if total + size > MAX_LISTING_BYTES:
            return Screened(kept, left_out, len(tools) - n + left_before, cut)
        total += size
        kept.append(tool)
    return Screened(kept, left_out, left_before, cut)


def trim_listing(text: str, keep: int = MAX_TOOLS) -> dict[str, Any] | None:
    """The tools/list reply in ``text`` (a JSON-RPC message) with its first ``keep`` tools and
    the count of the others under `LEFT_OUT_KEY` in its result's `_meta`; None when ``text`` is
    no such reply.  Each tool is decoded on its own: call it in a worker thread."""
    try:
        message, end = _value(text, _skip(text, 0), _top_level(keep))
    except (ValueError, IndexError, RecursionError):
        return None
    if _skip(text, end) != len(text) or not isinstance(message, dict):
        return None
    result = message.get("result")
    if not isinstance(result, dict) or not isinstance(result.get("tools"), _Trimmed):
        return None
    tools: _Trimmed = result["tools"]
    meta = result.get("_meta")
    meta = meta if isinstance(meta, dict) else {}
    result = {**result, "tools": list(tools), "_meta": {**meta, LEFT_OUT_KEY: tools.left_out}}
    return {**message, "result": result}


class _Trimmed(list[Any]):
    left_out = 0


Read = Callable[[str, str, int], tuple[Any, int]]  # (key, text, where its value starts)


def _skip(text: str, i: int) -> int:
    match = _WHITESPACE.match(text, i)
    return match.end() if match else i


def _top_level(keep: int) -> Read:
    def tools(key: str, text: str, i: int) -> tuple[Any, int]:
        return _array(text, i, keep) if key == "tools" and text[i] == "[" else _DECODER.raw_decode(text, i)

    def top(key: str, text: str, i: int) -> tuple[Any, int]:
        return _value(text, i, tools) if key == "result" else _DECODER.raw_decode(text, i)

    return top


def _value(text: str, i: int, read: Read) -> tuple[Any, int]:
    """The object at ``i``, each member's value read by ``read``; any other value whole."""
    if text[i] != "{":
        return _DECODER.raw_decode(text, i)
    out: dict[str, Any] = {}
    i = _skip(text, i + 1)
    if text[i] == "}":
        return out, i + 1
    while True:
        key, i = _DECODER.raw_decode(text, i)
        i = _skip(text, i)
        if not isinstance(key, str) or text[i] != ":":
            raise ValueError("not an object")
        out[key], i = read(key, text, _skip(text, i + 1))
        i = _skip(text, i)
        if text[i] == "}":
            return out, i + 1
        if text[i] != ",":
            raise ValueError("not an object")
        i = _skip(text, i + 1)


def _array(text: str, i: int, keep: int) -> tuple[_Trimmed, int]:
    """The array at ``i``, an item at a time: the first ``keep`` items, and how many more."""
    out = _Trimmed()
    i = _skip(text, i + 1)
    if text[i] == "]":
        return out, i + 1
    while True:
        item, i = _DECODER.raw_decode(text, i)
        if len(out) < keep:
            out.append(item)
        else:
            out.left_out += 1
        i = _skip(text, i)
        if text[i] == "]":
            return out, i + 1
        if text[i] != ",":
            raise ValueError("not an array")
        i = _skip(text, i + 1)
