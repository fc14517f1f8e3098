"""The `mcp-summarizer` console script (`commands`) and its progress on a terminal
(`terminal`).  `main` is here because the script's entry point names it
(``mcp_summarizer.cli:main``)."""

from mcp_summarizer.cli.commands import main

__all__ = ["main"]
