"""The service's storage, opened from the settings: the content store (`store`), the
result cache (`cache`) and `search`'s kept indexes.  Here, above them and above `config`, so
that no package imports the settings or another's opener."""

from __future__ import annotations

import logging
from pathlib import Path

from mcp_summarizer.cache.backend import ResultCache
from mcp_summarizer.config import Settings
from mcp_summarizer.errors import ConfigError
from mcp_summarizer.search.find import Indexes
from mcp_summarizer.store.content import ContentStore, StoreOptions
from mcp_summarizer.store.share import tenant_max_bytes
from mcp_summarizer.store.sqlite import SQLiteStore, default_cache_dir

__all__ = ["cache_folder", "open_cache", "open_indexes", "open_storage", "open_store", "store_options"]

logger = logging.getLogger("mcp_summarizer")


def open_storage(settings: Settings, tenants: int) -> tuple[ContentStore, ResultCache | None]:
    """The content store and the result cache (None: off), for ``tenants`` bearer tokens'
    owners (0: authentication off).  A CACHE_DIR that cannot be used (not a folder, not
    writable) is one warning: the service starts with the cache off and the store in memory,
    rather than not at all."""
    options = store_options(settings, tenants)
    try:
        store = open_store(settings, options)
        return store, open_cache(settings, cache_folder(settings), tenants)
    except ConfigError as exc:
        logger.warning(
            "cache_dir_unusable",
            extra={"reason": str(exc), "effect": "the result cache is off; sources are kept in memory"},
        )
        return SQLiteStore(None, options), None


def open_store(settings: Settings, options: StoreOptions) -> ContentStore:
    """The configured store: Redis when REDIS_URL is set (shared by replicas), else a SQLite
    file under CACHE_DIR (default the user's cache folder), or in this process's memory with
    CACHE=off (which never touches CACHE_DIR).  ConfigError if CACHE_DIR cannot hold it."""
    if settings.redis.redis_url:
        from mcp_summarizer.store.redis import RedisStore

        return RedisStore(settings.redis.redis_url, options)
    folder = None if settings.result_cache.cache == "off" else cache_folder(settings)
    return SQLiteStore(folder, options)


def open_cache(settings: Settings, folder: Path, tenants: int) -> ResultCache | None:
    """The configured result cache: None with CACHE=off, Redis when REDIS_URL is set, else a
    SQLite file in ``folder``; either within CACHE_MAX_MB, each tenant within its share."""
    if settings.result_cache.cache == "off":
        return None
    ttl = settings.result_cache.cache_ttl_seconds
    max_bytes = int(settings.result_cache.cache_max_mb * 1_000_000)
    share = tenant_max_bytes(max_bytes, settings.result_cache.cache_tenant_max_mb, tenants)
    if settings.redis.redis_url:
        from mcp_summarizer.cache.redis import RedisResultCache

        return RedisResultCache(
            settings.redis.redis_url, ttl_seconds=ttl, max_bytes=max_bytes, tenant_max_bytes=share
        )
    from mcp_summarizer.cache.sqlite import SQLiteResultCache

    return SQLiteResultCache(folder, ttl_seconds=ttl, max_bytes=max_bytes, tenant_max_bytes=share)


def cache_folder(settings: Settings) -> Path:
    return Path(settings.store.cache_dir).expanduser() if settings.store.cache_dir else default_cache_dir()


def store_options(settings: Settings, tenants: int) -> StoreOptions:
    """The content store's options: SOURCE_TTL_SECONDS, SOURCE_STORE_MAX_MB and each of
    ``tenants``' share of it, SOURCE_ID_SECRET."""
    max_bytes = int(settings.store.source_store_max_mb * 1_000_000)
    return StoreOptions(
        ttl_seconds=settings.store.source_ttl_seconds,
        max_bytes=max_bytes,
        tenant_max_bytes=tenant_max_bytes(max_bytes, settings.store.source_store_tenant_max_mb, tenants),
        secret=settings.store.source_id_secret.get_secret_value(),
    )


def open_indexes(settings: Settings, tenants: int) -> Indexes:
    """`search`'s kept indexes, within SEARCH_INDEX_MAX_MB, each tenant within its share."""
    max_bytes = int(settings.store.search_index_max_mb * 1_000_000)
    return Indexes(max_bytes, tenant_max_bytes(max_bytes, settings.store.search_index_tenant_max_mb, tenants))
