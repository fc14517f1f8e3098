"""Calls run concurrently as one: the first failure cancels the rest and is raised as it is
(an LLMError in preference to the cancellations it caused), so a request that cannot be
answered stops spending LLM calls at once."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable
from typing import Any, TypeVar

from mcp_summarizer.errors import LLMError

__all__ = ["gather"]

_T = TypeVar("_T")


async def gather(calls: Iterable[Coroutine[Any, Any, _T]]) -> list[_T]:
    """Run ``calls`` concurrently and return their answers in order."""
    tasks: list[asyncio.Task[_T]] = []
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(c) for c in calls]
    except BaseExceptionGroup as eg:
        first = next((e for e in eg.exceptions if isinstance(e, LLMError)), eg.exceptions[0])
        raise first from None
    return [t.result() for t in tasks]
