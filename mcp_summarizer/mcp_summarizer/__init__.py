"""mcp-summarizer: compress large text for LLM agents over MCP.

The library surface for Python callers in the same process (the MCP server is the other one):

    from mcp_summarizer import summarize_if_needed
    text, summarized = await summarize_if_needed(tool_output, max_tokens=1000)

`tests/library/test_exported_members.py` pins this list: a name added here is public.

The errors are imported at once (they are small); the rest when first used (PEP 562), so that
`mcp-summarizer --help` and any module of the package can be imported without loading the
engine, the SDKs and the tokenizer.
"""

import importlib as _importlib
import typing as _typing

from mcp_summarizer.errors import (
    BlockedAddressError,
    BusyError,
    ConfigError,
    ExpiredSource,
    FetchError,
    HostUnreachable,
    InputError,
    LLMError,
    RedisUnavailable,
    RobotsDisallowed,
    StoreError,
    SummarizerError,
    UnknownSource,
    UnsupportedContent,
    UpstreamError,
)
from mcp_summarizer.version import __version__

if _typing.TYPE_CHECKING:
    from mcp_summarizer.inprocess.if_needed import (
        Summarized,
        serialize_output,
        summarize_if_needed,
        summarize_with_receipt,
    )
    from mcp_summarizer.inprocess.ticket_api import (
        SummarizationService,
        estimate_tokens,
        get_summarization_service,
    )
    from mcp_summarizer.summarize.engine import Kind, Outcome, Progress, Request

# Where each name that is imported when first used lives.
_LAZY = {
    "Summarized": "mcp_summarizer.inprocess.if_needed",
    "serialize_output": "mcp_summarizer.inprocess.if_needed",
    "summarize_if_needed": "mcp_summarizer.inprocess.if_needed",
    "summarize_with_receipt": "mcp_summarizer.inprocess.if_needed",
    "SummarizationService": "mcp_summarizer.inprocess.ticket_api",
    "estimate_tokens": "mcp_summarizer.inprocess.ticket_api",
    "get_summarization_service": "mcp_summarizer.inprocess.ticket_api",
    "Kind": "mcp_summarizer.summarize.engine",
    "Outcome": "mcp_summarizer.summarize.engine",
    "Progress": "mcp_summarizer.summarize.engine",
    "Request": "mcp_summarizer.summarize.engine",
}


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcp_summarizer' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value  # the next lookup is an ordinary one
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "BlockedAddressError",
    "BusyError",
    "ConfigError",
    "ExpiredSource",
    "FetchError",
    "HostUnreachable",
    "InputError",
    "Kind",
    "LLMError",
    "Outcome",
    "Progress",
    "RedisUnavailable",
    "Request",
    "RobotsDisallowed",
    "StoreError",
    "SummarizationService",
    "Summarized",
    "SummarizerError",
    "UnknownSource",
    "UnsupportedContent",
    "UpstreamError",
    "__version__",
    "estimate_tokens",
    "get_summarization_service",
    "serialize_output",
    "summarize_if_needed",
    "summarize_with_receipt",
]
