"""Where originals are kept for `expand`: the interface (`content`) and its backends; the
configured one is opened by `assembly.store_setup.open_store`."""

from __future__ import annotations

from mcp_summarizer.store.content import ContentStore, Source, StoreOptions, StoreStats

__all__ = ["ContentStore", "Source", "StoreOptions", "StoreStats"]
