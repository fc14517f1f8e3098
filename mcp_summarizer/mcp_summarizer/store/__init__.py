"""Where originals are kept for `expand`: the interface (`content`) and its backends."""

from __future__ import annotations

from pathlib import Path

from mcp_summarizer.config import Settings
from mcp_summarizer.store.content import ContentStore, Source, StoreStats
from mcp_summarizer.store.sqlite import SQLiteStore, default_cache_dir

__all__ = ["ContentStore", "Source", "StoreStats", "open_store"]


def open_store(settings: Settings) -> ContentStore:
    """The configured store: Redis when REDIS_URL is set (shared by replicas), else a SQLite
    file under CACHE_DIR (default the user's cache folder)."""
    if settings.redis_url:
        from mcp_summarizer.store.redis import RedisStore

        return RedisStore(
            settings.redis_url,
            ttl_seconds=settings.source_ttl_seconds,
            max_bytes=int(settings.source_store_max_mb * 1_000_000),
            secret=settings.source_id_secret.get_secret_value(),
        )
    folder = Path(settings.cache_dir).expanduser() if settings.cache_dir else default_cache_dir()
    return SQLiteStore(
        folder,
        ttl_seconds=settings.source_ttl_seconds,
        max_bytes=int(settings.source_store_max_mb * 1_000_000),
        secret=settings.source_id_secret.get_secret_value(),
    )
