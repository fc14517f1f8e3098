"""The server's instructions (what `initialize` tells a client the server is for), in a module
of their own: the command line's help shows them without importing the server."""

__all__ = ["INSTRUCTIONS"]

INSTRUCTIONS = (
    "Compresses large text (crawled pages, long tool outputs) so it fits an LLM context, "
    "summarizes many documents at once with every claim citing its source (expand opens a "
    "source), and fetches web pages as markdown, summarized when long. Content already within "
    "the budget comes back unchanged."
)
