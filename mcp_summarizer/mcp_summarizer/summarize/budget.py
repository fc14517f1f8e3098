"""Token budgets: every share of the model's context named once, and the arithmetic that keeps
each LLM call of a map-reduce within it.  Pure functions and one frozen object, no I/O.

The rule everything here serves: each call satisfies
``ratio * (system + content + MESSAGE_OVERHEAD) + max_tokens <= LLM_CONTEXT_TOKENS``, and the
final answer is at most the caller's budget as counted by cl100k.

``ratio`` (`Budget.tokenizer_ratio`, ``1 + LLM_TOKENIZER_MARGIN``) is the margin for servers
that count with another tokenizer: everything here is counted in cl100k, and SmolLM2's
tokenizer makes 14-25% more tokens of the same text, Gemma's about 10% more.  Only the prompt
is scaled: ``max_tokens`` is already in the server's tokens, and an answer of that many of
them is at most as many cl100k tokens for such a tokenizer.  With ``ratio`` 1 every formula
is the plain one.  A server that shows a larger ratio or a smaller context than configured
(in a rejection) gives a `Budget` with its numbers (`engine.context`).

How the context (``LLM_CONTEXT_TOKENS``) is shared out, and why:

* ``INSTRUCTIONS_SHARE`` (1/8): a system prompt built from a caller's focus or schema hint;
  past that the instructions crowd out the text they are about.
* ``OUTPUT_SHARE`` (1/2 of what is left after framing and the largest prompt): the largest
  answer a request may ask for.  The last merge call of the tree writes it; it can, as long
  as what it reads is at least as large, so the other half stays for its input.  (The
  LangGraph map-reduce recipe makes the same bet; a smaller share would refuse answers that
  fit, such as 5,000 tokens at a 16k context.)
* ``FETCH_CONTEXT_SHARE`` (1/16): `fetch_url`'s ``context``, checked before the download.
  It goes into the map and the reduce prompts beside their own wording, so it gets half
  of what a prompt may take.
* ``REDUCE_OUTPUT_SHARE`` (1/3 of what a merge has left): an intermediate merge's output,
  so a group's input is at least twice its output and each reduce level at least halves the
  number of summaries (the tree is logarithmically deep and always ends).  Less when that
  level's answers could be more than the final merge reads: then each gets its share of it
  (`level_output_tokens`), and the final merge reads them all, a level sooner.

The first two shares, the framing (``MESSAGE_OVERHEAD``) and the ceiling they give
(`max_output_tokens`) are in `text.context_window`, where the settings check a budget against them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mcp_summarizer.errors import InputError
from mcp_summarizer.text.context_window import INSTRUCTIONS_SHARE, MESSAGE_OVERHEAD, max_output_tokens

__all__ = [
    "MAP_OUTPUT_FLOOR",
    "MESSAGE_OVERHEAD",
    "Budget",
    "level_output_tokens",
    "map_output_tokens",
    "map_share_settled",
    "max_output_tokens",
    "plan_groups",
    "reduce_output_tokens",
]

FETCH_CONTEXT_SHARE = 16
REDUCE_OUTPUT_SHARE = 3

# A chunk summary shorter than this loses too much to be worth merging.
MAP_OUTPUT_FLOOR = 500
# A chunk smaller than this is mostly prompt: shrinking chunks further would not help.
MIN_CHUNK_TOKENS = 256
# The smallest answer a call is asked for, whatever the shares say (tiny targets excepted).
_MIN_ANSWER = 16


@dataclass(frozen=True, slots=True, kw_only=True)
class Budget:
    """The token limits of one configured service, built once from its settings
    (`assembly.from_settings.budget`)."""

    context_tokens: int  # LLM_CONTEXT_TOKENS
    chunk_tokens: int  # DEFAULT_CHUNK_SIZE_TOKENS: shrunk per request if the prompt needs room
    overlap_tokens: int  # DEFAULT_CHUNK_OVERLAP_TOKENS
    default_output: int  # a summary's budget when the caller gives 0
    fetch_output: int  # fetch_url's budget for a page (FETCH_MAX_TOKENS)
    max_input: int  # MAX_INPUT_TOKENS
    # Server tokens per cl100k token of a prompt: 1 + LLM_TOKENIZER_MARGIN (or what a server showed).
    tokenizer_ratio: float = 1.0
    # LLM_CONTEXT_TOKENS when the server said its context is less (then ``context_tokens``), else 0.
    configured_context: int = 0

    @property
    def max_output(self) -> int:
        """The ceiling of any answer (see OUTPUT_SHARE)."""
        return max_output_tokens(self.context_tokens, self.tokenizer_ratio)

    @property
    def context_said(self) -> str:
        """Where the context's size comes from, for messages: the setting, or the server."""
        if self.configured_context:
            return (
                f"the LLM server's context of {self.context_tokens} tokens "
                f"(LLM_CONTEXT_TOKENS={self.configured_context} is more than it has)"
            )
        return f"LLM_CONTEXT_TOKENS={self.context_tokens}"

    @property
    def _counted(self) -> str:
        """How the prompts are counted, for messages, when not as cl100k counts them."""
        if self.tokenizer_ratio == 1.0:
            return ""
        return f", counted at {self.tokenizer_ratio:g} server tokens a cl100k token"

    def prompt_room(self, out_tokens: int) -> int:
        """cl100k tokens of system prompt and content a call answering in ``out_tokens`` may
        send, its framing set aside."""
        left = self.context_tokens - out_tokens
        scaled = left if self.tokenizer_ratio == 1.0 else int(left / self.tokenizer_ratio)
        return scaled - MESSAGE_OVERHEAD

    @property
    def max_instructions(self) -> int:
        """The largest system prompt a focus or schema hint may make (of LLM_CONTEXT_TOKENS: a
        caller's limit does not move with what a server turns out to have)."""
        return self.setting // INSTRUCTIONS_SHARE

    @property
    def max_fetch_context(self) -> int:
        """The largest `context` fetch_url accepts."""
        return self.setting // FETCH_CONTEXT_SHARE

    @property
    def setting(self) -> int:
        """LLM_CONTEXT_TOKENS, whatever a server said since."""
        return self.configured_context or self.context_tokens

    def output_tokens(self, asked: int, *, name: str = "max_output_tokens") -> int:
        """The budget of a request: ``asked``, or the default for 0; an error names the limit."""
        if asked < 0:
            raise InputError(f"{name} must be 0 (the default) or positive, got {asked}")
        if asked > self.max_output:
            raise InputError(
                f"{name}={asked} is over the limit of {self.max_output} "
                f"(half of what {self.context_said} leaves after the prompts{self._counted})"
            )
        return asked or self.default_output

    def check_input(self, input_tokens: int, *, so_far: bool = False) -> None:
        """``so_far``: ``input_tokens`` counts the part of the content encoded yet."""
        if input_tokens > self.max_input:
            size = f"over {input_tokens}" if so_far else f"{input_tokens}"
            raise InputError(
                f"content is {size} tokens, over the limit of MAX_INPUT_TOKENS="
                f"{self.max_input}; split it and summarize the parts"
            )

    # -- map ------------------------------------------------------------------------------

    def chunk_size(self, system_tokens: int, wrapper_tokens: int, target: int) -> int:
        """The configured chunk size, shrunk if needed so that a chunk, its prompt and the
        largest map answer fit the model's context."""
        room = self.prompt_room(target) - wrapper_tokens - system_tokens
        return max(MIN_CHUNK_TOKENS, min(self.chunk_tokens, room))

    def overlap(self, chunk_size: int) -> int:
        """Token-window overlap: at most a quarter of a chunk, so windows always advance."""
        return min(self.overlap_tokens, chunk_size // 4)

    # -- reduce ---------------------------------------------------------------------------

    def merge_room(self, system_tokens: int, out_tokens: int) -> int:
        """Tokens of summaries one merge call can read, given its prompt and answer sizes."""
        return self.prompt_room(out_tokens) - system_tokens

    def reduce_output(self, target: int, system_tokens: int) -> int:
        """max_tokens for an intermediate merge (see REDUCE_OUTPUT_SHARE)."""
        r = self.tokenizer_ratio
        room = self.context_tokens - MESSAGE_OVERHEAD - system_tokens
        if r != 1.0:
            # What reads twice ``out`` and writes ``out`` fits: r * (framing + system + 2 out)
            # + out <= context, i.e. out <= (context / r - framing - system) / (2 + 1 / r),
            # which `reduce_output_tokens` divides by 3: scaled to that.
            # (One token less: `prompt_room` rounds down.)
            room = int((self.context_tokens / r - MESSAGE_OVERHEAD - system_tokens - 1) * 3 / (2 + 1 / r))
        return reduce_output_tokens(target, room)


def map_output_tokens(target: int, num_chunks: int, chunk_tokens: int) -> int:
    """max_tokens for summarizing one chunk.

    An even share of the target when that is generous, never less than a useful floor
    (then the reduce phase merges), never more than the target, and at most half the
    chunk itself: a summary should compress.
    """
    share = max(target // max(num_chunks, 1), min(MAP_OUTPUT_FLOOR, target))
    return max(min(_MIN_ANSWER, target), min(share, target, max(chunk_tokens // 2, _MIN_ANSWER)))


def map_share_settled(target: int) -> int:
    """The number of chunks from which `map_output_tokens` no longer depends on it (the share
    is the floor from there on): map calls may start once that many chunks are known."""
    floor = min(MAP_OUTPUT_FLOOR, target)
    return target // (floor + 1) + 1


def reduce_output_tokens(target: int, room: int) -> int:
    """max_tokens for an intermediate merge, where ``room`` is the context left after the
    system prompt and framing: at most ``room / REDUCE_OUTPUT_SHARE``."""
    return max(min(_MIN_ANSWER, target), min(target, room // REDUCE_OUTPUT_SHARE))


def level_output_tokens(out_tokens: int, groups: int, final_room: int) -> int:
    """max_tokens for the merges of a reduce level of ``groups`` groups, where ``out_tokens``
    is `reduce_output_tokens` and ``final_room`` what the final merge can read.

    When the level's answers, each as long as allowed, could be too many for the final merge,
    each is asked for its even share of that merge's input instead, as long as the share is a
    useful summary (``MAP_OUTPUT_FLOOR``): the final merge then reads them all, which saves a
    level (a round of calls, and one more summary of summaries).  At a 32k context, say, 313
    chunk summaries make 6 groups whose 5,000-token answers come to 30,000 tokens for a
    27,500-token final merge: without the share, a second level merges 6 into 2 first.
    """
    share = final_room // max(groups, 1)
    if groups > 1 and groups * out_tokens > final_room and share >= MAP_OUTPUT_FLOOR:
        return min(out_tokens, share)
    return out_tokens


def plan_groups(sizes: Sequence[int], capacity: int) -> list[tuple[int, int]]:
    """Consecutive groups ``[start, end)`` of items whose sizes add up to at most ``capacity``.

    Greedy and order-preserving.  When every item is at most half the capacity, every group
    but the last has at least two items, so the number of items halves at each level and a
    reduce tree is logarithmically deep.
    """
    if any(s > capacity for s in sizes):
        raise ValueError(f"an item of {max(sizes)} tokens exceeds the group capacity {capacity}")
    groups: list[tuple[int, int]] = []
    start, total = 0, 0
    for i, size in enumerate(sizes):
        if i > start and total + size > capacity:
            groups.append((start, i))
            start, total = i, 0
        total += size
    if sizes:
        groups.append((start, len(sizes)))
    return groups
