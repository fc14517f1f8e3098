"""The answer at a deadline: what a run has finished so far, merged with the embedded summary of
the rest, without another LLM call.

`Parts` is a run's bookkeeping, filled by the engine as it goes: the chunks once they are all
known, and each chunk's map summary as its call returns.  `partial` reads it at any moment
and makes an answer within the budget:

* The chunks are taken in order, in runs of neighbours that the LLM has summarized or not
  (calls start in order, so there are usually two: a summarized head and the rest).
* Each run gets a share of the budget in proportion to the source it spans.  A summarized
  run is its map summaries (extracted down to its share when they are longer); any other
  run is the extractive summary of its source (`summarize.extractive`), in its share.
* Too many runs for their shares to say anything (the finished calls scattered): all the
  summaries, then all the rest, two runs.
* Before the chunks are known (the request still waiting for room, or still being cut),
  the whole answer is the extractive summary.
* Its cost is bounded whatever the source: the extractive part reads at most `SAMPLE_CHARS`
  of it (longer text: evenly spaced windows of it, `sample`), so that the answer is ready
  in a few seconds even for megabytes of text with no white space, whose encoding alone
  takes a minute (8M characters of one letter: 45 s for the extractive summary of the whole,
  2 s for 400k characters of it).

The answer opens with the caller's notice line; `covered` says how much of the source the LLM
covered (the share of its characters in summarized chunks), and whether the rest was sampled.
A chunk whose LLM answers were rejected (`vetting`) counts as not summarized: its part is
extracted, and the answer's ``backend`` is "mixed" while any part is.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from mcp_summarizer.summarize import extractive
from mcp_summarizer.summarize.admission import estimate_tokens
from mcp_summarizer.summarize.chunker import Chunk
from mcp_summarizer.summarize.engine.model import Outcome, Request, Writer
from mcp_summarizer.text import tokens
from mcp_summarizer.text.lexicon import Lexicon

__all__ = [
    "GAP",
    "MIN_SHARE",
    "SAMPLE_CHARS",
    "LLMCoverage",
    "Parts",
    "Span",
    "covered",
    "partial",
    "sample",
    "shares",
    "spans",
]

GAP = "\n\n"  # between the notice and the text, and between runs
MIN_SHARE = 24  # tokens: a run given fewer says nothing
SAMPLE_CHARS = 400_000  # of the source, the most the extractive part reads (about 100k tokens)
_WINDOWS = 16  # a longer text is read in this many windows, evenly spaced


@dataclass(slots=True, eq=False)
class Parts:
    """One run's finished work, as the engine reports it (see the module docstring)."""

    content: str = ""  # the text the chunks are cut from (the source without its site chrome)
    chunks: list[Chunk] = field(default_factory=list)  # all of them, once known
    summaries: dict[Chunk, str] = field(default_factory=dict)  # each finished map call's answer
    outcome: Outcome | None = None  # the run's counts so far (its calls, its input tokens)

    def chunked(
        self, content: str, chunks: list[Chunk], outcome: Outcome, summaries: dict[Chunk, str]
    ) -> None:
        """The run's chunks are known; ``summaries`` is the run's own, filled as calls return."""
        self.content, self.chunks, self.outcome, self.summaries = content, list(chunks), outcome, summaries

    def snapshot(self) -> Parts:
        """What is finished now (the run goes on meanwhile)."""
        return Parts(self.content, list(self.chunks), dict(self.summaries), self.outcome)


@dataclass(frozen=True, slots=True)
class LLMCoverage:
    """How much of the source an answer's LLM part covers."""

    chunks: int  # chunks of the source (0: not cut yet)
    summarized: int  # of them, those whose LLM summary the answer holds
    share: float  # the share of the source's characters in those chunks
    sampled: bool = False  # the rest was longer than `SAMPLE_CHARS`: extracted from windows of it


@dataclass(frozen=True, slots=True)
class Span:
    """A run of neighbouring chunks: summarized by the LLM or not, and its source's size."""

    first: int  # index of its first chunk
    last: int  # index of its last chunk (inclusive)
    summarized: bool
    chars: int


def spans(chunks: list[Chunk], done: set[int], length: int) -> list[Span]:
    """``chunks`` (of a text of ``length`` characters) in runs of neighbours that are all in
    ``done`` (by index) or all not; each run's size runs to the next run's start (chunks may
    overlap)."""
    out: list[Span] = []
    for i in range(len(chunks)):
        summarized = i in done
        if out and out[-1].summarized == summarized:
            out[-1] = Span(out[-1].first, i, summarized, 0)
        else:
            out.append(Span(i, i, summarized, 0))
    starts = [chunks[s.first].start for s in out] + [length]
    return [Span(s.first, s.last, s.summarized, max(starts[k + 1] - starts[k], 1)) for k, s in enumerate(out)]


def shares(sizes: list[int], room: int) -> list[int]:
    """``room`` tokens shared out in proportion to ``sizes`` (largest remainders first), the
    whole of it handed out."""
    total = sum(sizes)
    if not sizes or total <= 0 or room <= 0:
        return [0] * len(sizes)
    exact = [room * s / total for s in sizes]
    out = [int(x) for x in exact]
    for k in sorted(range(len(sizes)), key=lambda k: out[k] - exact[k])[: room - sum(out)]:
        out[k] += 1
    return out


def covered(parts: Parts, source_chars: int = 0) -> LLMCoverage:
    """The share of the source the finished map summaries cover (``source_chars``: the
    source's length, for before its chunks are known)."""
    chunks = parts.chunks
    done = {i for i, c in enumerate(chunks) if c in parts.summaries}
    if not chunks or not done:
        length = len(parts.content) if chunks else source_chars
        return LLMCoverage(len(chunks), 0, 0.0, length > SAMPLE_CHARS)
    runs = spans(chunks, done, len(parts.content))
    summarized = sum(s.chars for s in runs if s.summarized)
    rest = sum(s.chars for s in runs if not s.summarized)
    share = round(summarized / max(summarized + rest, 1), 3)
    return LLMCoverage(len(chunks), len(done), share, rest > SAMPLE_CHARS)


def sample(text: str, limit: int, start: int = 0, end: int | None = None) -> str:
    """At most ``limit`` characters of ``text[start:end]``: all of it when short enough, else
    `_WINDOWS` windows of it evenly spaced, each starting and ending at a line end where it
    holds one, joined by blank lines (no copy of the whole is made)."""
    end = len(text) if end is None else end
    if end - start <= limit:
        return text[start:end]
    size = max(limit // _WINDOWS - len(GAP), 1)
    step = (end - start - size) / (_WINDOWS - 1)
    windows = []
    for k in range(_WINDOWS):
        a = start + int(k * step)
        b = a + size
        if a > start and text[a - 1] != "\n":  # to the next line start, if the window holds one
            line = text.find("\n", a, b)
            if line != -1 and line + 1 < b:
                a = line + 1
        if b < end:  # back to the last line end, likewise
            last = text.rfind("\n", a, b)
            if last > a:
                b = last
        windows.append(text[a:b])
    return GAP.join(windows)


async def partial(parts: Parts, request: Request, budget: int, notice: str) -> Outcome:
    """The answer to ``request`` from what ``parts`` holds now, in at most ``budget`` tokens,
    ``notice`` its first line (see the module docstring).  Its CPU work is done in a worker
    thread; no LLM call."""
    parts = parts.snapshot()  # the run goes on meanwhile
    chunks, summaries = parts.chunks, parts.summaries
    content = parts.content if chunks else request.content
    room = budget - tokens.count(notice + GAP)
    text, writer = await asyncio.to_thread(_text, content, chunks, summaries, request, room)
    full = tokens.truncate(f"{notice}{GAP}{text}" if text else notice, budget)
    done = parts.outcome
    if done is not None and chunks:
        input_tokens = done.input_tokens
    elif len(request.content) <= SAMPLE_CHARS:
        input_tokens = await asyncio.to_thread(tokens.count, request.content)
    else:  # not counted yet, and counting megabytes could take longer than the deadline leaves
        input_tokens = estimate_tokens(request.content)
    return Outcome(
        text=full,
        input_tokens=input_tokens,
        output_tokens=await asyncio.to_thread(tokens.count, full),
        num_chunks=len(chunks),
        llm_calls=done.llm_calls if done is not None else 0,
        cached_calls=done.cached_calls if done is not None else 0,
        llm_prompt_tokens=done.llm_prompt_tokens if done is not None else 0,
        boilerplate_tokens=done.boilerplate_tokens if done is not None else 0,
        length_stops=done.length_stops if done is not None else 0,
        backend=writer,
        notice=notice,
        # The rejections so far (none yet before the run is counted): the same facts, whenever
        # the deadline came.
        rejected=dict(done.rejected) if done is not None else {},
        parts_replaced=done.parts_replaced if done is not None else 0,
        llm_share=covered(parts, len(request.content)).share,
    )


def _text(
    content: str, chunks: list[Chunk], summaries: dict[Chunk, str], request: Request, room: int
) -> tuple[str, Writer]:
    """The merged text within ``room`` tokens, and what wrote it ("llm" if every chunk's part
    is its map summary, "mixed" if some are)."""
    focus = f"{request.focus} {request.query}".strip()
    lexicon = Lexicon()  # one for the request's summaries: each word or name classified once

    def extract(text: str, size: int) -> str:
        return extractive.summarize(text, size, focus=focus, kind=request.kind, lexicon=lexicon).strip()

    if room <= 0:
        return "", "none"
    done = {i for i, c in enumerate(chunks) if c in summaries}
    if not chunks or not done:
        return extract(sample(content, SAMPLE_CHARS), room), "extractive"
    runs = spans(chunks, done, len(content))
    gaps = tokens.count(GAP) * (len(runs) - 1)
    rest = sum(s.chars for s in runs if not s.summarized) or 1

    def read(s: Span) -> str:  # an unsummarized run's source, within its share of SAMPLE_CHARS
        limit = max(SAMPLE_CHARS * s.chars // rest, 1)
        return sample(content, limit, chunks[s.first].start, chunks[s.last].end)

    if len(runs) > 2 and (room - gaps) < MIN_SHARE * len(runs):  # scattered: two runs
        head = [i for i in range(len(chunks)) if i in done]
        left = [i for i in range(len(chunks)) if i not in done]
        every = -(-sum(len(chunks[i].text) for i in left) // SAMPLE_CHARS)  # a chunk of every so many
        pieces = [
            ("\n\n".join(summaries[chunks[i]] for i in head), sum(len(chunks[i].text) for i in head)),
            (
                sample("\n\n".join(chunks[i].text for i in left[::every]), SAMPLE_CHARS),
                sum(len(chunks[i].text) for i in left),
            ),
        ]
        gaps = tokens.count(GAP)
    else:
        pieces = [
            (
                "\n\n".join(summaries[chunks[i]] for i in range(s.first, s.last + 1))
                if s.summarized
                else read(s),
                s.chars,
            )
            for s in runs
        ]
    sizes = shares([size for _, size in pieces], max(room - gaps, 0))
    texts = [extract(text, size) for (text, _), size in zip(pieces, sizes, strict=True) if size > 0]
    return tokens.truncate(GAP.join(t for t in texts if t), room), "llm" if len(done) == len(
        chunks
    ) else "mixed"
