"""The real server as a subprocess on 127.0.0.1, as a user starts it: `python -m mcp_summarizer`,
its log lines collected."""

from __future__ import annotations

import sys
import tempfile

from shared.testing import ServiceProcess, free_port, scrubbed_environ, start_service

# Seconds /health may take to answer while a request runs: a freeze, not speed (bench/ has
# the latency targets).  At a load average of 8 on 2 cores one GIL-holding step stretched a
# poll to 2.3 s; the freezes these checks exist for held /health for minutes.
FREEZE_SECONDS = 5.0

RunningServer = ServiceProcess


def start_server(env: dict[str, str], args: list[str] | None = None) -> RunningServer:
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
    return start_service([sys.executable, "-m", "mcp_summarizer", *(args or [])], full_env, port)


def stop_server(server: RunningServer) -> None:
    server.stop()
