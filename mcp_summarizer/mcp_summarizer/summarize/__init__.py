"""Text in, a summary within its token budget out: chunking, budgets, the LLM client, the
fair concurrency limit, the map-reduce engine and the embedded extractive summarizer.

The text tools it builds on (tokens, the markdown grammar, the lexicon, boilerplate
removal) are `mcp_summarizer.text`'s.  Nothing in here knows about MCP or the web."""
