"""The research agent: one pydantic-ai run per (zone, topic), with the MCP servers as tools.

`LoreResearcher.research_zone` connects to every server of the MCP config first.  pydantic-ai
fails the whole run when a toolset cannot connect, so this is done deliberately, server by
server: a required server (web search) that is down is an error; a degradable one (the
summarizer) is left out of the run, logged, and the model is told to read pages with the
search server's `web_url_read` instead.  During the run, a failing tool call (a summarizer that
died, a timeout) reaches the model as a failed tool result rather than ending the run, and a
server that vanished cannot fail the run when its session closes.
"""

from __future__ import annotations

import logging
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openai import AsyncOpenAI
from pydantic_ai import Agent, RunContext
from pydantic_ai.exceptions import ModelRetry, ToolFailed, UsageLimitExceeded
from pydantic_ai.mcp import MCPToolset  # imports fastmcp, which installs its own log handlers
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool, WrapperToolset
from pydantic_ai.usage import UsageLimits

from shared.prompt_loader import load_prompt, render
from world_lore_researcher import tools
from world_lore_researcher.mcp_config import MCPServerSpec, build_toolset, load_mcp_config, with_bearer
from world_lore_researcher.settings import Settings

__all__ = ["LoreResearcher", "MCPUnavailableError", "ResearchError", "ResearchResult", "build_model"]

logger = logging.getLogger("world_lore_researcher.agent")


class ResearchError(RuntimeError):
    """A research step could not run (the message says why and what to check)."""


class MCPUnavailableError(ResearchError):
    """A server the research cannot do without is unreachable."""


@dataclass
class ResearchResult:
    """One agent run: the messages hold the tools' returns, which are what the research keeps."""

    zone: str
    game: str
    instructions: str
    schema_hint: str
    messages: list[ModelMessage]
    output: str = ""  # the model's closing note (its retelling; not the research content)
    unavailable: dict[str, str] = field(default_factory=dict)  # server -> why it was left out
    incomplete: str | None = None  # why the run stopped early, if it did
    model_requests: int = 0


def describe(exc: BaseException) -> str:
    """A one-line cause, looking inside exception groups (anyio wraps connection errors)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip()
    cause = exc.__cause__ or exc.__context__
    if cause is not None and not text:
        return describe(cause)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@dataclass
class GuardedToolset(WrapperToolset[Any]):
    """An MCP toolset whose failures reach the model as failed tool results.

    A tool error or a broken connection becomes `ToolFailed` (the model sees it and adapts;
    no retry budget is spent), and an error while closing the session is logged, not raised.
    """

    server: str = ""

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        try:
            return await self.wrapped.call_tool(name, tool_args, ctx, tool)
        except ToolFailed as exc:
            cause = exc.message
        except ModelRetry as exc:  # protocol-level errors (connection closed, timeout)
            cause = exc.message
        except Exception as exc:
            cause = describe(exc)
        logger.warning("mcp_tool_failed", extra={"server": self.server, "tool": name, "cause": cause})
        raise ToolFailed(f"{name} failed: {cause}")

    async def __aexit__(self, *args: Any) -> bool | None:
        try:
            return await self.wrapped.__aexit__(*args)
        except Exception as exc:
            logger.warning("mcp_session_close_failed", extra={"server": self.server, "cause": describe(exc)})
            return None


def build_model(settings: Settings) -> Model:
    """The research LLM: any OpenAI-compatible endpoint (OpenRouter by default)."""
    client = AsyncOpenAI(
        base_url=settings.researcher_llm_base_url,
        # A local server may need no key; the SDK insists on a non-empty one.
        api_key=settings.llm_api_key or "not-needed",
        max_retries=settings.researcher_llm_max_retries,
        timeout=settings.researcher_llm_timeout_seconds,
    )
    return OpenAIChatModel(settings.researcher_llm_model, provider=OpenAIProvider(openai_client=client))


class LoreResearcher:
    """Researches one topic of a zone per `research_zone` call.

    `model` replaces the configured LLM (tests pass a pydantic-ai `FunctionModel`);
    `mcp_servers` replaces the MCP config file.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        model: Model | None = None,
        mcp_servers: list[MCPServerSpec] | None = None,
        mcp_config_path: Path | None = None,
    ) -> None:
        self.settings = settings
        self.model = model if model is not None else build_model(settings)
        self.servers = (
            mcp_servers
            if mcp_servers is not None
            else with_bearer(
                load_mcp_config(mcp_config_path or settings.researcher_mcp_config),
                tools.SUMMARIZER_SERVER,
                settings.mcp_summarizer_auth_token.get_secret_value(),
            )
        )
        self.system_prompt = render(load_prompt(__file__, "system_prompt"), **tools.TOOL_NAMES)

    async def research_zone(
        self, zone: str, *, instructions: str, schema_hint: str = "", game: str | None = None
    ) -> ResearchResult:
        game = game or self.settings.researcher_game
        prompt = render(
            load_prompt(__file__, "research_request"),
            zone=zone,
            game=game,
            instructions=instructions,
            schema_hint=schema_hint or "(none given)",
        )
        async with AsyncExitStack() as stack:
            toolsets, unavailable = await self._connect(stack)
            extra = [
                render(load_prompt(__file__, "summarizer_unavailable"), cause=cause, **tools.TOOL_NAMES)
                for server, cause in unavailable.items()
                if server == tools.SUMMARIZER_SERVER
            ]
            agent = Agent(
                self.model, instructions="\n\n".join([self.system_prompt, *extra]), toolsets=toolsets
            )
            limits = UsageLimits(request_limit=self.settings.researcher_max_model_requests)
            incomplete = None
            async with agent.iter(prompt, usage_limits=limits) as run:
                try:
                    async for _ in run:
                        pass
                except UsageLimitExceeded as exc:
                    incomplete = (
                        f"stopped after RESEARCHER_MAX_MODEL_REQUESTS="
                        f"{self.settings.researcher_max_model_requests} model requests ({exc})"
                    )
                    logger.warning("research_request_limit", extra={"zone": zone, "cause": str(exc)})
                messages = list(run.all_messages())
                output = run.result.output if run.result is not None else ""
        return ResearchResult(
            zone=zone,
            game=game,
            instructions=instructions,
            schema_hint=schema_hint,
            messages=messages,
            output=str(output or ""),
            unavailable=unavailable,
            incomplete=incomplete,
            model_requests=sum(isinstance(m, ModelResponse) for m in messages),
        )

    async def _connect(self, stack: AsyncExitStack) -> tuple[list[AbstractToolset[Any]], dict[str, str]]:
        """Connect to every configured server now; leave out the degradable ones that are down."""
        toolsets: list[AbstractToolset[Any]] = []
        unavailable: dict[str, str] = {}
        for spec in self.servers:
            mcp_toolset: MCPToolset = build_toolset(
                spec,
                connect_timeout=self.settings.researcher_mcp_connect_timeout_seconds,
                tool_error_behavior="failed",  # the model sees a tool's error and adapts
            )
            toolset = GuardedToolset(mcp_toolset, server=spec.name)
            started = time.perf_counter()
            try:
                await stack.enter_async_context(toolset)
            except Exception as exc:
                cause = describe(exc)
                if spec.name not in tools.DEGRADABLE_SERVERS:
                    raise MCPUnavailableError(
                        f"MCP server {spec.name!r} at {spec.url} is unreachable ({cause}); "
                        "check that it runs and that its URL setting is right"
                    ) from None
                unavailable[spec.name] = cause
                logger.warning(
                    "mcp_server_unavailable",
                    extra={"server": spec.name, "url": spec.url, "cause": cause, "degraded": True},
                )
                continue
            logger.debug(
                "mcp_server_connected",
                extra={
                    "server": spec.name,
                    "url": spec.url,
                    "ms": round((time.perf_counter() - started) * 1000),
                },
            )
            toolsets.append(toolset)
        return toolsets, unavailable
