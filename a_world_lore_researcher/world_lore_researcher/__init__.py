"""World-lore researcher: researches a game zone topic by topic with an LLM that has MCP tools
(web search, and the summarizer's fetch_url), checkpointing after every step."""

__version__ = "0.1.0"
