"""The service's storage, opened from the settings: the content store (`store`), the
result cache (`cache`) and `search`'s kept indexes.  Here, above them and above `config`, so
that no package imports the settings or another's opener."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from mcp_summarizer.auth import load_tokens
from mcp_summarizer.cache.backend import ResultCache
from mcp_summarizer.config import Settings
from mcp_summarizer.errors import ConfigError
from mcp_summarizer.search.find import Indexes
from mcp_summarizer.store.content import ContentStore
from mcp_summarizer.store.share import tenant_max_bytes
from mcp_summarizer.store.sqlite import SQLiteStore, default_cache_dir

__all__ = ["cache_folder", "open_cache", "open_indexes", "open_storage", "open_store", "store_limits"]

logger = logging.getLogger("mcp_summarizer")


def open_storage(settings: Settings) -> tuple[ContentStore, ResultCache | None]:
    """The content store and the result cache (None: off).  A CACHE_DIR that cannot be used
    (not a folder, not writable) is one warning: the service starts with the cache off and
    the store in memory, rather than not at all."""
    try:
        store = open_store(settings)
        return store, open_cache(settings, cache_folder(settings))
    except ConfigError as exc:
        logger.warning(
            "cache_dir_unusable",
            extra={"reason": str(exc), "effect": "the result cache is off; sources are kept in memory"},
        )
        return SQLiteStore(None, **store_limits(settings)), None


def open_store(settings: Settings) -> ContentStore:
    """The configured store: Redis when REDIS_URL is set (shared by replicas), else a SQLite
    file under CACHE_DIR (default the user's cache folder), or in this process's memory with
    CACHE=off (which never touches CACHE_DIR).  ConfigError if CACHE_DIR cannot hold it."""
    if settings.redis.redis_url:
        from mcp_summarizer.store.redis import RedisStore

        return RedisStore(settings.redis.redis_url, **store_limits(settings))
    folder = None if settings.result_cache.cache == "off" else cache_folder(settings)
    return SQLiteStore(folder, **store_limits(settings))


def open_cache(settings: Settings, folder: Path) -> ResultCache | None:
    """The configured result cache: None with CACHE=off, Redis when REDIS_URL is set, else a
    SQLite file in ``folder``; either within CACHE_MAX_MB, each tenant within its share."""
    if settings.result_cache.cache == "off":
        return None
    max_bytes = int(settings.result_cache.cache_max_mb * 1_000_000)
    share = tenant_max_bytes(max_bytes, settings.result_cache.cache_tenant_max_mb, len(load_tokens(settings)))
    limits: dict[str, Any] = {
        "ttl_seconds": settings.result_cache.cache_ttl_seconds,
        "max_bytes": max_bytes,
        "tenant_max_bytes": share,
    }
    if settings.redis.redis_url:
        from mcp_summarizer.cache.redis import RedisResultCache

        return RedisResultCache(settings.redis.redis_url, **limits)
    from mcp_summarizer.cache.sqlite import SQLiteResultCache

    return SQLiteResultCache(folder, **limits)


def cache_folder(settings: Settings) -> Path:
    return Path(settings.store.cache_dir).expanduser() if settings.store.cache_dir else default_cache_dir()


def store_limits(settings: Settings) -> dict[str, Any]:
    max_bytes = int(settings.store.source_store_max_mb * 1_000_000)
    return {
        "ttl_seconds": settings.store.source_ttl_seconds,
        "max_bytes": max_bytes,
        "tenant_max_bytes": tenant_max_bytes(
            max_bytes, settings.store.source_store_tenant_max_mb, len(load_tokens(settings))
        ),
        "secret": settings.store.source_id_secret.get_secret_value(),
    }


def open_indexes(settings: Settings) -> Indexes:
    """`search`'s kept indexes, within SEARCH_INDEX_MAX_MB, each tenant within its share."""
    max_bytes = int(settings.store.search_index_max_mb * 1_000_000)
    share = tenant_max_bytes(max_bytes, settings.store.search_index_tenant_max_mb, len(load_tokens(settings)))
    return Indexes(max_bytes, share)
