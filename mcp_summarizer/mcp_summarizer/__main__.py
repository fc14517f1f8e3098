"""`python -m mcp_summarizer`: the console script."""

from mcp_summarizer.cli import main

main()
