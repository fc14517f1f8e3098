"""Argument checks every tool call passes, on the main server and the proxy alike.

The SDK drops unknown arguments silently, so a misspelled ``max_output_token`` would get the
default budget and the caller would never learn why: an unknown name is refused here with the
names the tool takes.  The SDK's own validation errors reach the caller too, without the
documentation link pydantic appends to each, which tells a model nothing.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from difflib import get_close_matches
from typing import Any, get_args

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from mcp_summarizer.errors import InputError
from mcp_summarizer.summarize.options import Strategy
from shared.logs import clip

__all__ = [
    "UnknownArguments",
    "bounded",
    "check_arguments",
    "strategy_argument",
    "strategy_used",
    "unknown_arguments",
    "without_pydantic_links",
]

logger = logging.getLogger("mcp_summarizer")

# pydantic ends each error with this line (or its text); it points at pydantic's docs.
_PYDANTIC_URL = re.compile(r"\n? *For further information visit https://errors\.pydantic\.dev/\S*")


def unknown_arguments(tool: str, given: Mapping[Any, Any], known: list[str]) -> str | None:
    """The message refusing the arguments of ``given`` that ``tool`` does not take (the
    nearest known name suggested for each), or None when it takes them all."""
    unknown = [str(n) for n in given if n not in known]
    if not unknown:
        return None
    named = ", ".join(_hint(n, known) for n in unknown[:5])
    return f"unknown argument{'s' if len(unknown) > 1 else ''} {named}; {tool} takes: {', '.join(known)}"


def check_arguments(tool: str, arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> None:
    """Raise `InputError` for an argument ``schema`` does not name or a required one missing:
    the check of a tool whose input schema is a plain JSON Schema (the proxy's own tools)."""
    if message := unknown_arguments(tool, arguments, list(schema["properties"])):
        raise InputError(message)
    missing = [n for n in schema.get("required", []) if n not in arguments]
    if missing:
        raise InputError(f"{tool} needs {', '.join(missing)}")


def without_pydantic_links(text: str) -> str:
    """An error text less pydantic's "For further information visit ..." lines."""
    return _PYDANTIC_URL.sub("", text)


class UnknownArguments:
    """MCPServer middleware: refuse a tool call that names an argument the tool does not have,
    and take pydantic's documentation links out of the SDK's validation errors.  Middleware,
    because it sees the raw arguments before the SDK's model drops them."""

    def __init__(self, arguments: dict[str, list[str]]) -> None:
        self._arguments = arguments  # each tool's argument names, filled as tools register

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params if ctx.method == "tools/call" and ctx.params else {}
        tool, given = str(params.get("name")), params.get("arguments")
        known = self._arguments.get(tool)
        message = unknown_arguments(tool, given, known) if known and isinstance(given, Mapping) else None
        if message is None:
            return _readable(await call_next(ctx))
        logger.info("request_rejected", extra={"tool": tool, "reason": message, "error": "UnknownArgument"})
        return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def bounded(description: str, maximum: int | None = None) -> Any:
    """A whole-number argument's schema: its bounds are published for the model, and checked
    by the service itself (`Budget.output_tokens`, `pages.read`), whose errors name the limit
    and where it comes from."""
    return Field(
        description=description,
        json_schema_extra={"minimum": 0} if maximum is None else {"minimum": 0, "maximum": maximum},
    )


def strategy_argument(description: str) -> Any:
    """The ``strategy`` argument's schema: the strategies listed (as an enum, for the model),
    any string accepted (`strategy_used`)."""
    return Field(description=description, json_schema_extra={"enum": list(get_args(Strategy))})


def strategy_used(tool: str, asked: str) -> Strategy:
    """The strategy a request runs with: the one it names (in any case), else semantic, as
    the design says an unknown strategy falls back (an agent that wrote "markdown" gets a
    summary, not an error); that is logged, and the answer's `_meta` names the one used."""
    name = asked.strip().lower()
    for strategy in get_args(Strategy):
        if name == strategy:
            return strategy  # type: ignore[no-any-return]
    logger.warning(
        "strategy_unknown",
        extra={
            "tool": tool,
            "strategy": clip(asked, 80),
            "used": "semantic",
            "known": list(get_args(Strategy)),
        },
    )
    return "semantic"


def _readable(result: HandlerResult) -> HandlerResult:
    """A tool error's text without pydantic's documentation links.  What the handler returns
    reaches the middleware already shaped for the wire: a dict."""
    if isinstance(result, dict) and result.get("isError") and isinstance(result.get("content"), list):
        for block in result["content"]:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                block["text"] = without_pydantic_links(block["text"])
    return result


def _hint(name: str, known: list[str]) -> str:
    close = get_close_matches(name, known, 1)
    return f"{clip(name, 80)!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
