"""Reading a tool's answer in a test: the first block's text, checked to be text."""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolResult, TextContent


def first_text(result: CallToolResult) -> str:
    """The text of the answer's first block; a block of another kind fails the test, named."""
    block = result.content[0]
    assert isinstance(block, TextContent), f"expected a text block, got {block.type}"
    return block.text


def meta_of(result: CallToolResult) -> dict[str, Any]:
    """The answer's `_meta`; an answer without one fails the test."""
    assert result.meta is not None, "the answer carries no _meta"
    return result.meta
