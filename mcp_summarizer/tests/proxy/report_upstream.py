"""A tiny upstream for the proxy's citation tests: its one tool returns a long markdown report,
hard-wrapped at 72 characters as READMEs are, each sentence naming its own server and port.

    python report_upstream.py
"""

import textwrap

from mcp.server.mcpserver import MCPServer

server = MCPServer(name="reports")
TOPICS = ["billing", "search", "auth", "mail"]


def sentence(rack: int, s: int) -> str:
    n = 10 * rack + s
    return (
        f"Server node-{n:04d} listens on port {20000 + n} since 2019-08-{1 + s:02d} and serves "
        f"the {TOPICS[s % 4]} cluster of region {rack}."
    )


def report(racks: int) -> str:
    return "\n\n".join(
        f"## Rack {r}\n\n" + textwrap.fill(" ".join(sentence(r, s) for s in range(6)), 72)
        for r in range(racks)
    )


@server.tool(structured_output=False)
def racks(count: int) -> str:
    """A report on ``count`` racks of servers."""
    return report(count)


if __name__ == "__main__":
    server.run("stdio")
