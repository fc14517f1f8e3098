"""The research pipeline: one step per topic, a checkpoint after every step.

Each step is `research_zone()` → `_accumulate_research()`.  The pipeline never calls the
summarizer: the agent summarized at the source (`fetch_url(url, context=<schema hint>)`), and
what is kept is what the tools returned, read from the run's messages, with the URL each
answer came from, never the model's retelling of it.  Page text that reached the research
without a summary (summarizer down, or its fetch degraded) is cut to
RESEARCHER_UNSUMMARIZED_MAX_TOKENS and marked `summarized: false` with the reason.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart

from shared import tokens
from world_lore_researcher import tools
from world_lore_researcher.agent import LoreResearcher, ResearchResult
from world_lore_researcher.checkpoint import CheckpointStore, ResearchCheckpoint, Source, TopicResearch
from world_lore_researcher.topics import Topic

__all__ = ["Progress", "ResearchStep", "run_pipeline"]

logger = logging.getLogger("world_lore_researcher.pipeline")

ResearchStep = Callable[[ResearchCheckpoint, LoreResearcher], Awaitable[ResearchCheckpoint]]


@dataclass(frozen=True)
class Progress:
    """One progress event: a step starting, done, skipped (done before: resumed) or failed."""

    index: int  # 1-based position of the topic in this run
    total: int
    topic: str
    event: Literal["start", "done", "skip", "failed"]
    research: TopicResearch | None = None
    error: str | None = None
    seconds: float | None = None


def _make_research_step(topic: Topic, *, unsummarized_max_tokens: int) -> ResearchStep:
    async def step(checkpoint: ResearchCheckpoint, researcher: LoreResearcher) -> ResearchCheckpoint:
        zone_name = checkpoint.zone_name
        instructions = topic.render_instructions(zone_name, checkpoint.game)
        result = await researcher.research_zone(
            zone_name, instructions=instructions, schema_hint=topic.schema_hint, game=checkpoint.game
        )
        _accumulate_research(checkpoint, result, topic, unsummarized_max_tokens=unsummarized_max_tokens)
        return checkpoint

    step.__name__ = f"step_{topic.key}"
    return step


@dataclass
class _Pending:
    url: str
    title: str
    tool: str
    content: str
    summarized: bool
    status: str
    reason: str | None = None
    original_tokens: int | None = None
    partial: bool = False  # the tool itself returned only part of the page


_LINK = re.compile(r"[a-z][a-z0-9+.-]*://\S+")


def _as_text(content: object) -> str:
    """A tool return as text.  A result with `resource_link` items next to its text (the
    summarizer links each cited excerpt) arrives as a list: its text, without the bare links
    (the text names the same ids)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content and all(isinstance(item, str) for item in content):
        texts = [item for item in content if not _LINK.fullmatch(item)]
        if texts:
            return "\n\n".join(texts)
    try:
        return json.dumps(content, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(content)


def _args(call: ToolCallPart | None) -> dict[str, Any]:
    if call is None:
        return {}
    try:
        return call.args_as_dict()
    except Exception:  # malformed arguments from the model: the return is still worth keeping
        return {}


def _summarized_page(pending: list[_Pending], given: str) -> _Pending | None:
    """The kept page a summarize call was given: the latest one containing, or contained in,
    the content the model passed."""
    if not given:
        return None
    tests: tuple[Callable[[_Pending], bool], ...] = (
        lambda p: given in p.content,
        lambda p: p.content.strip() in given,
    )
    for test in tests:
        found = next((p for p in reversed(pending) if p.content.strip() and test(p)), None)
        if found is not None:
            return found
    return None


def _tool_exchanges(result: ResearchResult) -> list[tuple[ToolReturnPart, dict[str, Any]]]:
    """Each tool return of the run, with the arguments of the call it answers."""
    calls: dict[str, ToolCallPart] = {}
    returns: list[ToolReturnPart] = []
    for message in result.messages:
        if isinstance(message, ModelResponse):
            calls.update({p.tool_call_id: p for p in message.parts if isinstance(p, ToolCallPart)})
        elif isinstance(message, ModelRequest):
            returns.extend(p for p in message.parts if isinstance(p, ToolReturnPart))
    return [(ret, _args(calls.get(ret.tool_call_id))) for ret in returns]


class _Reading:
    """The tools' returns of one run read into pages, searches and failures, in order: a
    summary replaces the page it summarizes; a raw read says why it was not summarized."""

    def __init__(self, summarizer_down: str | None) -> None:
        self.summarizer_down = summarizer_down
        self.pending: list[_Pending] = []
        self.searches: list[str] = []
        self.failures: list[str] = []
        self.fetch_failures: dict[str, str] = {}

    def read(self, ret: ToolReturnPart, args: dict[str, Any]) -> None:
        text, name, url = _as_text(ret.content), ret.tool_name, str(args.get("url") or "")
        if ret.outcome != "success":
            self.failures.append(f"{name}({url or args.get('query', '')}): {text}")
            if name == tools.FETCH_URL and url:
                self.fetch_failures[url] = text
        elif name == tools.WEB_SEARCH:
            self.searches.append(str(args.get("query", "")))
        elif name == tools.FETCH_URL:
            self._fetched(text, url)
        elif name == tools.WEB_URL_READ:
            self._add(
                _Pending(
                    url,
                    "",
                    name,
                    text,
                    summarized=False,
                    status="not_summarized",
                    reason=self._raw_reason(url),
                )
            )
        elif name in (tools.SUMMARIZE, tools.SUMMARIZE_FOR_EXTRACTION):
            self._summarized(name, text, str(args.get("content", "")).strip())
        else:
            logger.debug("tool_return_ignored", extra={"tool": name})

    def _add(self, item: _Pending) -> None:
        if not item.content.strip():  # an empty page: nothing to keep
            logger.info("empty_tool_return", extra={"tool": item.tool, "url": item.url})
        elif not any(p.url == item.url and p.content == item.content for p in self.pending):
            self.pending.append(item)

    def _fetched(self, text: str, url: str) -> None:
        page = tools.parse_fetch_result(text)
        self._add(
            _Pending(
                url=page.url or url,
                title=page.title,
                tool=tools.FETCH_URL,
                content=page.body,
                summarized=page.summarized,
                status=page.kind,
                reason=page.reason or None,
                original_tokens=page.original_tokens,
                partial=page.next_start_index is not None,
            )
        )

    def _raw_reason(self, url: str) -> str:
        """Why a page read raw was not summarized."""
        if url in self.fetch_failures:
            failure = self.fetch_failures[url]
            prefix = f"{tools.FETCH_URL} failed"
            return failure if failure.startswith(prefix) else f"{prefix}: {failure}"
        if self.summarizer_down:
            return f"summarizer unavailable: {self.summarizer_down}"
        return f"read with {tools.WEB_URL_READ}, not through the summarizer"

    def _summarized(self, name: str, text: str, given: str) -> None:
        changed = text.strip() != given
        target = _summarized_page(self.pending, given)
        if target is not None and changed:  # the summary replaces the page it summarizes
            target.original_tokens = target.original_tokens or tokens.count(target.content)
            target.content, target.summarized, target.status = text, True, "summarized"
            target.reason, target.tool = None, f"{target.tool}+{name}"
        elif target is None:
            status = "summarized" if changed else "full"
            self._add(_Pending("", "", name, text, summarized=changed, status=status))


def _source(item: _Pending, unsummarized_max_tokens: int) -> Source:
    """A kept page as a checkpoint source; text that was not summarized cut to its limit."""
    content, truncated, original = item.content, item.partial, item.original_tokens
    if not item.summarized and item.status != "full":
        size = tokens.count(item.content)
        content = tokens.truncate(item.content, unsummarized_max_tokens)
        truncated = truncated or size > unsummarized_max_tokens
        original = original or size
    return Source(
        url=item.url,
        title=item.title,
        tool=item.tool,
        content=content,
        tokens=tokens.count(content),
        summarized=item.summarized,
        status=item.status,
        reason=item.reason,
        truncated=truncated,
        original_tokens=original,
    )


def _accumulate_research(
    checkpoint: ResearchCheckpoint, result: ResearchResult, topic: Topic, *, unsummarized_max_tokens: int
) -> None:
    """Add the topic's research to the checkpoint: the tools' returns, with their sources."""
    reading = _Reading(result.unavailable.get(tools.SUMMARIZER_SERVER))
    for ret, args in _tool_exchanges(result):
        reading.read(ret, args)
    sources = [_source(item, unsummarized_max_tokens) for item in reading.pending]
    searches, failures = reading.searches, reading.failures
    research = TopicResearch(
        topic=topic.key,
        title=topic.title,
        instructions=result.instructions,
        schema_hint=topic.schema_hint,
        content="\n\n".join(
            f"## {s.title or s.url or s.tool}\nSource: {s.url or s.tool}\n\n{s.content}" for s in sources
        ),
        tokens=sum(s.tokens for s in sources),
        sources=sources,
        searches=searches,
        tool_failures=failures,
        unavailable=dict(result.unavailable),
        incomplete=result.incomplete,
        model_notes=result.output,
        model_requests=result.model_requests,
    )
    checkpoint.research[topic.key] = research
    if topic.key not in checkpoint.completed:
        checkpoint.completed.append(topic.key)
    logger.info(
        "research_accumulated",
        extra={
            "zone": checkpoint.zone_name,
            "topic": topic.key,
            "sources": len(sources),
            "tokens": research.tokens,
            "summarized": sum(s.summarized for s in sources),
            "unsummarized": sum(not s.summarized and s.status != "full" for s in sources),
            "truncated": sum(s.truncated for s in sources),
            "tool_failures": len(failures),
            "unavailable": research.unavailable or None,
            "model_requests": result.model_requests,
        },
    )


async def run_pipeline(
    zone: str,
    *,
    game: str,
    topics: list[Topic],
    researcher: LoreResearcher,
    store: CheckpointStore,
    restart: bool = False,
    progress: Callable[[Progress], None] | None = None,
) -> ResearchCheckpoint:
    """Research `topics` for `zone`, resuming from the checkpoint of an earlier run.

    The checkpoint is saved after every completed step; a failing step raises, leaving the
    completed ones saved, so the next run starts at the failed step.
    """
    notify = progress or (lambda _: None)
    if restart:
        await store.delete(zone, game)
    checkpoint = await store.load(zone, game)
    if checkpoint is None:
        checkpoint = ResearchCheckpoint(zone_name=zone, game=game)
    elif checkpoint.completed:
        logger.info(
            "research_resumed",
            extra={"zone": zone, "game": game, "completed": checkpoint.completed, "db": str(store.path)},
        )
    budget = researcher.settings.researcher_unsummarized_max_tokens
    total = len(topics)
    for index, topic in enumerate(topics, 1):
        if topic.key in checkpoint.completed:
            notify(Progress(index, total, topic.key, "skip", checkpoint.research.get(topic.key)))
            continue
        notify(Progress(index, total, topic.key, "start"))
        logger.info("research_step_started", extra={"zone": zone, "topic": topic.key, "step": index})
        started = time.perf_counter()
        step = _make_research_step(topic, unsummarized_max_tokens=budget)
        try:
            checkpoint = await step(checkpoint, researcher)
        except Exception as exc:
            seconds = round(time.perf_counter() - started, 2)
            logger.error(
                "research_step_failed",
                exc_info=True,
                extra={"zone": zone, "topic": topic.key, "step": index, "seconds": seconds},
            )
            notify(Progress(index, total, topic.key, "failed", error=f"{type(exc).__name__}: {exc}"))
            raise
        await store.save(checkpoint)
        seconds = round(time.perf_counter() - started, 2)
        logger.info(
            "research_step_completed",
            extra={"zone": zone, "topic": topic.key, "step": index, "seconds": seconds},
        )
        notify(Progress(index, total, topic.key, "done", checkpoint.research[topic.key], seconds=seconds))
    return checkpoint
