"""The embedded result cache: one SQLite file under CACHE_DIR, shared safely by the processes
of one host (WAL, as the content store), kept for CACHE_TTL_SECONDS and within CACHE_MAX_MB by
dropping the least recently used answers first, each tenant's within its share of it
(CACHE_TENANT_MAX_MB; see `store.share`): a tenant past its share drops its own oldest, and
only shares that add up to more than the total drop another's (the one holding the most).

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

from mcp_summarizer.cache.backend import decode, encode
from mcp_summarizer.errors import ConfigError
from mcp_summarizer.store.dbfile import DBFile
from mcp_summarizer.tenant import Tenant

__all__ = ["FILE_NAME", "SQLiteResultCache"]

logger = logging.getLogger("mcp_summarizer")

FILE_NAME = "results.sqlite3"
_BUSY_MS = 5_000
_T = TypeVar("_T")

# An answer's tenant: its key's prefix up to the "/" (Tenant.key).
_TENANT = "substr(key, 1, instr(key, '/'))"
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY, value TEXT NOT NULL, bytes INTEGER NOT NULL,
    expires REAL NOT NULL, used REAL NOT NULL);
CREATE INDEX IF NOT EXISTS results_used ON results(used);
CREATE INDEX IF NOT EXISTS results_expires ON results(expires);
CREATE INDEX IF NOT EXISTS results_tenant_used ON results({_TENANT}, used);
"""
_EVICT_BATCH = 100


class SQLiteResultCache:
    name = "sqlite"

    def __init__(
        self, folder: Path, *, ttl_seconds: float, max_bytes: int, tenant_max_bytes: int | None = None
    ) -> None:
        self.ttl = ttl_seconds
        self.max_bytes = max_bytes
        self.tenant_max_bytes = max_bytes if tenant_max_bytes is None else min(tenant_max_bytes, max_bytes)
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
        if len(text.encode("utf-8", "surrogatepass")) > self.tenant_max_bytes:
            return  # larger than the tenant's whole share: not worth keeping
        await self._run(lambda: self._put(tenant.key(key), text, tenant.key("")))

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

    def _put(self, key: str, text: str, tenant: str) -> None:
        now = time.time()
        size = len(text.encode("utf-8", "surrogatepass"))
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        db.execute(
            "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?)", (key, text, size, now + self.ttl, now)
        )
        db.execute("DELETE FROM results WHERE expires <= ?", (now,))
        self._evict_from(tenant, key, lambda: self._held(tenant) - self.tenant_max_bytes)
        while self._total() > self.max_bytes:  # only when the shares add up to more than it
            most = db.execute(
                f"SELECT {_TENANT} FROM results GROUP BY 1 ORDER BY sum(bytes) DESC LIMIT 1"
            ).fetchone()
            if most is None or not self._evict_from(most[0], key, lambda: self._total() - self.max_bytes):
                break
        db.execute("COMMIT")

    def _held(self, tenant: str) -> int:
        query = f"SELECT coalesce(sum(bytes), 0) FROM results WHERE {_TENANT} = ?"
        return int(self._db.execute(query, (tenant,)).fetchone()[0])

    def _total(self) -> int:
        return int(self._db.execute("SELECT coalesce(sum(bytes), 0) FROM results").fetchone()[0])

    def _evict_from(self, tenant: str, keep: str, excess: Callable[[], int]) -> bool:
        """Drop ``tenant``'s least recently used answers (never ``keep``, the one just put)
        until ``excess`` is not positive; True if any was dropped."""
        dropped = False
        while (over := excess()) > 0:
            rows = self._db.execute(
                f"SELECT key, bytes FROM results WHERE {_TENANT} = ? AND key != ? ORDER BY used LIMIT ?",
                (tenant, keep, _EVICT_BATCH),
            ).fetchall()
            if not rows:
                break
            drop, freed = [], 0
            for old, size in rows:
                drop.append(old)
                freed += size
                if freed >= over:
                    break
            self._db.executemany("DELETE FROM results WHERE key = ?", [(k,) for k in drop])
            dropped = True
        return dropped
