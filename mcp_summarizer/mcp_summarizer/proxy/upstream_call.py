"""An upstream tool call whose result the proxy shapes, and what shaping it uses: made once by
`proxy.app` where the call comes in, read by `proxy.shaping` and its steps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp_summarizer.store.content import ContentStore
from mcp_summarizer.summarize.deadline import Deadline
from mcp_summarizer.summarize.engine import Engine, Progress
from mcp_summarizer.summarize.jobs import Jobs
from mcp_summarizer.tenant import Tenant

__all__ = ["UpstreamCall"]


@dataclass(frozen=True, slots=True)
class UpstreamCall:
    """``tool`` of ``server``, called with ``arguments`` for ``tenant`` (whose namespace keeps
    the original), with the agent's ``goal``; the engine that summarizes its result, by the
    client's ``deadline`` through ``jobs`` when both are given."""

    engine: Engine
    store: ContentStore
    server: str
    tool: str
    arguments: dict[str, Any]
    goal: str
    tenant: Tenant
    progress: Progress | None = None
    jobs: Jobs | None = None
    deadline: Deadline | None = None
