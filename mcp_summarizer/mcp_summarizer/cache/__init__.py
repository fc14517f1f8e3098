"""The result cache: answers already made, kept by a key of everything that decides them.

`open_cache(settings, folder)` gives the configured backend: None with CACHE=off, Redis when
REDIS_URL is set (shared by every replica), else a SQLite file in ``folder`` (CACHE_DIR: shared by
the processes of one host).
"""

from __future__ import annotations

from pathlib import Path

from mcp_summarizer.cache.key import result_key
from mcp_summarizer.cache.results import ResultCache
from mcp_summarizer.config import Settings

__all__ = ["ResultCache", "open_cache", "result_key"]


def open_cache(settings: Settings, folder: Path) -> ResultCache | None:
    if settings.cache == "off":
        return None
    if settings.redis_url:
        from mcp_summarizer.cache.redis import RedisResultCache

        return RedisResultCache(settings.redis_url, ttl_seconds=settings.cache_ttl_seconds)
    from mcp_summarizer.cache.sqlite import SQLiteResultCache

    return SQLiteResultCache(
        folder,
        ttl_seconds=settings.cache_ttl_seconds,
        max_bytes=int(settings.cache_max_mb * 1_000_000),
    )
