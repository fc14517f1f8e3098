"""A tiny upstream for the proxy's cancellation test: its one tool waits, and records in a
file whether it finished or was cancelled (no third-party server shows that from outside).

    python slow_upstream.py RECORD_FILE
"""

import asyncio
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

record = Path(sys.argv[1])


def note(state: str) -> None:
    record.write_text(state)  # a few bytes: no need to leave the event loop


server = MCPServer(name="slow")


@server.tool()
async def wait(seconds: float) -> str:
    """Wait, then say so."""
    note("started")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        note("cancelled")
        raise
    note("finished")
    return "waited"


server.run("stdio")
