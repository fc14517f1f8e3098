"""The result cache: answers already made, kept by a key of everything that decides them.
The configured backend is opened by `assembly.store_setup.open_cache`: None with CACHE=off, Redis when
REDIS_URL is set (shared by every replica), else a SQLite file in CACHE_DIR (shared by the
processes of one host)."""

from __future__ import annotations

from mcp_summarizer.cache.backend import ResultCache
from mcp_summarizer.cache.key import result_key

__all__ = ["ResultCache", "result_key"]
