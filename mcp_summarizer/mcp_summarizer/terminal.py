"""Progress of a long `mcp-summarizer summarize` on the terminal: one bar per phase (the chunks
mapped, then each reduce level), drawn with rich on stderr.  Only when stderr is a terminal:
piped or redirected, stderr carries the status lines and nothing else.
"""

from __future__ import annotations

from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

__all__ = ["PhaseBars", "phase_of"]

# What the engine's phases are called on the terminal.
_LABELS = {"map": "chunks mapped", "reduce": "final merge"}


def phase_of(message: str) -> str:
    """The phase an engine progress message is about: "map", "reduce level 2", "reduce",
    "extractive summary" (the text before its first colon)."""
    return message.split(":", 1)[0].strip()


class PhaseBars:
    """An engine `Progress` callback that draws a bar per phase; a context manager.

    The engine reports ``(done, total, message)`` over all the LLM calls of a request, the
    total growing as each reduce level is planned.  The phases run one after the other, so a
    phase's calls are those counted since the previous phase's last report.
    """

    def __init__(self, stream: TextIO) -> None:
        self._progress = Progress(
            TextColumn("{task.description:>20}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(file=stream),
        )
        self._phase = ""
        self._task: TaskID | None = None
        self._base = 0.0  # calls of the phases before this one
        self._last = 0.0  # the total at the last report

    def __enter__(self) -> PhaseBars:
        self._progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.stop()

    async def __call__(self, done: float, total: float | None, message: str) -> None:
        phase = phase_of(message)
        llm = phase == "map" or phase.startswith("reduce")
        if phase != self._phase or self._task is None:
            # The calls of the phases before are all done when the next one reports.
            self._base = self._last if llm else 0.0
            self._task = self._progress.add_task(_LABELS.get(phase, phase), total=None)
            self._phase = phase
        base = self._base if llm else 0.0
        self._last = total if total is not None else done
        self._progress.update(
            self._task,
            completed=done - base,
            total=None if total is None else total - base,
            refresh=True,
        )
