"""Text in, a summary within its token budget out: tokens, chunking, budgets, the LLM client,
the fair concurrency limit, the map-reduce engine and the embedded extractive summarizer.

Nothing in here knows about MCP or the web."""
