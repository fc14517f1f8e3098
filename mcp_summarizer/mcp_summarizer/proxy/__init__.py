"""A summarizing proxy in front of any MCP servers (`mcp-summarizer proxy`)."""
