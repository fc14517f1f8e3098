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
import contextlib
import re
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from mcp import Client
from mcp.types import TextContent
from tests.support.servers import RunningServer

from mcp_summarizer.config import Environment
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
    # After a partial answer whose work went on: when the background job ended (seconds from
    # the call's start, None: not within the wait), what became of its answer, and the same
    # call again (its seconds and `_meta`).
    job_seconds: float | None = None
    job_end: str = ""
    again_seconds: float | None = None
    again_meta: dict[str, Any] = field(default_factory=dict)
    again_tokens: int = 0
    again_text: str = ""
    # Whether this version of the service has TOOL_DEADLINE_SECONDS at all.
    has_deadline: bool = "tool_deadline_seconds" in Environment.model_fields

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
        return rejected(self.meta)

    @property
    def low(self) -> str:
        """The comparison with the embedded summary (ON_LOW_FIDELITY): its verdict, if any."""
        return low(self.meta)

    @property
    def later(self) -> str:
        """What the background job did and what the same call got afterwards."""
        if self.job_seconds is None and not self.job_end:
            return "-"
        job = f"job ended at {self.job_seconds:.0f} s ({self.job_end})" if self.job_seconds else self.job_end
        if self.again_seconds is None:
            return job
        m = self.again_meta
        f = m.get("fidelity") or {}
        kept = f"{f['kept_facts']}/{f['source_facts']}" if "kept_facts" in f else "n/a"
        state = "partial again" if "partial" in m else f"degraded {m.get('degraded')}, {m.get('backend')}"
        return (
            f"{job}; again: {self.again_seconds:.1f} s, cached {m.get('cached', False)}, {state}, "
            f"{self.again_tokens} tokens, rejected {rejected(m)}, kept {kept}, {low(m)}"
        )


def rejected(meta: dict[str, Any]) -> str:
    if "rejected" not in meta:
        return "n/a"
    r = meta["rejected"] or {}
    reasons = ", ".join(f"{k} {v}" for k, v in sorted((r.get("reasons") or {}).items()))
    return f"{r.get('answers', 0)} answers, {r.get('parts_replaced', 0)} parts replaced" + (
        f" ({reasons})" if reasons else ""
    )


def low(meta: dict[str, Any]) -> str:
    baseline = (meta.get("fidelity") or {}).get("baseline")
    if not isinstance(baseline, dict):
        return "no comparison"
    return ", ".join(f"{k} {v}" for k, v in sorted(baseline.items()))


async def _call(
    server: RunningServer, args: dict[str, Any], call_timeout: float
) -> tuple[str, dict[str, Any], str | None]:
    """One call: its text, `_meta` facts and error (None: none)."""
    async with Client(server.url, read_timeout_seconds=call_timeout) as client:
        result = await client.call_tool("summarize", args)
    text = "".join(b.text for b in result.content if isinstance(b, TextContent))
    return text, dict((result.meta or {}).get(META_SUMMARY) or {}), text[:300] if result.is_error else None


def _job_end(server: RunningServer, seen: int) -> str:
    """What the background job did with its full answer (its log events since ``seen``)."""
    events = server.events()[seen:]
    for e in events:
        if e.get("event") == "background_answer_made":
            return "answer kept" if e.get("kept") else "answer made, not kept"
        if e.get("event") == "background_answer_dropped":
            return f"answer dropped: {e.get('reason')}"
    return "no answer"


async def summarize(
    server: RunningServer,
    name: str,
    backend: str,
    text: str,
    budget: int,
    call_timeout: float,
    wait_job: float = 0.0,
) -> Row:
    """``text`` summarized to ``budget`` tokens by ``server``; never raises for the service's
    own errors (they are a row's figures too).  After a partial answer whose work goes on, up
    to ``wait_job`` seconds for the background job to end, then the same call again."""
    row = Row(name, backend, tokens.count(text), budget)
    seen = len(server.events("summarization_complete"))
    jobs_seen = len(server.events("background_job_ended"))
    lines_seen = len(server.events())
    before = llm_call_counts(server)
    args = {"content": text, "max_output_tokens": budget}
    started = time.monotonic()
    try:
        row.text, row.meta, row.error = await _call(server, args, call_timeout)
    except Exception as exc:  # a timeout or a broken connection is a figure of the run too
        row.error = f"{type(exc).__name__}: {exc}"[:300]
    row.seconds = time.monotonic() - started
    row.answer_tokens = tokens.count(row.text)
    partial = row.meta.get("partial") or {}
    if partial.get("continues") and wait_job > 0:
        try:
            await asyncio.to_thread(server.wait_for_event, "background_job_ended", jobs_seen + 1, wait_job)
            row.job_seconds = time.monotonic() - started
            row.job_end = _job_end(server, lines_seen)
        except AssertionError:
            row.job_end = f"not ended within {wait_job:g} s"
    # The log line is printed before the answer goes out, but read by a thread: a moment's
    # grace (a partial answer's event comes when its job ends: above, or none).
    for _ in range(100):
        if len(events := server.events("summarization_complete")) > seen:
            row.event = events[seen]
            break
        await asyncio.sleep(0.05)
    row.calls_by_status = llm_call_counts(server) - before
    if row.job_seconds is not None:
        again = time.monotonic()
        jobs_seen = len(server.events("background_job_ended"))
        try:
            row.again_text, row.again_meta, _ = await _call(server, args, call_timeout)
            row.again_tokens = tokens.count(row.again_text)
        except Exception as exc:
            row.again_meta = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        row.again_seconds = time.monotonic() - again
        if (row.again_meta.get("partial") or {}).get("continues"):  # its job too, before the next input
            with contextlib.suppress(AssertionError):
                ended = jobs_seen + 1
                await asyncio.to_thread(server.wait_for_event, "background_job_ended", ended, wait_job)
    return row
