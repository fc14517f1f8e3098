"""What the LLM server's context was found to be: the engine's budget, as configured until a
server's rejection says otherwise, then for the rest of the process (every later request
plans its chunks and merges with it).

A rejection teaches two things (`learn`): the server's context, when it gives one smaller
than LLM_CONTEXT_TOKENS; and how many of its tokens a cl100k token of prompt makes, when that
is more than LLM_TOKENIZER_MARGIN allows (from the prompt size it counted, or, when it gave
none, from the fact that the prompt did not fit).  Both only ever tighten the budget, so
learning ends.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from mcp_summarizer.errors import ContextOverflow
from mcp_summarizer.summarize.budget import Budget
from mcp_summarizer.summarize.context_error import ContextRejection
from mcp_summarizer.text import tokens

__all__ = ["MAX_RATIO", "ServerContext"]

logger = logging.getLogger(__name__)

MAX_RATIO = 4.0  # no tokenizer makes four times cl100k's tokens: past that, a server is confused
_HEADROOM = 1.05  # a ratio seen on one text, with room for the next (texts differ by a few percent)
# A ratio guessed from a refusal that counted nothing (older llama.cpp): the prompt did not
# fit, so a part is planned at the size its halves are sent again at (rather a part too small
# than another refusal).
_GUESS_HEADROOM = 2.0
_MIN_DEFAULT = 16  # the smallest answer a call is asked for (budget)


class ServerContext:
    def __init__(self, budget: Budget) -> None:
        self.configured = budget
        self.budget = budget

    @property
    def learned(self) -> bool:
        """Whether a server's rejection changed the budget."""
        return self.budget is not self.configured

    def learn_from(self, exc: ContextOverflow, system: str, user: str, max_tokens: int) -> None:
        """`learn` from the rejection of this call (its prompt counted here: rejections are rare)."""
        self.learn(exc.rejection, tokens.count(system) + tokens.count(user), max_tokens, str(exc))

    def learn(self, rejection: ContextRejection, prompt_tokens: int, max_tokens: int, said: str) -> bool:
        """Take in a rejection of a prompt of ``prompt_tokens`` cl100k tokens (system and
        content) asking for ``max_tokens``; ``said`` is the server's message (for the log).
        True when the budget changed."""
        b = self.budget
        limit = min(rejection.limit or b.context_tokens, b.context_tokens)
        counted = rejection.prompt
        if counted is None and rejection.requested is not None:
            counted = rejection.requested - max_tokens
        if counted is not None and counted > 0:
            seen = counted / max(prompt_tokens, 1) * _HEADROOM
        else:  # it did not fit: more server tokens than the limit leaves for the prompt
            seen = (limit - max_tokens) / max(prompt_tokens, 1) * _GUESS_HEADROOM
        ratio = max(b.tokenizer_ratio, min(MAX_RATIO, round(seen, 3)))
        if limit == b.context_tokens and ratio == b.tokenizer_ratio:
            return False
        learned = replace(b, context_tokens=limit, tokenizer_ratio=ratio)
        configured = self.configured
        learned = replace(
            learned,
            configured_context=configured.context_tokens if limit < configured.context_tokens else 0,
            # A default the server cannot give shrinks to what it can (as for a small model);
            # one too small for any prompt is said so by the calls (`overflow`).
            default_output=max(_MIN_DEFAULT, min(configured.default_output, learned.max_output)),
            fetch_output=max(_MIN_DEFAULT, min(configured.fetch_output, learned.max_output)),
        )
        self.budget = learned
        logger.warning(
            "llm_context_learned",
            extra={
                "llm_context_tokens": configured.context_tokens,
                "server_context_tokens": limit,
                "tokenizer_ratio": ratio,
                "configured_tokenizer_ratio": configured.tokenizer_ratio,
                "prompt_tokens": prompt_tokens,
                "max_tokens": max_tokens,
                "server_said": said,
            },
        )
        return True
