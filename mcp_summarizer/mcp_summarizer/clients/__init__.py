"""What each MCP client keeps of a tool result, and answers made to fit it."""
