"""The parts of an upstream tool result beside its text blocks, and what each costs of the
client's limits.  Pure, no I/O.

A client is shown more than a result's text blocks: the text of its embedded resources,
its ``structuredContent`` (which Codex and OpenCode read instead of the text), a link's
description; and every part travels with the result's ``_meta``.  So each counts against
the budget and TOOL_OUTPUT_MAX_BYTES / the client's limits (`proxy.shaping.shape` fits them):

- an embedded text resource is text: summarized with the text blocks when they are over;
- ``structuredContent`` is cut as JSON is cut (`proxy.shrink`), in its share of the budget;
- the upstream's ``_meta`` passes when small (`META_BYTES`): it is for the client, not the
  model, and no part of it can be cut and keep its meaning;
- a non-text block's own fields (a link's name and description, a resource's uri) pass when
  small (`BLOCK_BYTES`); its binary data (an image, audio, a blob) passes as it is: that is
  no text a client cuts by bytes or lines.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types

from mcp_summarizer.proxy.shrink import shrink
from mcp_summarizer.text import tokens

__all__ = [
    "BLOCK_BYTES",
    "META_BYTES",
    "NOTICE_KEY",
    "AnswerParts",
    "cut_structured",
    "dumps",
    "split",
]

META_BYTES = 4096  # of the upstream's _meta, as compact JSON
BLOCK_BYTES = 4096  # of a non-text block's own fields, its binary data aside
NOTICE_KEY = "mcp_summarizer"  # in a cut structuredContent: what was cut, and its handle
_NOTICE_ROOM = 50  # tokens kept for that notice (it is about 35)
_CUT_PASSES = 4


@dataclass(frozen=True, slots=True)
class AnswerParts:
    texts: list[str]  # of the text blocks and embedded text resources, in order
    others: list[types.ContentBlock]  # the other blocks that pass (images, audio, blobs, links)
    kept: list[types.ContentBlock]  # every block that passes, in order
    structured_json: str  # compact; "" when there is none
    structured_tokens: int
    meta: dict[str, Any] | None  # the upstream's _meta, when it passes
    fixed_bytes: int  # of the _meta that passes and of the other blocks' own fields
    dropped: dict[str, int] = field(default_factory=dict)  # what was left out, for `_meta`

    @property
    def structured_bytes(self) -> int:
        return len(self.structured_json.encode("utf-8", "surrogatepass"))


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def split(result: types.CallToolResult) -> AnswerParts:
    """``result`` taken apart (JSON of megabytes is measured here: call it off the event loop)."""
    texts: list[str] = []
    others: list[types.ContentBlock] = []
    kept: list[types.ContentBlock] = []
    fixed = 0
    dropped: dict[str, int] = {}
    for block in result.content:
        if isinstance(block, types.TextContent):
            texts.append(block.text)
        elif isinstance(block, types.EmbeddedResource) and isinstance(
            block.resource, types.TextResourceContents
        ):
            texts.append(block.resource.text)
        else:
            own = _own_bytes(block)
            if own > BLOCK_BYTES:
                dropped["blocks"] = dropped.get("blocks", 0) + 1
                dropped["block_bytes"] = dropped.get("block_bytes", 0) + own
                continue
            fixed += own
            others.append(block)
        kept.append(block)
    meta = result.meta or None
    if meta is not None:
        size = len(dumps(meta).encode("utf-8", "surrogatepass"))
        if size > META_BYTES:
            dropped["meta_bytes"] = size
            meta = None
        else:
            fixed += size
    structured = "" if result.structured_content is None else dumps(result.structured_content)
    return AnswerParts(
        texts=texts,
        others=others,
        kept=kept,
        structured_json=structured,
        structured_tokens=tokens.count(structured) if structured else 0,
        meta=meta,
        fixed_bytes=fixed,
        dropped=dropped,
    )


def cut_structured(
    value: dict[str, Any], room: int, max_bytes: int | None, notice: str
) -> dict[str, Any] | None:
    """``value`` cut as JSON is cut (keys, ids, errors, counts, first and last items), with
    ``notice`` as its first key, within ``room`` tokens and ``max_bytes`` of compact JSON; None
    when even the harshest cut does not fit."""
    for _ in range(_CUT_PASSES):
        shrunk = shrink(value, room - _NOTICE_ROOM) if room > _NOTICE_ROOM else None
        if shrunk is None:
            return None
        cut = json.loads(shrunk.text)
        if not isinstance(cut, dict):
            return None
        out = {NOTICE_KEY: notice, **{k: v for k, v in cut.items() if k != NOTICE_KEY}}
        text = dumps(out)
        if tokens.count(text) > room:  # a notice longer than its room: no cut fits
            return None
        size = len(text.encode("utf-8", "surrogatepass"))
        if max_bytes is None or size <= max_bytes:
            return out
        room = int(min(shrunk.tokens, room) * max_bytes / size * 0.9)  # smaller, by how far over
    return None


def _own_bytes(block: types.ContentBlock) -> int:
    """Bytes of a block's fields but its binary data (an image's, audio's or blob's base64)."""
    if isinstance(block, (types.ImageContent, types.AudioContent)):
        return len(block.model_copy(update={"data": ""}).model_dump_json(by_alias=True, exclude_none=True))
    if isinstance(block, types.EmbeddedResource) and isinstance(block.resource, types.BlobResourceContents):
        bare = block.model_copy(update={"resource": block.resource.model_copy(update={"blob": ""})})
        return len(bare.model_dump_json(by_alias=True, exclude_none=True))
    return len(block.model_dump_json(by_alias=True, exclude_none=True).encode())
