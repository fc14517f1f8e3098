"""`config/mcp_config.json` → one `MCPToolset` per server, with its `timeout` applied.

The file has the usual `mcpServers` shape.  pydantic-ai's own `load_mcp_toolsets` drops each
entry's `timeout`, so a 120 s summarizer call would be cut at the library default; this loader
builds the toolsets itself and passes `timeout` as the tool-call read timeout.

    {"mcpServers": {"summarizer": {"url": "${MCP_SUMMARIZER_URL}", "timeout": 120}}}

`${VAR}` and `${VAR:-default}` are replaced in every string value (an unset or empty VAR takes
the default); a variable with neither a value nor a default is an error naming it and the file.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from world_lore_researcher.settings import ConfigError

if TYPE_CHECKING:
    from pydantic_ai.mcp import MCPToolset

__all__ = [
    "DEFAULT_MCP_CONFIG",
    "MCPConfigError",
    "MCPServerSpec",
    "build_toolset",
    "load_mcp_config",
    "with_bearer",
]

DEFAULT_MCP_CONFIG = Path(__file__).parent / "config" / "mcp_config.json"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-(.*?))?\}")


class MCPConfigError(ConfigError):
    """The MCP config file is unreadable, malformed, or refers to an unset variable."""


@dataclass(frozen=True)
class MCPServerSpec:
    name: str
    url: str
    timeout: float | None  # seconds a tool call may take (the read timeout); None: library default
    headers: Mapping[str, str] | None = None


def _expand(value: Any, env: Mapping[str, str], where: str, path: Path) -> Any:
    if isinstance(value, str):

        def substitute(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            found = env.get(name, "")
            if found:
                return found
            if default is not None:
                return default
            raise MCPConfigError(
                f"{path}: {where} uses ${{{name}}}, but {name} is not set; set {name} "
                f"(or write ${{{name}:-default}} in the file)"
            )

        return _VAR.sub(substitute, value)
    if isinstance(value, dict):
        return {k: _expand(v, env, f"{where}.{k}", path) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, env, f"{where}[{i}]", path) for i, v in enumerate(value)]
    return value


def _seconds(value: object, where: str, path: Path) -> float | None:
    """A positive number of seconds; a string is accepted so `"${VAR:-120}"` works."""
    if value is None:
        return None
    seconds = math.nan
    if isinstance(value, int | float | str) and not isinstance(value, bool):
        try:
            seconds = float(value)
        except ValueError:
            pass
    if not math.isfinite(seconds) or seconds <= 0:
        raise MCPConfigError(f"{path}: {where} must be a positive number of seconds, got {value!r}")
    return seconds


def load_mcp_config(path: Path | None = None, env: Mapping[str, str] | None = None) -> list[MCPServerSpec]:
    """Read and validate the config file, substituting variables from `env` (default: os.environ)."""
    path = Path(path or DEFAULT_MCP_CONFIG)
    env = os.environ if env is None else env
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MCPConfigError(f"cannot read the MCP config {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise MCPConfigError(
            f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict) or not servers:
        raise MCPConfigError(f'{path}: expected {{"mcpServers": {{"<name>": {{"url": ...}}, ...}}}}')
    specs = []
    for name, entry in servers.items():
        where = f"mcpServers.{name}"
        if not isinstance(entry, dict):
            raise MCPConfigError(f"{path}: {where} must be an object with a url")
        if "url" not in entry:
            kind = "a stdio command" if "command" in entry else "no url"
            raise MCPConfigError(f"{path}: {where} has {kind}; only HTTP servers (url) are supported")
        entry = _expand(entry, env, where, path)
        url = entry["url"]
        if not isinstance(url, str) or not re.match(r"^https?://[^\s/]+", url.strip()):
            raise MCPConfigError(f"{path}: {where}.url must be an http(s) URL, got {url!r}")
        timeout = _seconds(entry.get("timeout"), f"{where}.timeout", path)
        headers = entry.get("headers")
        if headers is not None and not (
            isinstance(headers, dict) and all(isinstance(v, str) for v in headers.values())
        ):
            raise MCPConfigError(f"{path}: {where}.headers must be an object of strings")
        specs.append(MCPServerSpec(name, url.strip(), timeout, headers))
    return specs


def with_bearer(specs: list[MCPServerSpec], server: str, token: str) -> list[MCPServerSpec]:
    """``specs`` with ``server``'s requests carrying ``Authorization: Bearer <token>`` (a
    summarizer started with AUTH_TOKENS answers 401 without it).  An empty token, or an
    Authorization header the config file already gives, leaves them as they are."""
    if not token:
        return specs
    out = []
    for spec in specs:
        headers = dict(spec.headers or {})
        if spec.name == server and not any(k.lower() == "authorization" for k in headers):
            spec = replace(spec, headers={**headers, "Authorization": f"Bearer {token}"})
        out.append(spec)
    return out


def build_toolset(spec: MCPServerSpec, *, connect_timeout: float = 5.0, **options: Any) -> MCPToolset:
    """One MCP toolset for `spec`: its `timeout` becomes the read timeout of every tool call."""
    from pydantic_ai.mcp import MCPToolset  # slow to import (fastmcp): only when a toolset is built

    kwargs: dict[str, Any] = {"id": spec.name, "init_timeout": connect_timeout, **options}
    if spec.timeout is not None:
        kwargs["read_timeout"] = spec.timeout
    if spec.headers:
        kwargs["headers"] = dict(spec.headers)
    return MCPToolset(spec.url, **kwargs)
