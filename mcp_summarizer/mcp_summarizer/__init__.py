"""mcp-summarizer: compress large text for LLM agents over MCP."""

__version__ = "0.1.0"
