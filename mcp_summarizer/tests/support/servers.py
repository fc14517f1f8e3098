"""The real server as its own process on 127.0.0.1, its log lines collected: forked from a
server that imported the service once, then started by the console script's own `main`
(`shared.testing.fork_service` says why), or `exec_=True` for the whole start as a user
runs it, `python -m mcp_summarizer`."""

from __future__ import annotations

import sys
import tempfile

from shared.testing import ServiceProcess, fork_service, free_port, scrubbed_environ, start_service

# Seconds /health may take to answer while a request runs: a freeze, not speed (bench/ has
# the latency targets).  At a load average of 8 on 2 cores one GIL-holding step stretched a
# poll to 2.3 s; the freezes these checks exist for held /health for minutes.
FREEZE_SECONDS = 5.0

RunningServer = ServiceProcess


# What the serving commands import (cli/commands.py imports them when a command runs).
PRELOAD = (
    "mcp_summarizer.cli.commands",
    "mcp_summarizer.mcp.app",
    "mcp_summarizer.mcp.http_runner",
    "mcp_summarizer.proxy.app",
    "mcp_summarizer.proxy.server_list",
    "mcp_summarizer.process.ending",
    "mcp_summarizer.process.logs",
    # the OpenAI SDK, which the summarize modules import when they first call an LLM, with the
    # chat resources a service's start readies (`OpenAIBackend.warm`)
    "openai",
    "openai.resources.chat.completions",
)


def start_server(env: dict[str, str], args: list[str] | None = None, *, exec_: bool = False) -> RunningServer:
    port = free_port()
    # websum's names too (config.WEBSUM_ALIASES): a developer's API_KEY must not configure it.
    full_env = scrubbed_environ(
        ("OPENROUTER_", "LLM_", "MCP_SUMMARIZER_", "BASE_URL", "API_KEY", "MAX_TOKENS", "MAX_CONTEXT_LENGTH")
    )
    # Each server its own content store, unless a test shares one on purpose.  The result
    # cache is off unless a test turns it on: most tests send the same page again to see what
    # the LLM is asked, and a cached answer would ask it nothing (tests/cache/ test the cache).
    full_env.update(
        {
            "MCP_SUMMARIZER_PORT": str(port),
            "CACHE_DIR": tempfile.mkdtemp(prefix="summarizer-store-"),
            "CACHE": "off",
            **env,
        }
    )
    if exec_:
        return start_service([sys.executable, "-m", "mcp_summarizer", *(args or [])], full_env, port)
    return fork_service("mcp_summarizer.cli:main", args or [], full_env, port, preload=PRELOAD)


def stop_server(server: RunningServer) -> None:
    server.stop()
