"""Where originals are kept for `expand`: the interface (`content`), its backends, and
`open_store`, which opens the configured one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp_summarizer.auth import load_tokens
from mcp_summarizer.config import Settings
from mcp_summarizer.store.content import ContentStore, Source, StoreStats
from mcp_summarizer.store.share import tenant_max_bytes
from mcp_summarizer.store.sqlite import SQLiteStore, default_cache_dir

__all__ = ["ContentStore", "Source", "StoreStats", "cache_folder", "open_store", "store_limits"]


def open_store(settings: Settings) -> ContentStore:
    """The configured store: Redis when REDIS_URL is set (shared by replicas), else a SQLite
    file under CACHE_DIR (default the user's cache folder), or in this process's memory with
    CACHE=off (which never touches CACHE_DIR).  ConfigError if CACHE_DIR cannot hold it."""
    if settings.redis_url:
        from mcp_summarizer.store.redis import RedisStore

        return RedisStore(settings.redis_url, **store_limits(settings))
    folder = None if settings.cache == "off" else cache_folder(settings)
    return SQLiteStore(folder, **store_limits(settings))


def cache_folder(settings: Settings) -> Path:
    return Path(settings.cache_dir).expanduser() if settings.cache_dir else default_cache_dir()


def store_limits(settings: Settings) -> dict[str, Any]:
    max_bytes = int(settings.source_store_max_mb * 1_000_000)
    return {
        "ttl_seconds": settings.source_ttl_seconds,
        "max_bytes": max_bytes,
        "tenant_max_bytes": tenant_max_bytes(
            max_bytes, settings.source_store_tenant_max_mb, len(load_tokens(settings))
        ),
        "secret": settings.source_id_secret.get_secret_value(),
    }
