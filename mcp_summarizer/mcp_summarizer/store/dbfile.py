"""One SQLite connection, to a file under CACHE_DIR or (no folder) to memory, that notices its
file deleted or replaced under it and opens a new one with the schema made again.

An open connection keeps writing to a deleted file's inode: every later record would be
invisible to the other processes and lost at restart, silently.  A `stat` before each use
(microseconds) catches that; the records in the deleted file are gone either way, and
`expand` then says "never stored" for them, which is true of the new file.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

__all__ = ["DBFile"]

logger = logging.getLogger("mcp_summarizer")


class DBFile:
    def __init__(self, path: Path | None, schema: str, *, busy_ms: int, what: str) -> None:
        self.path = path
        self.what = what
        self._schema = schema
        self._busy_ms = busy_ms
        self._identity: tuple[int, int] | None = None
        self.db = self._connect()

    def check(self) -> None:
        """Open the file again if it is not the one this connection has open."""
        if self.path is None or _identity(self.path) == self._identity:
            return
        logger.warning("store_file_recreated", extra={"what": self.what, "path": str(self.path)})
        try:
            self.db.close()
        except sqlite3.Error:
            pass
        self.db = self._connect()

    def close(self) -> None:
        self.db.close()

    def _connect(self) -> sqlite3.Connection:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(
            self.path or ":memory:",
            timeout=self._busy_ms / 1000,
            check_same_thread=False,
            isolation_level=None,
        )
        try:
            if self.path is not None:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute(f"PRAGMA busy_timeout={self._busy_ms}")
                db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at checkpoints, never corrupt
            db.executescript(self._schema)
        except sqlite3.Error:
            db.close()
            raise
        self._identity = _identity(self.path) if self.path is not None else None
        return db


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino
