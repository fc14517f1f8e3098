"""The limits agents put on a tool result, and which client is asking.  Pure, no I/O.

Agents cut a tool result that is over their own limits, from the middle, without telling the
server.  Each profile is what one client keeps (as found in July-November 2026):

- Claude Code warns past 10,000 tokens and refuses past MAX_MCP_OUTPUT_TOKENS (25,000 by
  default); a result over 50,000 characters is saved to a file and only a preview stays in
  context, unless the tool's or result's ``_meta["anthropic/maxResultSizeChars"]`` allows more
  (at most 500,000) (code.claude.com/docs/en/mcp; Claude Code 2.1.91 changelog).  Its
  clientInfo.name is ``claude-code``.
- Codex keeps 10 KiB or 256 lines of every tool output, MCP results included, and drops the
  middle (openai/codex#6544, #5913; GPT-5.2's harness: 10,000 bytes, #7906).  Its name is
  ``codex-mcp-client``.
- GitHub Copilot CLI keeps 10 KB of an MCP result, dropping the middle
  (github/copilot-cli#1732).  Its name is ``github-copilot-developer`` (#1268).
- OpenCode keeps 50 KB (51,200 bytes) or 2,000 lines of a tool output (anomalyco/opencode
  truncate.ts MAX_BYTES / MAX_LINES, #22565).  Its name is ``opencode`` (#2289).

Codex and Copilot get 10,000 bytes: under both 10 KB and 10 KiB.

A client also gives a tool call a time: Codex 60 s by default (``tool_timeout_sec``), and so
does every client built on the TypeScript SDK unless it raised the SDK's default (60 s, error
-32001).  ``seconds`` is such a known limit; `deadline` makes the answer's deadline of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["DEFAULT_DEADLINE_SECONDS", "PROFILES", "Limits", "Profile", "deadline", "detect", "limits_for"]

Profile = Literal["auto", "none", "claude-code", "codex", "copilot", "opencode"]

# A client's limit on a tool call, unless its profile knows another: the TypeScript SDK's 60 s,
# less a sixth (the answer must arrive, not just be sent).
DEFAULT_DEADLINE_SECONDS = 50.0
_DEADLINE_SHARE = 5 / 6  # of a client's known limit


@dataclass(frozen=True, slots=True)
class Limits:
    """The most an answer may be: tokens (a cap on the tool's own budget), bytes of UTF-8 and
    lines, and the seconds the client waits for it; None where there is no such limit (or it
    is not known)."""

    tokens: int | None = None
    bytes: int | None = None
    lines: int | None = None
    seconds: float | None = None

    def budget(self, tokens: int) -> int:
        """A tool's token budget under this cap."""
        return tokens if self.tokens is None else min(tokens, self.tokens)

    @property
    def sized(self) -> bool:
        """Whether bytes or lines are limited (tokens alone are the tools' own business)."""
        return self.bytes is not None or self.lines is not None

    def describe(self) -> str:
        parts = [
            f"{self.tokens:,} tokens" if self.tokens else "",
            f"{self.bytes:,} bytes" if self.bytes else "",
            f"{self.lines:,} lines" if self.lines else "",
        ]
        return " / ".join(p for p in parts if p) or "no limit"


PROFILES: dict[str, Limits] = {
    "claude-code": Limits(tokens=10_000),  # under the warning; maxResultSizeChars keeps it inline
    "codex": Limits(bytes=10_000, lines=256, seconds=60),
    "copilot": Limits(bytes=10_000),
    "opencode": Limits(bytes=51_200, lines=2_000),
}


def detect(client_name: str | None) -> str | None:
    """The profile of the client that sent this clientInfo.name, or None for any other."""
    name = (client_name or "").strip().lower()
    if not name:
        return None
    if name.startswith("claude-code") or name.startswith("claude code"):
        return "claude-code"
    if name.startswith("codex"):
        return "codex"
    if name.startswith("opencode"):
        return "opencode"
    if "copilot" in name:
        return "copilot"
    return None


def limits_for(
    profile: Profile, client_name: str | None, *, max_bytes: int = 0, max_lines: int = 0
) -> Limits:
    """The limits an answer must keep: the profile's (``auto``: the client's, when it said who it
    is) and TOOL_OUTPUT_MAX_BYTES / TOOL_OUTPUT_MAX_LINES (0: none), the tightest of each."""
    name = detect(client_name) if profile == "auto" else (None if profile == "none" else profile)
    chosen = PROFILES.get(name or "", Limits())
    return Limits(
        tokens=chosen.tokens,
        bytes=_tightest(chosen.bytes, max_bytes or None),
        lines=_tightest(chosen.lines, max_lines or None),
        seconds=chosen.seconds,
    )


def deadline(limits: Limits, setting: float | None) -> float | None:
    """Seconds a tool has to answer this client: TOOL_DEADLINE_SECONDS when set (0: no
    deadline, None), else five sixths of the client's known limit, else the default."""
    if setting is not None:
        return setting or None
    if limits.seconds is not None:
        return round(limits.seconds * _DEADLINE_SHARE, 3)
    return DEFAULT_DEADLINE_SECONDS


def _tightest(a: int | None, b: int | None) -> int | None:
    return b if a is None else (a if b is None else min(a, b))
