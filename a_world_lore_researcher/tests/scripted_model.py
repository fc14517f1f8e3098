"""A pydantic-ai `FunctionModel` that researches like a diligent LLM would, deterministically.

Per run: search; read every result with `fetch_url(url, context=<the schema hint>)` (or with
`web_url_read` when `fetch_url` is not offered); read with `web_url_read` each page whose
`fetch_url` failed; finish with a short note.  It counts its calls and can fail on a chosen run.
`research` runs the whole pipeline with it.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from world_lore_researcher import tools
from world_lore_researcher.agent import LoreResearcher
from world_lore_researcher.checkpoint import CheckpointStore, ResearchCheckpoint
from world_lore_researcher.mcp_config import MCPServerSpec
from world_lore_researcher.pipeline import Progress, run_pipeline
from world_lore_researcher.settings import Settings
from world_lore_researcher.topics import load_topics, select_topics

HINT = re.compile(r"^Schema hint \(pass it as `context` when you read a page\): (.*)$", re.M)


class ScriptedResearcher:
    def __init__(
        self,
        *,
        fail_on_run: int | None = None,
        before_reading: Callable[[], Awaitable[None]] | None = None,
        read_max_length: int = 20000,
    ) -> None:
        self.fail_on_run = fail_on_run
        self.before_reading = before_reading
        self.read_max_length = read_max_length
        self.calls = 0  # model requests, over every run
        self.runs = 0
        self.offered: list[set[str]] = []  # tool names offered, per run
        self.instructions: list[str] = []  # the instructions seen, per run
        self.prompts: list[str] = []
        self.returns: list[ToolReturnPart] = []  # every tool return seen, in order

    def model(self) -> FunctionModel:
        return FunctionModel(self, model_name="scripted-researcher")

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.calls += 1
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        returns = [p for p in last.parts if isinstance(p, ToolReturnPart)]
        self.returns.extend(returns)
        offered = {t.name for t in info.function_tools}
        prompt = "\n".join(
            str(p.content)
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, UserPromptPart)
        )
        if not returns:  # a new run
            self.runs += 1
            self.offered.append(offered)
            self.instructions.append(info.instructions or "")
            self.prompts.append(prompt)
            if self.fail_on_run == self.runs:
                raise RuntimeError(f"scripted model failure on run {self.runs}")
            zone = re.search(r"^Zone: (.*)$", prompt, re.M)
            return ModelResponse(
                parts=[ToolCallPart(tools.WEB_SEARCH, {"query": f"{zone and zone.group(1)} lore"})]
            )
        hint = m.group(1) if (m := HINT.search(prompt)) else ""
        by_tool = {r.tool_name: r for r in returns}
        if tools.WEB_SEARCH in by_tool:
            urls = re.findall(r"^URL: (\S+)$", str(by_tool[tools.WEB_SEARCH].content), re.M)
            if self.before_reading is not None:
                await self.before_reading()
            if tools.FETCH_URL in offered:
                calls = [ToolCallPart(tools.FETCH_URL, {"url": u, "context": hint}) for u in urls]
            else:
                calls = [
                    ToolCallPart(tools.WEB_URL_READ, {"url": u, "maxLength": self.read_max_length})
                    for u in urls
                ]
            return ModelResponse(parts=calls)
        failed = [r for r in returns if r.tool_name == tools.FETCH_URL and r.outcome != "success"]
        if failed:
            call_args = {
                p.tool_call_id: p.args_as_dict()
                for m in messages
                if isinstance(m, ModelResponse)
                for p in m.parts
                if isinstance(p, ToolCallPart)
            }
            urls = [call_args[r.tool_call_id]["url"] for r in failed]
            return ModelResponse(
                parts=[
                    ToolCallPart(tools.WEB_URL_READ, {"url": u, "maxLength": self.read_max_length})
                    for u in urls
                ]
            )
        return ModelResponse(parts=[TextPart(f"Read {len(returns)} page(s); the sources cover the topic.")])


async def research(
    settings: Settings,
    model: ScriptedResearcher,
    search_url: str,
    summarizer_url: str,
    topics: str = "overview",
    events: list[Progress] | None = None,
) -> ResearchCheckpoint:
    """The pipeline on "Elwynn Forest" with ``model`` as the LLM and the two MCP servers given."""
    specs = [MCPServerSpec("search", search_url, 30), MCPServerSpec("summarizer", summarizer_url, 120)]
    researcher = LoreResearcher(settings, model=model.model(), mcp_servers=specs)
    return await run_pipeline(
        "Elwynn Forest",
        game="World of Warcraft",
        topics=select_topics(load_topics(), topics),
        researcher=researcher,
        store=CheckpointStore(settings.checkpoint_db),
        progress=(events.append if events is not None else None),
    )
