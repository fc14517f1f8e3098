"""The MCP surface: the app and its tools, result shaping, argument checks, HTTP and stdio.

Named after the protocol it serves; modules here import the SDK absolutely (``mcp.server``)
and each other relatively, so this package never stands in for the SDK's ``mcp``.
"""
