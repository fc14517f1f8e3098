"""The end of a serving process: once the server has finished and closed what it opened, the
process exits at once.

Python's own way out costs seconds that a supervisor (Docker, Kubernetes, a client that
started the server over stdio) waits for, with nothing left to do: the interpreter's teardown
collects garbage over every object the service ever made (2.5-7 s after uvicorn's "Finished
server process" on a loaded 2-core machine, gdb showing the main thread in the collector
called from `finalize_modules`), and it joins worker threads still running the CPU work of a
request the shutdown cancelled (chunking a long text cannot be interrupted).  So the logs are
flushed, stdout and stderr too, and the process leaves with `os._exit`; the OS frees the rest.

`os._exit` skips the `atexit` handlers, and coverage.py saves a measured process's data in one:
when the process runs under coverage (the test command measures every service it starts), that
data is saved first, or the service's own code would count as never run.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from contextlib import suppress
from typing import NoReturn

__all__ = ["CLOSE_SECONDS", "close_quietly", "end_process"]

logger = logging.getLogger("mcp_summarizer")

# A store or client that does not close within this is left to the OS: SQLite's committed
# writes are in its file already, and a Redis client holds nothing of ours.
CLOSE_SECONDS = 1.0


def end_process(status: int = 0) -> NoReturn:
    """Flush the logs and the standard streams, then exit with ``status``, now."""
    _save_coverage()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with suppress(Exception):  # a closed pipe: nothing more can be said anyway
            stream.flush()
    os._exit(status)


def _save_coverage() -> None:
    """Save the data of a coverage.py measurement running in this process, if there is one."""
    coverage = sys.modules.get("coverage")  # imported only when a measurement started it
    if coverage is None:
        return
    current = coverage.Coverage.current()
    if current is not None:
        with suppress(Exception):  # a failed save costs a measurement, never the exit
            current.stop()
            current.save()


async def close_quietly(closers: Mapping[str, Callable[[], Awaitable[None]]]) -> None:
    """Close each (named for the log), together, within CLOSE_SECONDS; a failure or a hang is
    logged, never raised: the process ends either way."""

    async def close(name: str, closer: Callable[[], Awaitable[None]]) -> None:
        try:
            await asyncio.wait_for(closer(), CLOSE_SECONDS)
        except Exception as exc:  # a shutdown goes on whatever one part says
            logger.warning("close_failed", extra={"part": name, "reason": str(exc) or type(exc).__name__})

    await asyncio.gather(*(close(name, closer) for name, closer in closers.items()))
