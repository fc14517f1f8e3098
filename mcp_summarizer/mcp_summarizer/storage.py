"""The service's storage, opened together from the settings: the content store (`store`) and
the result cache (`cache`).  Here, above both, so neither package imports the other."""

from __future__ import annotations

import logging

from mcp_summarizer.cache import open_cache
from mcp_summarizer.cache.results import ResultCache
from mcp_summarizer.config import Settings
from mcp_summarizer.errors import ConfigError
from mcp_summarizer.store import ContentStore, cache_folder, open_store, store_limits
from mcp_summarizer.store.sqlite import SQLiteStore

__all__ = ["open_storage"]

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
