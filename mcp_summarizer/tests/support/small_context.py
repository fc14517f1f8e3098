"""A server's context, for `FakeLLM(context=...)`: prompts counted with another tokenizer
(cl100k x ``ratio``, plus its chat template's framing) and those too long for the context
refused with the body the real server sends.

How each server decides, and words it (as of 2026):

* ``llama.cpp``: refuses a prompt that alone fills the context (``n_prompt_tokens >= n_ctx``,
  context shift off, the default), with ``n_prompt_tokens`` and ``n_ctx`` in the error; an
  answer that would run past the context stops there (``finish_reason: length``).
* ``llama.cpp-old``: the same check, in the words of older builds (no numbers).
* ``openai``, ``vllm``, ``openrouter``: refuse when the prompt and ``max_tokens`` together pass
  the context, in their own words (vLLM's new wording when the prompt alone is too long).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from tests.support.fake_llm import Reply, error

__all__ = ["TEMPLATE_TOKENS", "Dialect", "SmallContext", "refusal", "server_tokens"]

Dialect = Literal["llama.cpp", "llama.cpp-old", "openai", "vllm", "openrouter"]
TEMPLATE_TOKENS = 12  # ChatML's framing of a system and a user message, and the assistant's start


def server_tokens(cl100k_tokens: int, ratio: float) -> int:
    """The prompt as the server counts it."""
    return math.ceil(cl100k_tokens * ratio) + TEMPLATE_TOKENS


def refusal(dialect: Dialect, prompt: int, max_tokens: int, context: int) -> Reply | None:
    """The server's error for a prompt of ``prompt`` of its tokens asking for ``max_tokens``,
    or None when it takes the request."""
    if dialect.startswith("llama.cpp"):
        if prompt < context:
            return None
        if dialect == "llama.cpp-old":
            return error(
                400,
                message="the request exceeds the available context size, try increasing it",
                error_type="invalid_request_error",
            )
        return error(
            400,
            message=f"request ({prompt} tokens) exceeds the available context size ({context} tokens), "
            "try increasing it",
            error_type="exceed_context_size_error",
            extra={"n_prompt_tokens": prompt, "n_ctx": context},
        )
    if prompt + max_tokens <= context:
        return None
    if dialect == "openai":
        message = (
            f"This model's maximum context length is {context} tokens. However, you requested "
            f"{prompt + max_tokens} tokens ({prompt} in the messages, {max_tokens} in the completion). "
            "Please reduce the length of the messages or completion."
        )
        return error(400, message=message)
    if dialect == "vllm":
        if prompt > context:
            message = (
                f"This model's maximum context length is {context} tokens. However, your request has "
                f"{prompt} input tokens. Please reduce the length of the input messages."
            )
        else:
            message = (
                f"'max_tokens' or 'max_completion_tokens' is too large: {max_tokens}. This model's maximum "
                f"context length is {context} tokens and your request has {prompt} input tokens "
                f"({max_tokens} > {context} - {prompt})."
            )
        return error(400, message=message, error_type="BadRequestError", code="400")
    message = (
        f"This endpoint's maximum context length is {context} tokens. However, you requested about "
        f"{prompt + max_tokens} tokens ({prompt} of text input, {max_tokens} in the output). Please reduce "
        'the length of either one, or use the "middle-out" transform to compress your prompt automatically.'
    )
    return error(400, message=message)


@dataclass(frozen=True)
class SmallContext:
    """A server's context of ``tokens`` of its own, its tokenizer making ``ratio`` times
    cl100k's tokens, refusing as ``dialect`` does."""

    tokens: int
    ratio: float = 1.0
    dialect: Dialect = "llama.cpp"

    def count(self, cl100k_tokens: int) -> int:
        return server_tokens(cl100k_tokens, self.ratio)

    def refusal(self, prompt: int, max_tokens: int) -> Reply | None:
        return refusal(self.dialect, prompt, max_tokens, self.tokens)

    def answer_limit(self, prompt: int, max_tokens: int | None) -> int | None:
        """The most an answer may be: llama.cpp stops where the context ends."""
        if not self.dialect.startswith("llama.cpp"):
            return max_tokens
        room = self.tokens - prompt
        return room if max_tokens is None or max_tokens > room else max_tokens
