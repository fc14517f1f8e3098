"""The API of the tool-output summarization ticket (TICKET-001), over the engine:

    service = SummarizationService(base_url="http://localhost:4000/v1", api_key="sk-...",
                                   model="claude-3-5-haiku-latest", timeout=30.0)
    summary = await service.summarize(output, user_query="why did job 7 fail?", tool_name="logs")
    text, was_summarized = await service.summarize_if_needed(output, max_tokens=2000)
    estimate_tokens("hello world")            # 2
    get_summarization_service()               # one service for the process, from the settings

``summarize`` raises on failure (RuntimeError when the LLM fails for good, ValueError for an
argument out of bounds); ``summarize_if_needed`` never raises for what happens to the output:
it is `mcp_summarizer.inprocess.if_needed.summarize_if_needed` (the failure policy, ON_LLM_FAILURE,
answers an LLM failure; anything else gives the output cut to the budget, saying so).

What the ticket's sketch does by hand, the engine does: any OpenAI-compatible endpoint (a
LiteLLM proxy among them) through the openai client with retries, token counts with the real
tokenizer (cl100k), content of any length (map-reduce, not a cut at 50,000 characters), the
answer within its budget.  Unset arguments come from the settings (OPENROUTER_BASE_URL,
OPENROUTER_API_KEY, LLM_MODEL, LLM_TIMEOUT_SECONDS); with no LLM configured at all, the
embedded extractive summarizer answers.
"""

from __future__ import annotations

import time
from functools import cache

from pydantic import ValidationError

from mcp_summarizer.assembly.engine_setup import build_engine
from mcp_summarizer.config import Settings, load_settings, revalidated
from mcp_summarizer.inprocess.if_needed import serialize_output, summarize_if_needed
from mcp_summarizer.summarize.engine import Request, log_completion
from mcp_summarizer.text import tokens

__all__ = ["SummarizationService", "estimate_tokens", "get_summarization_service", "serialize_output"]


# The settings each argument sets, for an error message that names the argument.
_PARAMETERS = {
    "openrouter_base_url": "base_url",
    "openrouter_api_key": "api_key",
    "llm_model": "model",
    "llm_timeout_seconds": "timeout",
}


def _named(loc: tuple[int | str, ...]) -> str:
    """The argument (or else the setting) a validation error is about."""
    return _PARAMETERS.get(str(loc[0]), str(loc[0])) if loc else "settings"


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` as cl100k counts them (exact, where the ticket estimated 4 characters
    a token)."""
    return tokens.count(text) if text else 0


class SummarizationService:
    """Summarizes tool outputs with the configured (or the given) OpenAI-compatible LLM."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str | None = None,
        timeout: float | None = None,
        *,
        settings: Settings | None = None,
    ) -> None:
        """Arguments left out come from ``settings`` (default: the process environment).
        An invalid one raises ValueError naming it."""
        given = {"base_url": base_url, "api_key": api_key, "model": model, "timeout": timeout}
        fields = {parameter: name for name, parameter in _PARAMETERS.items()}
        overrides = {fields[name]: value for name, value in given.items() if value is not None}
        settings = settings or load_settings()
        if overrides:
            # Validated as the settings are: a bad URL or timeout is an error naming it.
            try:
                settings = revalidated(settings, overrides)
            except ValidationError as exc:
                problems = "; ".join(f"{_named(e['loc'])}: {e['msg']}" for e in exc.errors())
                raise ValueError(f"SummarizationService: {problems}") from None
        self.settings = settings
        self.engine = build_engine(settings)
        self.model = self.engine.model
        self.timeout = settings.llm.llm_timeout_seconds

    async def summarize(
        self,
        content: str,
        user_query: str | None = None,
        tool_name: str | None = None,
        max_output_tokens: int = 1000,
    ) -> str:
        """A summary of ``content`` in at most ``max_output_tokens`` tokens (content already
        within it comes back as is).

        Raises RuntimeError when the LLM fails for good (after its retries), ValueError for a
        budget out of bounds or content over MAX_INPUT_TOKENS.
        """
        request = Request(
            content=content,
            max_output_tokens=self.engine.budget.output_tokens(max_output_tokens),
            source=f"the output of the tool {tool_name}" if tool_name else "",
            query=user_query or "",
            on_failure="original",  # the cheapest fallback: raised below, never returned
        )
        started = time.perf_counter()
        outcome = await self.engine.summarize(request)
        log_completion("inprocess", request, outcome, model=self.model, started=started, tool_name=tool_name)
        if outcome.degraded:
            raise RuntimeError(f"summarization failed: {outcome.cause}")
        return outcome.text

    async def summarize_if_needed(
        self,
        content: object,
        max_tokens: int,
        user_query: str | None = None,
        tool_name: str | None = None,
    ) -> tuple[str, bool]:
        """``(text, was_summarized)``: ``content`` (serialized) as is when within
        ``max_tokens``, else its summary within them; never raises but for a ``max_tokens``
        that is not positive (see `mcp_summarizer.inprocess.if_needed.summarize_if_needed`)."""
        return await summarize_if_needed(
            content, max_tokens, tool_name=tool_name, user_query=user_query, engine=self.engine
        )

    async def aclose(self) -> None:
        """Close the LLM client of the running event loop (optional: a process may just exit)."""
        await self.engine.aclose()


@cache
def get_summarization_service() -> SummarizationService:
    """The process's service, configured from the environment on first use."""
    return SummarizationService()
