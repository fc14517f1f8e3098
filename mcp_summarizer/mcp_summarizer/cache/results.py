"""The result cache's interface: every backend keeps JSON-able answers under string keys."""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["ResultCache"]


class ResultCache(Protocol):
    name: str  # "sqlite" or "redis", for logs and metrics

    async def get(self, key: str) -> dict[str, Any] | None:
        """The answer, or None: never stored, expired, evicted, or the backend unreachable
        (a cache that fails must never fail the request)."""

    async def put(self, key: str, value: dict[str, Any]) -> None:
        """Keep it (best effort: a backend that fails logs it and goes on)."""

    @property
    def failing(self) -> bool:
        """The backend failed at the last call (a lookup that gave None was an error)."""

    async def aclose(self) -> None: ...
