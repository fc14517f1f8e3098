"""The tools and resources that open what a summary cites: expand, search, and the excerpt
resource (``summarizer://excerpt/...``), all reading the content store for the caller's
tenant only.
"""

# No `from __future__ import annotations`: the tools' annotations hold values of this
# configuration (the budget ceiling), which the SDK can only read if they are evaluated here.
import logging
from collections.abc import Callable
from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.shared.uri_template import UriTemplate
from mcp.types import CallToolResult, ResourceTemplate
from pydantic import Field

from mcp_summarizer.answering.expand_answer import expand as expand_source
from mcp_summarizer.answering.search_answer import search as search_source
from mcp_summarizer.auth import tenant_of
from mcp_summarizer.drill.answer import URI_TEMPLATE
from mcp_summarizer.errors import InputError, StoreError, SummarizerError
from mcp_summarizer.store.content import ContentStore, check_id
from mcp_summarizer.tenant import Tenant

from .arguments import bounded
from .registry import EXPAND_ANNOTATIONS, Tools
from .results import text_result
from .service import Service, client_limits, rejected

__all__ = ["EXCERPT_TEMPLATE", "excerpt_id", "read_excerpt", "register"]

logger = logging.getLogger("mcp_summarizer")

# The excerpt resource, as the service and the proxy both list it.
EXCERPT_TEMPLATE = ResourceTemplate(
    uri_template=URI_TEMPLATE,
    name="excerpt",
    description="A stored excerpt's exact original text: the excerpt <handle>#<n> of a summary "
    "(or of summarize_documents, or a proxy result).",
    mime_type="text/markdown",
)
_TEMPLATE = UriTemplate.parse(URI_TEMPLATE)


def register(tools: Tools, service: Service) -> None:
    """expand, search and the excerpt resource."""
    ceiling = service.engine.budget.max_output
    tool, server = tools.tool, tools.server

    @tool(EXPAND_ANNOTATIONS)
    async def expand(
        source_id: Annotated[
            str,
            Field(
                description='An excerpt id from a summary, e.g. "guide~3fa2c1d9e0b1a2c3#2".', max_length=200
            ),
        ],
        ctx: Context,
        max_tokens: Annotated[
            int, bounded(f"Largest answer in tokens. 0 = the whole excerpt; at most {ceiling}.", ceiling)
        ] = 0,
        offset: Annotated[
            int,
            bounded("Where in the excerpt to start, in characters: a previous answer's next offset."),
        ] = 0,
    ) -> CallToolResult:
        """Open an excerpt a summary cited, [<handle>#<n>]: its exact original text.

        The answer starts with Source:, Title:, URL:, and the ids of the excerpts before and
        after it (to read on), and Status:, then a blank line and the text. An excerpt too long
        for one answer comes a page at a time: Status gives the next offset.
        """
        return await service.run("expand", _expand(service, ctx, source_id, max_tokens, offset))

    @tool(EXPAND_ANNOTATIONS)
    async def search(
        handle: Annotated[
            str,
            Field(
                description=(
                    'A handle or document id from a summary, e.g. "guide~3fa2c1d9e0b1a2c3" or '
                    '"r0123456789abcdef#0"; several, separated by commas, search a whole set.'
                ),
                max_length=8000,
            ),
        ],
        query: Annotated[str, Field(description="The words to look for.", max_length=1000)],
        ctx: Context,
        max_tokens: Annotated[
            int, bounded(f"Largest answer in tokens (default 2000, at most {ceiling}).", ceiling)
        ] = 2000,
    ) -> CallToolResult:
        """Find the passages of a summarized source that best match some words (BM25).

        Use it when a summary leaves out a detail: the answer lists the best-matching exact
        passages of the original, best first, each as "[excerpt id] (offset n) text"; expand
        that id with that offset to read on from the passage.
        """
        return await service.run("search", _search(service, ctx, handle, query, max_tokens))

    @server.resource(
        EXCERPT_TEMPLATE.uri_template,
        name=EXCERPT_TEMPLATE.name,
        description=EXCERPT_TEMPLATE.description,
        mime_type=EXCERPT_TEMPLATE.mime_type,
    )
    async def excerpt(handle: str, n: str) -> str:
        """The same excerpt, for the same tenant only, as expand opens."""
        return await read_excerpt(
            service.store,
            tenant_of(),
            f"{handle}#{n}",
            lambda exc: rejected(service, "resources/read", exc),
        )


async def _expand(
    service: Service, ctx: Context, source_id: str, max_tokens: int, offset: int
) -> CallToolResult:
    limits = client_limits(service.settings, ctx)
    try:
        opened = await expand_source(
            service.store, tenant_of(), source_id, max_tokens, offset=offset, limits=limits
        )
    except SummarizerError as exc:
        raise rejected(service, "expand", exc) from None
    service.metrics.answered("expand", "ok")
    logger.info(
        "expand_complete",
        extra={"tool": "expand", "source_id": opened.source.source_id, "tokens": opened.tokens},
    )
    return text_result(opened.text)


async def _search(service: Service, ctx: Context, handle: str, query: str, max_tokens: int) -> CallToolResult:
    limits = client_limits(service.settings, ctx)
    try:
        ceiling = service.engine.budget.max_output
        if max_tokens > ceiling:
            raise InputError(f"max_tokens={max_tokens} is over this server's MAX_OUTPUT_TOKENS={ceiling}")
        found = await search_source(
            service.store, tenant_of(), handle, query, max_tokens, limits=limits, indexes=service.indexes
        )
    except SummarizerError as exc:
        raise rejected(service, "search", exc) from None
    service.metrics.answered("search", "ok")
    logger.info(
        "search_complete",
        extra={"tool": "search", "passages": found.passages, "matched": found.matched},
    )
    return text_result(found.text)


def excerpt_id(uri: str) -> str | None:
    """The excerpt id a ``summary://{handle}/{n}`` URI names, or None for any other URI."""
    found = _TEMPLATE.match(uri)
    handle, n = (found or {}).get("handle"), (found or {}).get("n")
    return f"{handle}#{n}" if isinstance(handle, str) and isinstance(n, str) else None


async def read_excerpt(
    store: ContentStore,
    tenant: Tenant,
    source_id: str,
    refused: Callable[[SummarizerError], object] = lambda exc: None,
) -> str:
    """A resource read: the excerpt's exact text, as expand opens it; an unknown, expired or
    another tenant's id is the same error expand gives (``refused`` is told first)."""
    try:
        check_id(source_id)
        source = await store.get(tenant, source_id)
    except SummarizerError as exc:
        refused(exc)
        # Not there (for this tenant) is invalid params; the store failing is the server's error.
        raise (ResourceError if isinstance(exc, StoreError) else ResourceNotFoundError)(str(exc)) from None
    logger.info("resource_read", extra={"source_id": source.source_id})
    return source.text
