# TEMPORARY placeholder (not committed)
from mcp_summarizer.store.content import ContentStore, MemoryStore, Source

__all__ = ["ContentStore", "Source", "open_store"]


def open_store(settings: object) -> ContentStore:
    return MemoryStore()
