"""A tiny upstream for the proxy's tenant tests: its one tool returns a long text (over any
budget), so the proxy stores it and answers with a handle.

    python big_upstream.py
"""

from mcp.server.mcpserver import MCPServer

server = MCPServer(name="big")


@server.tool(structured_output=False)
def dump(lines: int) -> str:
    """A long log: ``lines`` numbered lines."""
    return "\n".join(f"line {i}: the gate {i} of Stormwind opens at {i % 24}:00." for i in range(lines))


server.run("stdio")
