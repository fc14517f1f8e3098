"""The embedded content store: one SQLite file under CACHE_DIR (in memory with CACHE=off).

Why SQLite: it is in the standard library, survives restarts, and several processes on one
host (replicas, the CLI, a test run) can share one file safely: WAL mode lets readers work
while one writer writes, and a busy timeout makes a writer wait for another instead of
failing.  Calls run in a worker thread (`asyncio.to_thread`), one connection guarded by a
lock, so the event loop never waits on the disk.

* Time to live: each record expires SOURCE_TTL_SECONDS after it was last put (or renewed: a
  cached answer that cites it was served).  Expired records are found by an index, lazily on
  `get` and in small batches on `put`: never a scan of the whole table on a request.
* Size cap: the stored text is kept under SOURCE_STORE_MAX_MB, and each tenant's within its
  share (`share`); past it, the tenant's own least recently used records go first (read or
  written), in batches.  Running totals (all, each tenant's) are kept in the file itself, so
  every process sees the same ones.
* Reads never fail for a write: the bookkeeping a read does (when a record was last used)
  is skipped if it cannot be made (a full disk, a lock held too long).
* A file deleted under the service is noticed at the next call and made again (`dbfile`).
* Tombstones: a dropped record leaves its id, when and why for ``TOMBSTONE_SECONDS`` (at least a
  week, at most ``MAX_TOMBSTONES`` rows), so `expand` can say "expired" or "evicted" instead of
  "never stored".
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from mcp_summarizer.errors import ConfigError, ExpiredSource, StoreError, UnknownSource
from mcp_summarizer.store.content import Source, StoreOptions, StoreStats, check_id
from mcp_summarizer.store.dbfile import DBFile
from mcp_summarizer.store.ids import new_secret
from mcp_summarizer.store.share import check_put
from mcp_summarizer.tenant import Tenant

__all__ = ["SQLiteStore", "default_cache_dir"]

logger = logging.getLogger("mcp_summarizer")

_T = TypeVar("_T")
FILE_NAME = "content.sqlite3"
TOMBSTONE_SECONDS = 7 * 86_400.0
MAX_TOMBSTONES = 1_000_000
_BATCH = 500  # rows dropped per statement when expiring or evicting
_BUSY_MS = 10_000  # how long a writer waits for another process's write

# A record's tenant: its key's prefix up to the "/" (Tenant.key), "" for none.  (The index on
# it was once made on a quoted string instead, by mistake: dropped, and made as meant.)
_TENANT = "substr(source_id, 1, instr(source_id, '/'))"
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS sources (
    source_id TEXT PRIMARY KEY, doc_id TEXT NOT NULL, idx INTEGER NOT NULL,
    chunk_count INTEGER NOT NULL, title TEXT NOT NULL, url TEXT NOT NULL, text TEXT NOT NULL,
    bytes INTEGER NOT NULL, expires REAL NOT NULL, used REAL NOT NULL);
CREATE INDEX IF NOT EXISTS sources_expires ON sources(expires);
CREATE INDEX IF NOT EXISTS sources_used ON sources(used);
CREATE TABLE IF NOT EXISTS gone (source_id TEXT PRIMARY KEY, at REAL NOT NULL, why TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS gone_at ON gone(at);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO meta VALUES ('bytes', 0);
CREATE TABLE IF NOT EXISTS secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL);
DROP INDEX IF EXISTS sources_tenant_used;
CREATE INDEX IF NOT EXISTS sources_by_tenant ON sources({_TENANT}, used);
CREATE TABLE IF NOT EXISTS tenants (tenant TEXT PRIMARY KEY, bytes INTEGER NOT NULL);
INSERT OR IGNORE INTO tenants
    SELECT {_TENANT}, sum(bytes) FROM sources WHERE NOT EXISTS (SELECT 1 FROM tenants) GROUP BY 1;
"""


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/mcp-summarizer``, else ``~/.cache/mcp-summarizer``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mcp-summarizer"


class SQLiteStore:
    def __init__(self, folder: Path | None, options: StoreOptions) -> None:
        """``folder`` None keeps the records in this process's memory (CACHE=off)."""
        self.ttl = options.ttl_seconds
        self.max_bytes = max_bytes = options.max_bytes
        self.tenant_max_bytes = max_bytes if options.tenant_max_bytes is None else options.tenant_max_bytes
        self._configured = options.secret.encode()  # SOURCE_ID_SECRET
        self._known = ""  # the secret the file held when last asked
        self._failure = ""  # what the last call failed with ("" if it worked), for /health
        self.path = folder / FILE_NAME if folder is not None else None
        try:
            self._file = DBFile(self.path, _SCHEMA, busy_ms=_BUSY_MS, what="content store")
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(
                f"CACHE_DIR={folder}: the content store cannot be opened there ({exc}); "
                "set CACHE_DIR to a writable folder"
            ) from None
        self._lock = threading.Lock()

    @property
    def _db(self) -> sqlite3.Connection:
        return self._file.db

    async def put(self, tenant: Tenant, sources: Sequence[Source]) -> None:
        if not sources:
            return
        size = sum(len(s.text.encode("utf-8", "surrogatepass")) for s in sources)
        check_put(size, max_bytes=self.max_bytes, tenant_max_bytes=self.tenant_max_bytes)
        await self._run(lambda: self._put(tenant, sources))

    async def renew(self, tenant: Tenant, source_ids: Sequence[str]) -> bool:
        if not source_ids:
            return True
        return await self._run(lambda: self._renew(tenant, source_ids))

    async def get(self, tenant: Tenant, source_id: str) -> Source:
        check_id(source_id)
        return await self._run(lambda: self._get(tenant, source_id))

    async def id_secret(self) -> bytes:
        """SOURCE_ID_SECRET, else the one the file keeps, read every time: a file deleted under
        the service is made again (`dbfile`), and the secret this process knew is put back in
        it, so a process started later agrees (see `RedisStore.id_secret`)."""
        if self._configured:
            return self._configured
        try:
            self._known = await self._run(self._stored_secret)
        except StoreError:
            if not self._known:
                raise
        return self._known.encode()

    async def down(self, wait: float = 0.05) -> str:
        return self._failure

    async def stats(self) -> StoreStats:
        return await self._run(self._stats)

    async def aclose(self) -> None:
        await self._run(self._file.close)

    # -- in the worker thread ----------------------------------------------------------------

    async def _run(self, fn: Callable[[], _T]) -> _T:
        def locked() -> _T:
            with self._lock:
                try:
                    self._file.check()
                    done = fn()
                except (sqlite3.Error, OSError) as exc:
                    _roll_back(self._db)
                    self._failure = f"the content store ({self.path}) failed: {exc}"
                    raise StoreError(self._failure) from None
                self._failure = ""
                return done

        return await asyncio.to_thread(locked)

    def _stored_secret(self) -> str:
        """The secret this file keeps (made by whichever process asked first; put back by the
        first to ask after the file was made again).  A read, unless the file has none."""
        query = "SELECT value FROM secrets WHERE name = 'source_ids'"
        row = self._db.execute(query).fetchone()
        if row is None:
            offer = self._known or new_secret()
            self._db.execute("INSERT OR IGNORE INTO secrets VALUES ('source_ids', ?)", (offer,))
            row = self._db.execute(query).fetchone()
        return str(row[0])

    def _put(self, tenant: Tenant, sources: Sequence[Source]) -> None:
        now = time.time()
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        added = 0
        keys = [tenant.key(s.source_id) for s in sources]
        for key, s in zip(keys, sources, strict=True):
            size = len(s.text.encode("utf-8", "surrogatepass"))
            old = db.execute("SELECT bytes FROM sources WHERE source_id = ?", (key,)).fetchone()
            db.execute(
                "INSERT OR REPLACE INTO sources VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    s.doc_id,
                    s.index,
                    s.chunk_count,
                    s.title,
                    s.url,
                    s.text,
                    size,
                    now + self.ttl,
                    now,
                ),
            )
            added += size - (old[0] if old else 0)
        db.executemany("DELETE FROM gone WHERE source_id = ?", [(k,) for k in keys])
        db.execute("UPDATE meta SET value = value + ? WHERE key = 'bytes'", (added,))
        db.execute(
            "INSERT INTO tenants VALUES (?, ?) ON CONFLICT DO UPDATE SET bytes = bytes + excluded.bytes",
            (tenant.key(""), added),
        )
        self._expire(now)
        self._evict(now, tenant.key(""))
        db.execute("COMMIT")

    def _renew(self, tenant: Tenant, source_ids: Sequence[str]) -> bool:
        now = time.time()
        db = self._db
        keys = sorted({tenant.key(i) for i in source_ids})
        held = 0
        db.execute("BEGIN IMMEDIATE")
        for i in range(0, len(keys), _BATCH):
            batch = keys[i : i + _BATCH]
            marks = ",".join("?" * len(batch))
            held += db.execute(
                f"UPDATE sources SET expires = ?, used = ? WHERE expires > ? AND source_id IN ({marks})",
                (now + self.ttl, now, now, *batch),
            ).rowcount
        db.execute("COMMIT")
        return held == len(keys)

    def _get(self, tenant: Tenant, source_id: str) -> Source:
        now = time.time()
        db = self._db
        key = tenant.key(source_id)
        row = db.execute(
            "SELECT doc_id, idx, chunk_count, title, url, text, expires FROM sources WHERE source_id = ?",
            (key,),
        ).fetchone()
        if row is not None and row[6] > now:
            self._bookkeeping(
                lambda: db.execute("UPDATE sources SET used = ? WHERE source_id = ?", (now, key))
            )
            return Source(
                source_id=source_id,
                doc_id=row[0],
                index=row[1],
                chunk_count=row[2],
                title=row[3],
                url=row[4],
                text=row[5],
            )
        if row is not None:  # expired, not yet purged

            def purge() -> None:
                db.execute("BEGIN IMMEDIATE")
                self._drop("source_id = ?", (key,), now, "expired")
                db.execute("COMMIT")

            if not self._bookkeeping(purge):
                raise ExpiredSource(
                    f"source {source_id!r} expired (sources are kept SOURCE_TTL_SECONDS={self.ttl:g} s): "
                    "summarize the documents again"
                )
        gone = db.execute("SELECT at, why FROM gone WHERE source_id = ?", (key,)).fetchone()
        if gone is None:
            raise UnknownSource(
                f"no source {source_id!r}: it was never stored here (or was dropped over a week "
                "ago); check the id against the summary's source_ids"
            )
        ago = _ago(now - gone[0])
        if gone[1] == "evicted":
            raise ExpiredSource(
                f"source {source_id!r} was dropped {ago} ago to keep the content store under "
                f"SOURCE_STORE_MAX_MB={self.max_bytes / 1e6:g}: summarize the documents again"
            )
        raise ExpiredSource(
            f"source {source_id!r} expired {ago} ago (sources are kept SOURCE_TTL_SECONDS="
            f"{self.ttl:g} s): summarize the documents again"
        )

    def _bookkeeping(self, write: Callable[[], object]) -> bool:
        """A write a read makes (when a record was used, an expired one purged): tried without
        waiting on another writer, and skipped if it cannot be made (a full disk, a lock), so
        that a read never fails for it.  True if it was made."""
        db = self._db
        db.execute("PRAGMA busy_timeout=50")
        try:
            write()
        except sqlite3.Error as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            logger.info("content_store_read_bookkeeping_skipped", extra={"cause": str(exc)})
            return False
        finally:
            db.execute(f"PRAGMA busy_timeout={_BUSY_MS}")
        return True

    def _stats(self) -> StoreStats:
        entries = self._db.execute("SELECT count(*) FROM sources").fetchone()[0]
        size = self._db.execute("SELECT value FROM meta WHERE key = 'bytes'").fetchone()[0]
        return StoreStats(entries, size)

    def _expire(self, now: float) -> None:
        self._drop(
            "source_id IN (SELECT source_id FROM sources WHERE expires <= ? LIMIT ?)",
            (now, _BATCH),
            now,
            "expired",
        )
        cutoff = now - max(TOMBSTONE_SECONDS, self.ttl)
        self._db.execute(
            "DELETE FROM gone WHERE source_id IN (SELECT source_id FROM gone WHERE at < ? LIMIT ?)",
            (cutoff, _BATCH),
        )
        excess = self._db.execute("SELECT count(*) - ? FROM gone", (MAX_TOMBSTONES,)).fetchone()[0]
        if excess > 0:
            self._db.execute(
                "DELETE FROM gone WHERE source_id IN (SELECT source_id FROM gone ORDER BY at LIMIT ?)",
                (excess,),
            )

    def _evict(self, now: float, tenant: str) -> None:
        """Drop ``tenant``'s own least recently used records until it is within its share,
        then, while the total is over the cap (shares that add up to more), those of the
        tenant holding the most: only as many as that takes (see `share`)."""
        self._evict_from(tenant, lambda: self._held(tenant) - self.tenant_max_bytes, now)
        while self._total() > self.max_bytes:
            most = self._db.execute("SELECT tenant FROM tenants ORDER BY bytes DESC LIMIT 1").fetchone()
            if most is None or not self._evict_from(most[0], lambda: self._total() - self.max_bytes, now):
                break

    def _held(self, tenant: str) -> int:
        row = self._db.execute("SELECT bytes FROM tenants WHERE tenant = ?", (tenant,)).fetchone()
        return int(row[0]) if row else 0

    def _evict_from(self, tenant: str, excess: Callable[[], int], now: float) -> bool:
        """Drop ``tenant``'s least recently used records until ``excess`` is not positive;
        True if any was dropped."""
        dropped = False
        while (over := excess()) > 0:
            rows = self._db.execute(
                f"SELECT source_id, bytes FROM sources WHERE {_TENANT} = ? ORDER BY used LIMIT ?",
                (tenant, _BATCH),
            ).fetchall()
            if not rows:
                break
            victims, freed = [], 0
            for sid, size in rows:
                victims.append(sid)
                freed += size
                if freed >= over:
                    break
            marks = ",".join("?" * len(victims))
            self._drop(f"source_id IN ({marks})", tuple(victims), now, "evicted")
            dropped = True
        return dropped

    def _total(self) -> int:
        return int(self._db.execute("SELECT value FROM meta WHERE key = 'bytes'").fetchone()[0])

    def _drop(self, where: str, args: tuple[object, ...], now: float, why: str) -> None:
        """Delete the records ``where`` matches (a fixed condition of this module's, never
        user text), subtract their size, leave their tombstones."""
        rows = self._db.execute(f"SELECT source_id, bytes FROM sources WHERE {where}", args).fetchall()
        if not rows:
            return
        self._db.executemany("DELETE FROM sources WHERE source_id = ?", [(r[0],) for r in rows])
        self._db.executemany("INSERT OR REPLACE INTO gone VALUES (?, ?, ?)", [(r[0], now, why) for r in rows])
        self._db.execute("UPDATE meta SET value = value - ? WHERE key = 'bytes'", (sum(r[1] for r in rows),))
        freed: dict[str, int] = {}
        for sid, size in rows:
            name = sid[: sid.find("/") + 1]
            freed[name] = freed.get(name, 0) + size
        self._db.executemany(
            "UPDATE tenants SET bytes = bytes - ? WHERE tenant = ?", [(b, t) for t, b in freed.items()]
        )


def _roll_back(db: sqlite3.Connection) -> None:
    try:
        if db.in_transaction:
            db.execute("ROLLBACK")
    except sqlite3.Error:  # closed, or the rollback itself failed: nothing more to undo
        pass


def _ago(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
