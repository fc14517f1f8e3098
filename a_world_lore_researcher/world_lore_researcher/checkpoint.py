"""The research state of one zone, saved after every step in an embedded SQLite file.

One row per (zone, game): the completed topics and their research as JSON.  A rerun loads it
and goes on with the first topic not completed.  stdlib `sqlite3`, one short transaction per
save, called from a worker thread so the event loop stays free.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

__all__ = ["CheckpointStore", "ResearchCheckpoint", "Source", "TopicResearch", "zone_key"]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def zone_key(name: str) -> str:
    """'Elwynn Forest' -> 'elwynn_forest' (also the file-name slug)."""
    return re.sub(r"[^a-z0-9]+", "_", name.casefold()).strip("_") or "zone"


class Source(BaseModel):
    """One page (or tool answer) kept for a topic, as the tools returned it."""

    url: str
    title: str = ""
    tool: str  # the tool(s) that produced the content, e.g. "fetch_url" or "web_url_read"
    content: str
    tokens: int  # cl100k tokens of `content`
    summarized: bool  # the content is the summarizer's summary of the page
    status: str  # full | summarized | not_summarized | raw | unknown
    reason: str | None = None  # why the content is not a summary, when it should have been
    truncated: bool = False  # cut to RESEARCHER_UNSUMMARIZED_MAX_TOKENS
    original_tokens: int | None = None  # the page's size, when known


class TopicResearch(BaseModel):
    topic: str
    title: str
    instructions: str
    schema_hint: str
    content: str  # every source's content, with a heading naming it
    tokens: int
    sources: list[Source]
    searches: list[str] = Field(default_factory=list)
    tool_failures: list[str] = Field(default_factory=list)
    unavailable: dict[str, str] = Field(default_factory=dict)  # MCP servers left out, and why
    incomplete: str | None = None
    model_notes: str = ""  # the model's own closing note, kept apart from the content
    model_requests: int = 0
    completed_at: str = Field(default_factory=_now)


class ResearchCheckpoint(BaseModel):
    zone_name: str
    game: str
    completed: list[str] = Field(default_factory=list)  # topic keys, in completion order
    research: dict[str, TopicResearch] = Field(default_factory=dict)
    created_at: str = Field(default_factory=_now)
    updated_at: str = Field(default_factory=_now)

    @property
    def key(self) -> str:
        return zone_key(self.zone_name)


class CheckpointStore:
    """Checkpoints keyed by (zone, game) in one SQLite file (created with its folder)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._ready = False

    def _connect(self) -> sqlite3.Connection:
        if not self._ready:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=10)
        if not self._ready:
            with connection:
                connection.execute(
                    "CREATE TABLE IF NOT EXISTS checkpoints ("
                    " zone TEXT NOT NULL, game TEXT NOT NULL, data TEXT NOT NULL, updated_at TEXT NOT NULL,"
                    " PRIMARY KEY (zone, game))"
                )
            self._ready = True
        return connection

    def load_sync(self, zone: str, game: str) -> ResearchCheckpoint | None:
        with closing(self._connect()) as connection:
            row = connection.execute(
                "SELECT data FROM checkpoints WHERE zone = ? AND game = ?", (zone_key(zone), zone_key(game))
            ).fetchone()
        return ResearchCheckpoint.model_validate_json(row[0]) if row else None

    def save_sync(self, checkpoint: ResearchCheckpoint) -> None:
        checkpoint.updated_at = _now()
        with closing(self._connect()) as connection, connection:
            connection.execute(
                "INSERT OR REPLACE INTO checkpoints (zone, game, data, updated_at) VALUES (?, ?, ?, ?)",
                (
                    checkpoint.key,
                    zone_key(checkpoint.game),
                    checkpoint.model_dump_json(),
                    checkpoint.updated_at,
                ),
            )

    def delete_sync(self, zone: str, game: str) -> None:
        with closing(self._connect()) as connection, connection:
            connection.execute(
                "DELETE FROM checkpoints WHERE zone = ? AND game = ?", (zone_key(zone), zone_key(game))
            )

    async def load(self, zone: str, game: str) -> ResearchCheckpoint | None:
        return await asyncio.to_thread(self.load_sync, zone, game)

    async def save(self, checkpoint: ResearchCheckpoint) -> None:
        checkpoint.updated_at = _now()
        await asyncio.to_thread(self.save_sync, checkpoint.model_copy(deep=True))

    async def delete(self, zone: str, game: str) -> None:
        await asyncio.to_thread(self.delete_sync, zone, game)
