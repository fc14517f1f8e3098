"""What a proxied answer says of itself in `_meta` when it is no summary: the upstream's
text as it is, or cut.  The same facts, by the same code (`mcp.results.summary_facts`), as
every tool's answer; a summary's come from `proxy.summaries`."""

from __future__ import annotations

from typing import Any

import mcp_types as types

from mcp_summarizer.mcp.results import META_SUMMARY, summary_facts
from mcp_summarizer.summarize.engine import Outcome

__all__ = ["CUT_FIDELITY", "as_it_is", "cut_facts"]

# A cut's ``fidelity`` in `_meta`: no receipt (the text is the result's own, only shorter).
CUT_FIDELITY = {"checked": False, "why": "a cut of the result's own text, not a summary"}


def as_it_is(result: types.CallToolResult, meta: dict[str, Any] | None, size: int) -> types.CallToolResult:
    """``result`` with ``meta``, saying what the service says of content within its budget:
    the source's own text (`backend: none`, unchanged), unless the upstream said it already
    (an mcp-summarizer upstream's facts are of this very text)."""
    meta = dict(meta or {})
    if META_SUMMARY not in meta:
        meta[META_SUMMARY] = summary_facts(
            Outcome(text="", input_tokens=size, output_tokens=size, bypassed=True), model=""
        )
    return result.model_copy(update={"meta": meta})


def cut_facts(degraded: bool, cause: str, line: str) -> dict[str, object]:
    """What `_meta` says of a cut (JSON, an error, text cut at the limit): the result's own
    text, written by nobody (`backend: none`), with no receipt; a text cut where a summary or a
    JSON cut was meant (none could be made, or none fit) is degraded, its line the notice."""
    why = cause or "what was made of it did not fit this client's limits"
    outcome = Outcome(
        text="",
        input_tokens=0,
        degraded=degraded,
        cause=why if degraded else "",
        notice=line if degraded else "",
    )
    return {**summary_facts(outcome, model=""), "fidelity": CUT_FIDELITY}
