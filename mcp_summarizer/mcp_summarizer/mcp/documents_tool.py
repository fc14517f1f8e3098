"""The summarize_documents tool: many documents summarized at once, every claim cited.

The work is `documents.pipeline`'s; here the answer is made to fit the client's limits, and
returned with its structure (the topic index) beside the text.
"""

# No `from __future__ import annotations`: the tool's annotations hold values of this
# configuration (the budget ceiling), which the SDK can only read if they are evaluated here.
import asyncio
import logging
import time
from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field

from mcp_summarizer.auth import tenant_of
from mcp_summarizer.clients import fit
from mcp_summarizer.documents.compose import DocumentsOutcome
from mcp_summarizer.documents.model import DocumentIn, DocumentsSummary
from mcp_summarizer.documents.pipeline import MIN_BUDGET as DOCUMENTS_MIN_BUDGET
from mcp_summarizer.errors import SummarizerError
from mcp_summarizer.mcp.answers import cut_with_notice, made_within

from .arguments import bounded
from .registry import SUMMARIZE_ANNOTATIONS, Tools
from .results import documents_result
from .service import Service, answered, client_limits, progress_of, rejected
from .summarize_tools import budget_description

__all__ = ["register"]

logger = logging.getLogger("mcp_summarizer")


def register(tools: Tools, service: Service) -> None:
    """summarize_documents."""
    ceiling = service.engine.budget.max_output
    budget = budget_description(service)
    tool = tools.tool

    @tool(SUMMARIZE_ANNOTATIONS, structured=True)
    async def summarize_documents(
        documents: Annotated[
            list[DocumentIn],
            Field(
                description='The documents, e.g. [{"text": "...", "title": "Elwynn Forest", '
                '"url": "https://..."}]. Each is cut into excerpts with ids <doc id>~<version>#<n>.',
                max_length=10_000,
            ),
        ],
        ctx: Context,
        focus: Annotated[
            str,
            Field(description='What matters, e.g. "NPCs, factions, lore events". Ranks topics; empty = all.'),
        ] = "",
        max_output_tokens: Annotated[int, bounded(budget, ceiling)] = 0,
    ) -> Annotated[CallToolResult, DocumentsSummary]:
        """Summarize many documents at once, every claim traceable to its source.

        Returns a master summary, then a summary per topic (most relevant to focus first), at
        most max_output_tokens tokens in all. Claims cite excerpts inline as [doc#n]; open one
        with expand to read the original text. The structured result holds the topic index
        (clusters with their source_ids and relevance), the summaries and the documents.
        """
        return await service.run(
            "summarize_documents", _summarize_documents(service, ctx, documents, focus, max_output_tokens)
        )


async def _summarize_documents(
    service: Service, ctx: Context, documents: list[DocumentIn], focus: str, max_output_tokens: int
) -> CallToolResult:
    started = time.perf_counter()
    tool = "summarize_documents"
    limits = client_limits(service.settings, ctx)
    try:
        tenant = tenant_of()
        budget = limits.budget(service.engine.budget.output_tokens(max_output_tokens))

        async def make(room: int) -> DocumentsOutcome:
            return await service.documents.summarize(
                # Never under the pipeline's minimum for the fit, but a caller's own budget is checked.
                documents,
                focus,
                max(room, min(budget, DOCUMENTS_MIN_BUDGET)),
                progress_of(ctx),
                tenant=tenant,
            )

        outcome, fits = await made_within(make, lambda o: ("", o.text), fit.room(budget, limits), limits)
        if not fits:
            outcome.text = cut_with_notice(outcome.text, limits, budget)
    except SummarizerError as exc:
        raise rejected(service, tool, exc) from None
    answered(service, tool, outcome.degraded, outcome.input_tokens, outcome.output_tokens)
    coverage = outcome.structured.index.coverage
    logger.info(
        "documents_summary_complete",
        extra={
            "tool": tool,
            "documents": coverage.documents,
            "excerpts": coverage.excerpts,
            "clusters": coverage.clusters,
            "clusters_summarized": coverage.clusters_summarized,
            "documents_not_covered": len(coverage.documents_not_covered),
            "citations_removed": coverage.citations_removed,
            "json_retries": outcome.json_retries,
            "json_fallbacks": outcome.json_fallbacks,
            "input_tokens": outcome.input_tokens,
            "output_tokens": outcome.output_tokens,
            "llm_calls": outcome.llm_calls,
            "llm_prompt_tokens": outcome.llm_prompt_tokens,
            "model": service.engine.model if outcome.backend == "llm" else "extractive",
            "degraded": outcome.degraded,
            "cause": outcome.cause or None,
            "max_output_tokens": budget,
            **(outcome.fidelity.as_log() if outcome.fidelity else {}),
            "duration_ms": round((time.perf_counter() - started) * 1000, 1),
        },
    )
    # Fitting the structure to a small client re-serializes it step by step (tens to hundreds
    # of ms for 40 documents): off the event loop, which /health and other requests share.
    return await asyncio.to_thread(documents_result, outcome, service.engine.model, limits)
