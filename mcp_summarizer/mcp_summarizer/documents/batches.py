"""Small excerpts share a map call: which ones go together, how a batch reads to the model,
and its JSON array answer checked entry by entry.  Pure, no I/O.

One map call per excerpt made a call of a one-line document: 2,000 of them, 2,000 calls for
5,000 tokens.  Here an excerpt small enough to leave room for another (at most half of what
a call may read, and of what it may write) is packed with its neighbours, in document order,
until the next one would pass either limit; a larger one keeps a call of its own (the single
excerpt prompt, as before).  So the calls follow the tokens read and written, not the count
of documents.

The model answers one object per excerpt, each naming the excerpt's id; Python matches the
entries to the excerpts by id, never by position, and validates each on its own: one bad
entry costs that excerpt, not its batch.  An entry is recovered from an answer cut short
(``finish_reason: length``) as long as it is whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ValidationError

from mcp_summarizer.documents.sources import Excerpt
from mcp_summarizer.text import tokens

__all__ = [
    "ENTRY_OVERHEAD",
    "ExcerptCost",
    "MapAnswer",
    "batch_content",
    "excerpt_block",
    "pack",
    "parse_batch",
    "parse_one",
    "slot",
]

# An answer entry besides its summary and its id: the keys, a topic of up to three words, a
# subtopic of up to six and a score (measured: 41 cl100k tokens), with a little to spare.
ENTRY_OVERHEAD = 44
_TAG = re.compile(r"<(/?)(excerpt)", re.IGNORECASE)
_DECODER = json.JSONDecoder()


class MapAnswer(BaseModel):
    summary: str
    topic: str
    subtopic: str = ""
    relevance_score: float = 1.0


@dataclass(frozen=True, slots=True)
class ExcerptCost:
    """One excerpt's place in a map call: what it costs the call to read and to write."""

    excerpt: Excerpt
    summary_tokens: int  # the most its summary may take
    read: int  # tokens of its `excerpt_block` (a few more if the escaping lengthened it)
    write: int  # tokens its answer entry may take


def _head(e: Excerpt, summary_tokens: int) -> str:
    title = f"Title: {e.title}\n\n" if e.title else ""
    return f'<excerpt id="{e.source_id}" max_tokens="{summary_tokens}">\n{title}'


def excerpt_block(e: Excerpt, summary_tokens: int) -> str:
    """An excerpt as one element of a batch.  Its text cannot open or close an element of its
    own: a document may not speak for another excerpt of the call."""
    body = _TAG.sub(lambda m: f"&lt;{m.group(1)}{m.group(2)}", e.for_model)
    return f"{_head(e, summary_tokens)}{body}\n</excerpt>"


def slot(e: Excerpt, summary_tokens: int) -> ExcerptCost:
    """An excerpt's costs, from its known size and its frame's (the text is not counted
    again: 300k tokens of pages would be another encode pass).  The margin covers the
    separator and a tag that `excerpt_block` escaped."""
    frame = tokens.count(_head(e, summary_tokens) + "\n</excerpt>\n\n")
    # A summary inside a JSON string takes more tokens than the same words outside one (each
    # newline, quote and backslash escaped): a quarter more covers code-heavy pages (measured:
    # up to 5% more on the Python and git manuals of bench/documents.py).
    write = summary_tokens + summary_tokens // 4 + ENTRY_OVERHEAD + tokens.count(e.source_id)
    return ExcerptCost(e, summary_tokens, e.tokens + frame + 4, write)


def pack(slots: Sequence[ExcerptCost], read_limit: int, write_limit: int) -> list[list[ExcerptCost]]:
    """Map calls: each large slot alone; small ones (at most half of either limit) packed in
    order, a call closed when the next would pass ``read_limit`` or ``write_limit``.  Calls
    come in the order of their first excerpt."""
    calls: list[tuple[int, list[ExcerptCost]]] = []
    batch: list[ExcerptCost] = []
    first = read = write = 0
    for i, s in enumerate(slots):
        if s.read * 2 > read_limit or s.write * 2 > write_limit:
            calls.append((i, [s]))
            continue
        if batch and (read + s.read > read_limit or write + s.write > write_limit):
            calls.append((first, batch))
            batch, read, write = [], 0, 0
        if not batch:
            first = i
        batch.append(s)
        read += s.read
        write += s.write
    if batch:
        calls.append((first, batch))
    return [c for _, c in sorted(calls, key=lambda c: c[0])]


def batch_content(batch: Sequence[ExcerptCost]) -> str:
    return "\n\n".join(excerpt_block(s.excerpt, s.summary_tokens) for s in batch)


def parse_one(answer: str) -> tuple[MapAnswer | None, str]:
    """A single map answer as JSON, leniently found (a code fence or a sentence around it is
    forgiven), then validated; else None and what was wrong, briefly."""
    start, end = answer.find("{"), answer.rfind("}")
    if start < 0 or end <= start:
        return None, "no JSON object"
    try:
        value = json.loads(answer[start : end + 1])
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc.msg}"
    return _validate(value)


def parse_batch(answer: str, ids: Sequence[str]) -> tuple[dict[str, MapAnswer], str]:
    """The valid entries of a batch answer by excerpt id, and what was wrong with the rest
    (empty when every id got a valid entry).  Entries of ids not asked for are ignored; the
    first entry of an id is the one that counts."""
    wanted = set(ids)
    found: dict[str, MapAnswer] = {}
    problems: list[str] = []
    for item in _entries(answer):
        if not isinstance(item, dict):
            problems.append("an entry that is not an object")
            continue
        sid = str(item.get("id", "")).strip().strip("[]").strip()
        if sid not in wanted or sid in found:
            continue
        parsed, error = _validate(item)
        if parsed is None:
            problems.append(f"{sid}: {error}")
        else:
            found[sid] = parsed
    missing = [i for i in ids if i not in found]
    if not missing:
        return found, ""
    if not problems and len(missing) == len(ids):
        problems.append("no JSON array of entries" if "[" not in answer else "no entry with a known id")
    listed = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
    return found, f"no valid entry for {listed}" + (f" ({'; '.join(problems[:3])})" if problems else "")


def _entries(answer: str) -> list[object]:
    """The objects of the first JSON array in ``answer``, one by one, as far as they are
    whole: an answer cut off in its tenth entry still gives the first nine."""
    start = answer.find("[")
    if start < 0:
        return []
    out: list[object] = []
    at, n = start + 1, len(answer)
    while at < n:
        while at < n and answer[at] in " \t\r\n,":
            at += 1
        if at >= n or answer[at] == "]":
            break
        try:
            value, at = _DECODER.raw_decode(answer, at)
        except json.JSONDecodeError:
            break
        out.append(value)
    return out


def _validate(value: object) -> tuple[MapAnswer | None, str]:
    try:
        parsed = MapAnswer.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        return None, f"{'.'.join(str(p) for p in first['loc']) or 'value'}: {first['msg']}"
    if not parsed.summary.strip() or not parsed.topic.strip():
        return None, "empty summary or topic"
    return parsed, ""
