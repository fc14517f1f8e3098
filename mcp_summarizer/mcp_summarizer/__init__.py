"""mcp-summarizer: compress large text for LLM agents over MCP.

The library surface for Python callers in the same process (the MCP server is the other one):

    from mcp_summarizer import summarize_if_needed
    text, summarized = await summarize_if_needed(tool_output, max_tokens=1000)

`tests/library/test_exported_members.py` pins this list: a name added here is public.
"""

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
from mcp_summarizer.inprocess import Summarized, serialize_output, summarize_if_needed, summarize_with_receipt
from mcp_summarizer.summarization import SummarizationService, estimate_tokens, get_summarization_service
from mcp_summarizer.summarize.engine import Kind, Outcome, Progress, Request
from mcp_summarizer.version import __version__

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
