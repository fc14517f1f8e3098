"""The proxy's tool list: its own tools (call_tool_summarized, expand, search) and each
upstream tool as published, with the one argument the proxy adds, ``mcp_summarizer_goal``.

The upstream's outputSchema is not published: a summarized result has no structured content,
and clients reject a result that lacks what its tool's schema promised.  Structured results
within the budget still carry their ``structuredContent``; the schema itself is in the tool's
``_meta`` under ``io.github.mythline/proxy``.
"""

from __future__ import annotations

from difflib import get_close_matches
from typing import Any

import mcp_types as types

from mcp_summarizer.proxy.shaping import META_PROXY

__all__ = [
    "CALL_SCHEMA",
    "EXPAND_SCHEMA",
    "GOAL_ARGUMENT",
    "MIN_BUDGET",
    "OWN",
    "SEARCH_SCHEMA",
    "adds_goal",
    "own_tools",
    "published_tool",
    "unknown_tool",
    "with_goal",
]

GOAL_ARGUMENT = "mcp_summarizer_goal"
_GOAL_SCHEMA = {
    "type": "string",
    "description": "Optional, read by the summarizing proxy, not by the tool: what you want from "
    "this result. A result too long for your context is summarized with this as its focus.",
}
MIN_BUDGET = 64

CALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "server": {"type": "string", "description": "The upstream server's name."},
        "tool": {"type": "string", "description": "The tool's own name on that server."},
        "arguments": {"type": "object", "description": "The tool's arguments.", "default": {}},
        "goal": {
            "type": "string",
            "description": "What you want from the result: the focus of its summary, if it is long.",
            "default": "",
        },
        "max_output_tokens": {
            "type": "integer",
            "minimum": 0,
            "description": "Largest result wanted, in tokens (cl100k). 0 = the server's limit "
            f"(TOOL_OUTPUT_MAX_TOKENS). At least {MIN_BUDGET}.",
            "default": 0,
        },
    },
    "required": ["server", "tool"],
    "additionalProperties": False,
}
EXPAND_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "source_id": {
            "type": "string",
            "description": 'A handle from a summarized result, e.g. "r3fa2c1d9e0b1a2c3#0".',
        },
        "max_tokens": {
            "type": "integer",
            "minimum": 0,
            "description": "Largest answer in tokens. 0 = the whole part.",
            "default": 0,
        },
        "offset": {
            "type": "integer",
            "minimum": 0,
            "description": "Where in the part to start, in characters: a previous answer's next offset.",
            "default": 0,
        },
    },
    "required": ["source_id"],
    "additionalProperties": False,
}
SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "handle": {
            "type": "string",
            "description": 'A handle from a summarized result, e.g. "r3fa2c1d9e0b1a2c3#0".',
        },
        "query": {"type": "string", "description": "The words to look for."},
        "max_tokens": {
            "type": "integer",
            "minimum": 1,
            "description": "Largest answer in tokens.",
            "default": 2000,
        },
    },
    "required": ["handle", "query"],
    "additionalProperties": False,
}
OWN = ("call_tool_summarized", "expand", "search")


def own_tools(default_budget: int, meta: dict[str, Any]) -> list[types.Tool]:
    read_only = types.ToolAnnotations(read_only_hint=True, open_world_hint=False, idempotent_hint=True)
    return [
        types.Tool(
            name="call_tool_summarized",
            _meta=meta or None,
            description="Call a tool of an upstream server and get its result within max_output_tokens "
            f"(default {default_budget}): a longer result is summarized towards goal (JSON is cut, "
            "keeping keys, ids, errors, counts and the first and last items; an error is kept "
            "from its start), and says so, with a handle that expand opens.",
            input_schema=CALL_SCHEMA,
        ),
        types.Tool(
            name="search",
            description="Find the passages of a summarized result that best match some words (BM25): "
            "the best-matching exact passages of the original, best first, each as "
            '"[part id] (offset n) text"; expand that id with that offset to read on from the passage.',
            input_schema=SEARCH_SCHEMA,
            annotations=read_only,
            _meta=meta or None,
        ),
        types.Tool(
            name="expand",
            description="Open the exact original of a summarized result, one part at a time: the "
            "answer starts with Source:, Previous: and Next: lines (the next part's handle), then "
            "a blank line and the text. A part too long for one answer comes a page at a time: Status: "
            "gives the offset of the next.",
            input_schema=EXPAND_SCHEMA,
            annotations=read_only,
            _meta=meta or None,
        ),
    ]


def published_tool(name: str, tool: types.Tool, inline: dict[str, Any]) -> types.Tool:
    meta = {**(tool.meta or {}), **inline}
    if tool.output_schema is not None:
        meta[META_PROXY] = {"outputSchema": tool.output_schema}
    return tool.model_copy(
        update={
            "name": name,
            "input_schema": with_goal(tool.input_schema),
            "output_schema": None,
            "meta": meta or None,
        }
    )


def adds_goal(tool: types.Tool) -> bool:
    properties = tool.input_schema.get("properties")
    return not (isinstance(properties, dict) and GOAL_ARGUMENT in properties)


def with_goal(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties")
    if isinstance(properties, dict) and GOAL_ARGUMENT in properties:
        return schema  # the tool has an argument of that name: it is the tool's, not ours
    return {
        **schema,
        "properties": {**(properties if isinstance(properties, dict) else {}), GOAL_ARGUMENT: _GOAL_SCHEMA},
    }


def unknown_tool(name: str, known: list[str]) -> str:
    close = get_close_matches(name, known, 3)
    hint = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
    return f"unknown tool {name[:100]!r}{hint}; tools/list names the {len(known)} tools"
