"""The embedded result cache: one SQLite file under CACHE_DIR, shared safely by the processes
of one host (WAL, as the content store), kept for CACHE_TTL_SECONDS and within CACHE_MAX_MB by
dropping the least recently used answers first.

A cache is an optimisation: any SQLite error is logged once (until the cache works again)
and the request goes on as a miss.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from mcp_summarizer.cache.results import decode, encode
from mcp_summarizer.errors import ConfigError
from mcp_summarizer.store.dbfile import DBFile
from mcp_summarizer.tenant import Tenant

__all__ = ["FILE_NAME", "SQLiteResultCache"]

logger = logging.getLogger("mcp_summarizer")

FILE_NAME = "results.sqlite3"
_BUSY_MS = 5_000
_T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY, value TEXT NOT NULL, bytes INTEGER NOT NULL,
    expires REAL NOT NULL, used REAL NOT NULL);
CREATE INDEX IF NOT EXISTS results_used ON results(used);
CREATE INDEX IF NOT EXISTS results_expires ON results(expires);
"""


class SQLiteResultCache:
    name = "sqlite"

    def __init__(self, folder: Path, *, ttl_seconds: float, max_bytes: int) -> None:
        self.ttl = ttl_seconds
        self.max_bytes = max_bytes
        self.path = folder / FILE_NAME
        try:
            self._file = DBFile(self.path, _SCHEMA, busy_ms=_BUSY_MS, what="result cache")
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(
                f"CACHE_DIR={folder}: the result cache cannot be opened there ({exc}); "
                "set CACHE_DIR to a writable folder, or CACHE=off"
            ) from None
        self._lock = threading.Lock()
        self._failing = False
        self._failure = ""

    async def get(self, tenant: Tenant, key: str) -> dict[str, Any] | None:
        row = await self._run(lambda: self._get(tenant.key(key)))
        return await decode(row) if row else None

    async def put(self, tenant: Tenant, key: str, value: dict[str, Any]) -> None:
        text = await encode(value)
        if len(text) > self.max_bytes:
            return  # larger than the whole cache: not worth keeping
        await self._run(lambda: self._put(tenant.key(key), text))

    @property
    def failing(self) -> bool:
        return self._failing

    async def down(self, wait: float = 0.05) -> str:
        return self._failure if self._failing else ""

    @property
    def _db(self) -> sqlite3.Connection:
        return self._file.db

    async def aclose(self) -> None:
        await asyncio.to_thread(self._file.close)

    def entries(self) -> int:
        """Rows kept now (for tests and the operator)."""
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM results").fetchone()[0])

    async def _run(self, fn: Callable[[], _T | None]) -> _T | None:
        def locked() -> _T | None:
            with self._lock:
                try:
                    self._file.check()
                    done = fn()
                except (sqlite3.Error, OSError) as exc:
                    try:
                        if self._db.in_transaction:
                            self._db.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                    if not self._failing:
                        logger.warning("cache_unavailable", extra={"cache": self.name, "cause": str(exc)})
                    self._failing = True
                    self._failure = f"the result cache ({self.path}) failed: {exc}"
                    return None
                if self._failing:
                    logger.info("cache_recovered", extra={"cache": self.name})
                    self._failing = False
                return done

        return await asyncio.to_thread(locked)

    def _get(self, key: str) -> str | None:
        now = time.time()
        row = self._db.execute("SELECT value, expires FROM results WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        # A read's own writes (purge, when last used) are skipped if they cannot be made (a
        # full disk): the hit is still a hit.
        with contextlib.suppress(sqlite3.Error):
            if row[1] <= now:
                self._db.execute("DELETE FROM results WHERE key = ?", (key,))
            else:
                self._db.execute("UPDATE results SET used = ? WHERE key = ?", (now, key))
        return str(row[0]) if row[1] > now else None

    def _put(self, key: str, text: str) -> None:
        now = time.time()
        size = len(text.encode("utf-8", "surrogatepass"))
        self._db.execute("BEGIN IMMEDIATE")
        self._db.execute(
            "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?)", (key, text, size, now + self.ttl, now)
        )
        self._db.execute("DELETE FROM results WHERE expires <= ?", (now,))
        total = int(self._db.execute("SELECT coalesce(sum(bytes), 0) FROM results").fetchone()[0])
        while total > self.max_bytes:  # least recently used first, a batch at a time
            rows = self._db.execute(
                "SELECT key, bytes FROM results WHERE key != ? ORDER BY used LIMIT 100", (key,)
            ).fetchall()
            if not rows:
                break
            drop, freed = [], 0
            for old, size_ in rows:
                drop.append(old)
                freed += size_
                if total - freed <= self.max_bytes:
                    break
            self._db.executemany("DELETE FROM results WHERE key = ?", [(k,) for k in drop])
            total -= freed
        self._db.execute("COMMIT")
