"""The proxy's list of upstream MCP servers, in the ``mcpServers`` format of Claude Code's
``.mcp.json`` (and Claude Desktop's config), so a user's existing file works as it is:

    {"mcpServers": {
        "fs":   {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/data"]},
        "docs": {"type": "http", "url": "https://example.com/mcp",
                 "headers": {"Authorization": "Bearer ${TOKEN}"}, "toolOutputMaxTokens": 4000}
    }}

``${VAR}`` and ``${VAR:-default}`` are expanded from the environment in every string, as
Claude Code does; an unset variable without a default is an error naming it (a request sent
with a literal ``${TOKEN}`` header would fail later, and far less clearly).  The one key of
our own, ``toolOutputMaxTokens``, overrides TOOL_OUTPUT_MAX_TOKENS for that server.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mcp_summarizer.errors import ConfigError
from mcp_summarizer.proxy.names import SEPARATOR

__all__ = ["ProxyConfig", "ServerSpec", "load_proxy_config"]

# Letters, digits, _ and -: a server's name may become a tool-name prefix.
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class _Entry(BaseModel):
    """One server as the file gives it (unknown keys of other clients are ignored)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    type: Literal["stdio", "http", "streamable-http", "sse"] | None = None
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    tool_output_max_tokens: int | None = Field(None, alias="toolOutputMaxTokens", ge=256)

    @model_validator(mode="after")
    def _one_transport(self) -> _Entry:
        if self.command and self.url:
            raise ValueError("give either command (a stdio server) or url (an HTTP server), not both")
        if not self.command and not self.url:
            raise ValueError('needs "command" (a stdio server) or "url" (an HTTP server)')
        if self.url and not re.match(r"^https?://", self.url):
            raise ValueError(f"url must start with http:// or https://, got {self.url[:100]!r}")
        if self.type == "stdio" and not self.command:
            raise ValueError('type "stdio" needs "command"')
        if self.type in ("http", "streamable-http", "sse") and not self.url:
            raise ValueError(f'type "{self.type}" needs "url"')
        return self


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """How to reach one upstream server, variables expanded."""

    name: str
    transport: Literal["stdio", "http", "sse"]
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    tool_output_max_tokens: int | None = None  # None: TOOL_OUTPUT_MAX_TOKENS

    def describe(self) -> str:
        """Where it runs, for logs and errors (never the headers or env: they hold secrets)."""
        return " ".join([self.command, *self.args])[:200] if self.transport == "stdio" else self.url


@dataclass(frozen=True, slots=True)
class ProxyConfig:
    servers: tuple[ServerSpec, ...]


def load_proxy_config(path: Path, environ: Mapping[str, str] | None = None) -> ProxyConfig:
    """Read and check ``path``; every problem is a ConfigError naming the file and the server."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read the proxy config {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"the proxy config {path} is not valid JSON: {exc}") from None
    return parse_proxy_config(raw, os.environ if environ is None else environ, source=str(path))


def parse_proxy_config(raw: Any, environ: Mapping[str, str], *, source: str = "config") -> ProxyConfig:
    servers = raw.get("mcpServers") if isinstance(raw, dict) else None
    if not isinstance(servers, dict) or not servers:
        raise ConfigError(f'{source}: needs an "mcpServers" object with at least one server')
    specs: list[ServerSpec] = []
    for name, body in servers.items():
        if not _NAME.match(name):
            raise ConfigError(
                f"{source}: server name {name[:80]!r} must be 1-64 letters, digits, _ or - "
                "(it may prefix tool names)"
            )
        if SEPARATOR in name or name.endswith("_"):
            raise ConfigError(
                f"{source}: server name {name!r} must not contain {SEPARATOR!r} nor end in '_': "
                f"'<server>{SEPARATOR}<tool>' must read one way only"
            )
        try:
            entry = _Entry.model_validate(_expand(body, environ, f"{source}: server {name!r}"))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'entry'}: {e['msg']}" for e in exc.errors()
            )
            raise ConfigError(f"{source}: server {name!r}: {problems}") from None
        if entry.command:
            specs.append(
                ServerSpec(
                    name,
                    "stdio",
                    command=entry.command,
                    args=tuple(entry.args),
                    env=dict(entry.env),
                    cwd=entry.cwd,
                    tool_output_max_tokens=entry.tool_output_max_tokens,
                )
            )
        else:
            specs.append(
                ServerSpec(
                    name,
                    "sse" if entry.type == "sse" else "http",
                    url=entry.url or "",
                    headers=dict(entry.headers),
                    tool_output_max_tokens=entry.tool_output_max_tokens,
                )
            )
    return ProxyConfig(tuple(specs))


def _expand(value: Any, environ: Mapping[str, str], where: str) -> Any:
    """``${VAR}`` and ``${VAR:-default}`` in every string of ``value``, recursively."""
    if isinstance(value, str):

        def one(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            if name in environ and (environ[name] or default is None):
                return environ[name]
            if default is not None:
                return default
            raise ConfigError(f"{where}: ${{{name}}} is not set (set it, or write ${{{name}:-default}})")

        return _VARIABLE.sub(one, value)
    if isinstance(value, list):
        return [_expand(v, environ, where) for v in value]
    if isinstance(value, dict):
        return {k: _expand(v, environ, where) for k, v in value.items()}
    return value
