"""What the answer pipeline works with: its parts, built once with the service
(`Answering`), and one tool call's circumstances (`Call`), read by the tool from its request."""

from __future__ import annotations

from dataclasses import dataclass

from mcp_summarizer.answering.cached import AnswerCache
from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.store.content import ContentStore
from mcp_summarizer.summarize.deadline import Deadline
from mcp_summarizer.summarize.engine import Engine, Progress
from mcp_summarizer.summarize.jobs import Jobs
from mcp_summarizer.tenant import Tenant
from mcp_summarizer.web.pages import Pages

__all__ = ["Answering", "Call"]


@dataclass(frozen=True, slots=True)
class Answering:
    """The parts every answer is made with: the engine, the jobs identical calls share (and
    that go on past a deadline), the content store behind the handles, and the result cache
    as the answers use it (None: CACHE=off), and fetch_url's page reader."""

    engine: Engine
    jobs: Jobs
    store: ContentStore
    cache: AnswerCache | None
    pages: Pages


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call: its tool's name, its tenant, what its client keeps of an answer, when it
    must have answered, where its progress goes, and when it began (`time.perf_counter`)."""

    tool: str
    tenant: Tenant
    limits: Limits
    deadline: Deadline
    progress: Progress | None
    started: float
