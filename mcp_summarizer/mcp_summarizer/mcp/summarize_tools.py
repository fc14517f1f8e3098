"""The summarize tools: summarize and summarize_for_extraction.

Thin on purpose: the tool checks nothing the engine does not, hands the text to the answer
pipeline (`answering.text_summary`: the source kept behind a handle so a summary's lines can
cite it, the result cache, the client's deadline and limits), builds its result, and logs one
completion event.  The failure policy (ON_LLM_FAILURE) is the engine's: a degraded answer
arrives here already made and is only counted and logged.
"""

# No `from __future__ import annotations`: the tools' annotations hold values of this
# configuration (the budget ceiling), which the SDK can only read if they are evaluated here.
from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field

from mcp_summarizer.answering.text_summary import summary
from mcp_summarizer.errors import SummarizerError
from mcp_summarizer.summarize.deadline import Partial
from mcp_summarizer.summarize.engine import Kind, Outcome, Request, Strategy, log_completion

from .arguments import bounded, strategy_argument, strategy_used
from .registry import SUMMARIZE_ANNOTATIONS, Tools
from .results import cached_result
from .service import Service, answered, call_of, rejected

__all__ = ["budget_description", "register"]


def budget_description(service: Service) -> str:
    """max_output_tokens' description: its default and this server's ceiling."""
    budget = service.engine.budget
    return (
        f"Largest answer wanted, in tokens (cl100k). 0 = the default, {budget.default_output}. "
        f"At most {budget.max_output}."
    )


def register(tools: Tools, service: Service) -> None:
    """summarize and summarize_for_extraction."""
    _register_summarize(tools, service)
    _register_extraction(tools, service)


def _register_summarize(tools: Tools, service: Service) -> None:
    ceiling = service.engine.budget.max_output
    budget = budget_description(service)
    tool = tools.tool

    @tool(SUMMARIZE_ANNOTATIONS)
    async def summarize(
        content: Annotated[str, Field(description="The text to summarize. Markdown structure is used.")],
        ctx: Context,
        max_output_tokens: Annotated[int, bounded(budget, ceiling)] = 0,
        focus_areas: Annotated[
            str,
            Field(description='Topics to keep, comma-separated, e.g. "NPCs, factions, lore". Empty = all.'),
        ] = "",
        strategy: Annotated[
            str,
            strategy_argument(
                'How to cut long text: "semantic" follows headings, code blocks and '
                'paragraphs; "token" uses fixed windows, for text with no structure. '
                "Another value means semantic."
            ),
        ] = "semantic",
        citations: Annotated[
            bool,
            Field(description="true: lines cite the source excerpts they come from, [id]; expand opens one."),
        ] = True,
    ) -> CallToolResult:
        """Shorten a long text (a document, a page, a tool output) so it fits your context.

        Returns a summary of at most max_output_tokens tokens that keeps the key facts, names,
        numbers and relationships, steered towards focus_areas if given. Text that already fits
        comes back unchanged. A summary cites the source excerpts its lines come from as [id]
        and ends with the source's handle: expand an id to read the original. To keep what a
        specific schema needs, use summarize_for_extraction; to read a web page, use fetch_url
        (the page then never has to pass through your own output).
        """
        return await service.run(
            "summarize",
            _summarize(
                service,
                ctx,
                "summarize",
                content,
                max_output_tokens,
                "general",
                focus_areas,
                strategy_used("summarize", strategy),
                citations,
            ),
        )


def _register_extraction(tools: Tools, service: Service) -> None:
    ceiling = service.engine.budget.max_output
    budget = budget_description(service)
    tool = tools.tool

    @tool(SUMMARIZE_ANNOTATIONS)
    async def summarize_for_extraction(
        content: Annotated[str, Field(description="The text to condense. Markdown structure is used.")],
        schema_hint: Annotated[
            str,
            Field(
                description="What you will extract afterwards, e.g. "
                '"zone metadata, NPCs with faction allegiances, lore events".'
            ),
        ],
        ctx: Context,
        max_output_tokens: Annotated[int, bounded(budget, ceiling)] = 0,
        citations: Annotated[
            bool,
            Field(description="true: lines cite the source excerpts they come from, [id]; expand opens one."),
        ] = True,
    ) -> CallToolResult:
        """Condense a long text before you extract structured data from it.

        Keeps every detail that the schema hint asks for (names, relationships, numbers, dates,
        hierarchies) and drops navigation, boilerplate and unrelated content. Text that already
        fits comes back unchanged.
        """
        return await service.run(
            "summarize_for_extraction",
            _summarize(
                service,
                ctx,
                "summarize_for_extraction",
                content,
                max_output_tokens,
                "extraction",
                schema_hint,
                citations=citations,
            ),
        )


async def _summarize(
    service: Service,
    ctx: Context,
    tool: str,
    content: str,
    max_output_tokens: int,
    kind: Kind,
    focus: str,
    strategy: Strategy = "semantic",
    citations: bool = True,
) -> CallToolResult:
    call = call_of(service, ctx, tool)
    try:
        made = await summary(
            service.answering,
            call,
            content,
            max_output_tokens,
            kind=kind,
            focus=focus,
            strategy=strategy,
            citations=citations,
        )
    except SummarizerError as exc:
        raise rejected(service, tool, exc) from None
    if made.outcome is not None:  # made here (a cached one was counted and logged as it was found)
        outcome = made.outcome
        answered(service, tool, outcome.degraded, outcome.input_tokens, outcome.output_tokens)
        _log_completion(service, tool, made.request, outcome, call.started, made.partial)
    return cached_result(made.text, made.facts, made.links)


def _log_completion(
    service: Service, tool: str, request: Request, outcome: Outcome, started: float, partial: Partial | None
) -> None:
    log_completion(
        tool,
        request,
        outcome,
        model=service.engine.model,
        started=started,
        degraded_total=service.counters["degraded"],
        partial=partial is not None,
        **(partial.as_log() if partial is not None else {}),
    )
