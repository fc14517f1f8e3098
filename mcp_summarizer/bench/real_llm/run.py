"""One `summarize` call through the real service, and what its answer says about itself.

The service runs as users start it (`python -m mcp_summarizer`, `tests.support.servers`), the
call goes through the real MCP client over HTTP, and the figures come from the three places
an operator would look: the result's `_meta` (degraded, the receipt, and the deadline's and the
output checks' facts where this version of the service has them), the service's
`summarization_complete` log event (LLM calls, `length_stops`, chunks) and `/metrics` (LLM
calls by how they ended: timeouts and HTTP errors show there).
"""

from __future__ import annotations

import asyncio
import re
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from mcp import Client
from mcp.types import TextContent
from tests.support.servers import RunningServer

from mcp_summarizer.config import Settings
from mcp_summarizer.mcp.results import META_SUMMARY
from mcp_summarizer.text import tokens

__all__ = ["Row", "llm_call_counts", "summarize"]

_CALLS = re.compile(r'^mcp_summarizer_llm_calls_total\{status="([^"]+)"\} ([0-9.e+]+)$', re.M)


def llm_call_counts(server: RunningServer) -> Counter[str]:
    """The service's LLM calls so far, by how they ended (ok, timeout, http_4xx, ...)."""
    with urllib.request.urlopen(f"{server.base}/metrics", timeout=30) as r:
        text = r.read().decode()
    return Counter({status: int(float(n)) for status, n in _CALLS.findall(text)})


@dataclass
class Row:
    """What one call showed (None: this version of the service does not say)."""

    input: str
    backend: str
    source_tokens: int
    budget: int
    seconds: float = 0.0
    error: str | None = None
    text: str = ""
    answer_tokens: int = 0
    meta: dict[str, Any] = field(default_factory=dict)
    event: dict[str, Any] = field(default_factory=dict)
    calls_by_status: Counter[str] = field(default_factory=Counter)
    # Whether this version of the service has TOOL_DEADLINE_SECONDS at all.
    has_deadline: bool = "tool_deadline_seconds" in Settings.model_fields

    @property
    def kept(self) -> str:
        f = self.meta.get("fidelity") or {}
        if "kept_facts" not in f:
            return "n/a" if not f.get("unchanged") else "unchanged"
        return f"{f['kept_facts']}/{f['source_facts']}"

    @property
    def invented(self) -> str:
        f = self.meta.get("fidelity") or {}
        return str(f["invented_facts"]) if "invented_facts" in f else "n/a"

    @property
    def partial(self) -> str:
        """The deadline's effect (`_meta` `partial`, TOOL_DEADLINE_SECONDS), if any."""
        if "partial" not in self.meta:
            return "none" if self.has_deadline else "n/a"
        p = self.meta["partial"] or {}
        share = p.get("llm_share")
        cover = f"{p.get('chunks_summarized')}/{p.get('chunks')} parts"
        share_text = f" ({share:.0%} of the text)" if isinstance(share, int | float) else ""
        return (
            f"partial at {p.get('deadline_seconds')} s: {cover}{share_text}, continues={p.get('continues')}"
        )

    @property
    def rejected(self) -> str:
        """The output checks' count (`_meta` `rejected`), if this version has them."""
        if "rejected" not in self.meta:
            return "n/a"
        r = self.meta["rejected"] or {}
        reasons = ", ".join(f"{k} {v}" for k, v in sorted((r.get("reasons") or {}).items()))
        return f"{r.get('answers', 0)} answers, {r.get('parts_replaced', 0)} parts replaced" + (
            f" ({reasons})" if reasons else ""
        )


async def summarize(
    server: RunningServer, name: str, backend: str, text: str, budget: int, call_timeout: float
) -> Row:
    """``text`` summarized to ``budget`` tokens by ``server``; never raises for the service's
    own errors (they are a row's figures too)."""
    row = Row(name, backend, tokens.count(text), budget)
    seen = len(server.events("summarization_complete"))
    before = llm_call_counts(server)
    started = time.monotonic()
    try:
        async with Client(server.url, read_timeout_seconds=call_timeout) as client:
            result = await client.call_tool("summarize", {"content": text, "max_output_tokens": budget})
        row.text = "".join(b.text for b in result.content if isinstance(b, TextContent))
        row.meta = dict((result.meta or {}).get(META_SUMMARY) or {})
        if result.is_error:
            row.error = row.text[:300]
    except Exception as exc:  # a timeout or a broken connection is a figure of the run too
        row.error = f"{type(exc).__name__}: {exc}"[:300]
    row.seconds = time.monotonic() - started
    row.answer_tokens = tokens.count(row.text)
    # The log line is printed before the answer goes out, but read by a thread: a moment's
    # grace (a partial answer's event comes when its job ends, maybe much later: then none).
    for _ in range(100):
        if len(events := server.events("summarization_complete")) > seen:
            row.event = events[seen]
            break
        await asyncio.sleep(0.05)
    row.calls_by_status = llm_call_counts(server) - before
    return row
