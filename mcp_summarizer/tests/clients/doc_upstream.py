"""An upstream for the proxy's client-profile tests: one tool whose result is a long
reference page (markdown, many short lines, like a library's docs), as large as asked.

    python doc_upstream.py
"""

from mcp.server.mcpserver import MCPServer

server = MCPServer(name="docs")


def reference(sections: int) -> str:
    """Markdown of ``sections`` sections of 12 one-line entries: ~240 tokens, ~770 bytes and
    ~14 lines a section."""
    out = []
    for s in range(sections):
        out.append(f"## Section {s}: the os.path module, part {s}\n")
        for i in range(12):
            out.append(
                f"- `os.path.func_{s}_{i}(path)` returns the value number {s * 12 + i} for a path; "
                f"see also item {i}."
            )
        out.append("")
    return "\n".join(out)


@server.tool(structured_output=False)
async def read_reference(sections: int) -> str:
    """The reference page, ``sections`` sections long."""
    return reference(sections)


if __name__ == "__main__":
    server.run("stdio")
