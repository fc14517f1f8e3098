"""The MCP servers and tools the researcher knows by name, and how to read their answers.

Every server and tool name lives here (the system prompt gets them through placeholders), so
a renamed tool is a one-line change.  The search server is ihor-sokoliuk's `mcp-searxng`
(`searxng_web_search(query, pageno, time_range, language, safesearch)`,
`web_url_read(url, startChar, maxLength, section, paragraphRange, readHeadings)`); the
summarizer is ../mcp_summarizer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = [
    "DEGRADABLE_SERVERS",
    "FETCH_URL",
    "SEARCH_SERVER",
    "SUMMARIZE",
    "SUMMARIZER_SERVER",
    "SUMMARIZE_FOR_EXTRACTION",
    "TOOL_NAMES",
    "WEB_SEARCH",
    "WEB_URL_READ",
    "FetchResult",
    "parse_fetch_result",
]

# Server names: the keys of "mcpServers" in config/mcp_config.json.
SEARCH_SERVER = "search"
SUMMARIZER_SERVER = "summarizer"
# Servers a research step can do without: when one is down the step goes on without it.
DEGRADABLE_SERVERS = frozenset({SUMMARIZER_SERVER})

# Tools of the search server (mcp-searxng).
WEB_SEARCH = "searxng_web_search"
WEB_URL_READ = "web_url_read"
# Tools of the summarizer server.
FETCH_URL = "fetch_url"
SUMMARIZE = "summarize"
SUMMARIZE_FOR_EXTRACTION = "summarize_for_extraction"

# The names the prompt files use as placeholders.
TOOL_NAMES = {
    "web_search_tool": WEB_SEARCH,
    "web_read_tool": WEB_URL_READ,
    "fetch_tool": FETCH_URL,
    "summarize_tool": SUMMARIZE,
    "extract_tool": SUMMARIZE_FOR_EXTRACTION,
}


@dataclass(frozen=True)
class FetchResult:
    """`fetch_url`'s answer, split into its header lines and the page content.

    `kind`: "full" (the whole page, within budget), "summarized", "not_summarized" (the
    summarizer could not summarize: raw text comes back), "raw" (raw=true was asked),
    "unknown" (a Status line this parser does not recognise, or none).
    """

    body: str
    url: str = ""
    title: str = ""
    status: str = ""
    kind: str = "unknown"
    reason: str = ""  # why it was not summarized, when the Status line says
    original_tokens: int | None = None  # the page's size in tokens, when the Status line says
    next_start_index: int | None = None  # where the next raw slice starts, when there is one
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def summarized(self) -> bool:
        return self.kind == "summarized"


_HEADER_LINE = re.compile(r"^([A-Za-z][A-Za-z -]{0,40}):[ \t]*(.*?)\s*$")
_KNOWN = {"url", "title", "status"}
_NUMBER = r"(\d{1,3}(?:[,_ ]\d{3})+|\d+)"  # 23,456 or 23456


def _int(text: str | None) -> int | None:
    digits = re.sub(r"[^\d]", "", text or "")
    return int(digits) if digits else None


def parse_fetch_result(text: str) -> FetchResult:
    """Split `fetch_url`'s answer: `Key: value` header lines, a blank line, the content.

    Tolerant by design: any header line may be missing, unknown keys are kept in `headers`,
    an unrecognised Status gives kind "unknown", and text that does not start with a known
    header is all content.
    """
    lines = text.split("\n")
    headers: dict[str, str] = {}
    end = 0
    for i, line in enumerate(lines):
        if not line.strip():
            end = i + 1
            break
        match = _HEADER_LINE.match(line)
        if match is None:
            headers = {}
            break
        headers[match.group(1).strip().lower()] = match.group(2)
    else:  # headers only, no blank line: accepted if they are ours
        end = len(lines)
    if not headers or not _KNOWN & headers.keys():
        return FetchResult(body=text)
    body = "\n".join(lines[end:])
    status = headers.get("status", "")
    lowered = status.lower()
    reason = ""
    original = next_index = None
    if lowered.startswith("full"):
        kind = "full"
        original = _int(m.group(1)) if (m := re.search(_NUMBER + r"\s*tokens", status)) else None
    elif lowered.startswith("summarized"):
        kind = "summarized"
        original = _int(m.group(1)) if (m := re.search(r"from\s+" + _NUMBER, status)) else None
        if "failed" in lowered and (m := re.search(r"\((.*)\)\s*$", status)) is not None:
            reason = m.group(1).strip()  # summarized offline: the summarizer's LLM failed
    elif lowered.startswith("not summarized"):
        kind = "not_summarized"
        if (m := re.search(r"\((.*?)\)(?:;|$)", status)) is not None:
            reason = m.group(1).strip()
        else:
            reason = status[len("not summarized") :].strip(" ;:-") or "not summarized"
    elif lowered.startswith("raw"):
        kind = "raw"
        reason = "raw text was requested"
    else:
        kind = "unknown"
        reason = f"unrecognised status: {status}" if status else "no status line"
    if kind in ("not_summarized", "raw"):
        original = _int(m.group(1)) if (m := re.search(r"\bof\s+" + _NUMBER, status)) else None
        next_index = _int(m.group(1)) if (m := re.search(r"start_index\s*=\s*(\d+)", status)) else None
    return FetchResult(
        body=body,
        url=headers.get("url", ""),
        title="" if headers.get("title", "") in ("(none)", "(no title)") else headers.get("title", ""),
        status=status,
        kind=kind,
        reason=reason,
        original_tokens=original,
        next_start_index=next_index,
        headers=headers,
    )
