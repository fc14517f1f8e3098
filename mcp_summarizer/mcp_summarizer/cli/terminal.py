"""Progress of a long `mcp-summarizer summarize` on the terminal: one bar per phase, drawn
with rich on stderr, from the request's first second: the text read (and its chunks cut), the
chunks mapped and each reduce level with an LLM; without one, the text read, parsed and
weighed and the summary's tokens chosen.  Only when stderr is a terminal: piped or
redirected, stderr carries the status lines and nothing else.
"""

from __future__ import annotations

import re
from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

__all__ = ["PhaseBars", "phase_of"]

# What the engine's phases are called on the terminal.
_LABELS = {
    "read": "text read",
    "map": "chunks mapped",
    "reduce": "final merge",
    "units": "text parsed",
    "weigh": "units weighed",
    "select": "tokens chosen",
    "facts": "facts checked",
    "start": "starting",
}
_COUNTS = re.compile(r"(\d[\d,]*)/(\d[\d,]*)")


def phase_of(message: str) -> str:
    """The phase an engine progress message is about: "map", "reduce level 2", "reduce",
    "read", "extractive summary" (the text before its first colon)."""
    return message.split(":", 1)[0].strip()


class PhaseBars:
    """An engine `Progress` callback that draws a bar per phase; a context manager.

    The LLM phases' reports count the calls of the whole request, the total growing as each
    reduce level is planned; they run one after the other, so a phase's calls are those
    counted since the previous one's last report.  Other phases say their own counts in
    their message ("units: 1,048,576/2,407,454 characters parsed"), and may run beside an
    LLM phase (the text is still read while its first chunks are mapped): each phase keeps
    its own bar.
    """

    def __init__(self, stream: TextIO) -> None:
        self._progress = Progress(
            TextColumn("{task.description:>20}"),
            BarColumn(),
            TextColumn("{task.fields[counts]}"),
            TimeElapsedColumn(),
            console=Console(file=stream),
        )
        self._tasks: dict[str, TaskID] = {}
        self._llm_phase = ""  # the LLM phase reported last
        self._base = 0.0  # calls of the LLM phases before it
        self._last = 0.0  # the calls' total at the last LLM report

    def __enter__(self) -> PhaseBars:
        self._progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.stop()

    async def __call__(self, done: float, total: float | None, message: str) -> None:
        self.show(done, total, message)

    def show(self, done: float, total: float | None, message: str) -> None:
        """A report, drawn at once (`__call__` is the engine's way to it)."""
        phase, _, rest = message.partition(":")
        phase = phase.strip()
        counts = _COUNTS.search(rest)
        if phase == "map" or phase.startswith("reduce"):
            if phase != self._llm_phase:  # the calls of the phases before are all done
                self._base = self._last if self._llm_phase else 0.0
                self._llm_phase = phase
            self._last = total if total is not None else done
            done, total = done - self._base, None if total is None else total - self._base
            shown = f"{done:.0f}/{total:.0f}" if total is not None else f"{done:.0f}"
        elif counts is not None:
            done, total = float(counts[1].replace(",", "")), float(counts[2].replace(",", ""))
            shown = rest.strip()
        else:
            shown = rest.strip()
        task = self._tasks.get(phase)
        if task is None:
            task = self._tasks[phase] = self._progress.add_task(
                _LABELS.get(phase, phase), total=None, counts=""
            )
        self._progress.update(task, completed=done, total=total, counts=shown, refresh=True)
