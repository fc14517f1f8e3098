"""A server's "your prompt is too long for my context" error, read: what it said its context
is and how many tokens it counted in the prompt, when it said.  Pure, no I/O.

Why: such a rejection is not a failure of the request but news about the server (a context
smaller than LLM_CONTEXT_TOKENS, or a tokenizer that makes more tokens than cl100k), which
the engine learns from and acts on (it splits the part and sends it again: `engine.context`).

The messages of the servers people run, as they really word them:

* llama.cpp: ``request (8892 tokens) exceeds the available context size (8192 tokens), try
  increasing it`` (type ``exceed_context_size_error``, with ``n_prompt_tokens`` and ``n_ctx`` in
  the body); older builds: ``the request exceeds the available context size, try increasing it``.
* OpenAI, vLLM before 0.10: ``This model's maximum context length is 8192 tokens. However, you
  requested 9000 tokens (8000 in the messages, 1000 in the completion). ...``; OpenAI also
  ``... However, your messages resulted in 9000 tokens. ...`` (code ``context_length_exceeded``).
* vLLM: ``This model's maximum context length is 8192 tokens. However, your request has 9000
  input tokens. ...`` and ``'max_tokens' or 'max_completion_tokens' is too large: 1000. This
  model's maximum context length is 8192 tokens and your request has 7500 input tokens (1000 >
  8192 - 7500)``.
* OpenRouter: ``This endpoint's maximum context length is 8192 tokens. However, you requested
  about 9000 tokens (8000 of text input, 1000 in the output). ...``.
* LiteLLM passes its provider's message on (``ContextWindowExceededError: ...``); Anthropic's:
  ``prompt is too long: 208310 tokens > 200000 maximum``, ``input length and `max_tokens`
  exceed context limit: 199759 + 8192 > 200000``.
* Ollama cuts a long prompt silently (nothing to read); where it refuses: ``the input length
  exceeds the context length``.  Hugging Face TGI (HTTP 422): ``Input validation error:
  `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 500
  `max_new_tokens` ``; LM Studio: ``Input length 6491 exceeds context length 1500``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mcp_summarizer.errors import ContextRejection

__all__ = ["ContextRejection", "read_context_error"]

# Statuses a context rejection comes with: 400 mostly, 413 (a proxy's too large), 422 (TGI).
_STATUSES = frozenset({400, 413, 422})
_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error", "context_window_exceeded"})
_N = r"(\d[\d,]*)"  # a count, as some servers write it: 8,192

# Whether a message is about the context at all (then any numbers in it are read).
_ABOUT_CONTEXT = re.compile(
    r"context (?:length|size|window|limit)|max_model_len|prompt is too long|"
    r"contextwindowexceeded|context_length_exceeded|`inputs` tokens \+ `max_new_tokens`",
    re.IGNORECASE,
)
# The server's context, in its tokens.
_LIMIT = [
    re.compile(p, re.IGNORECASE)
    for p in (
        rf"maximum context length is {_N}",
        rf"available context size \({_N} tokens\)",
        rf"tokens > {_N} maximum",
        rf"exceed context limit: \d+ \+ \d+ > {_N}",
        rf"must be <= {_N}",
        rf"exceeds? (?:the )?context length (?:of )?{_N}",
        rf"context (?:length|size|window) (?:of|is) {_N}",
        rf"{_N} maximum context length",
    )
]
# The prompt alone, as the server counted it.
_PROMPT = [
    re.compile(p, re.IGNORECASE)
    for p in (
        rf"request \({_N} tokens\) exceeds",
        rf"\({_N} in the messages",
        rf"{_N} of text input",
        rf"your request has {_N} input tokens",
        rf"your messages resulted in {_N} tokens",
        rf"prompt is too long: {_N} tokens",
        rf"exceed context limit: {_N} \+",
        rf"Given: {_N} `inputs` tokens",
        rf"input length {_N} exceeds",
        rf"prompt contains {_N} tokens",
        rf"input prompt \({_N} tokens\)",
    )
]
# The prompt and the answer asked for together, when the prompt alone is not given.
_REQUESTED = re.compile(rf"you requested (?:about )?{_N} tokens", re.IGNORECASE)


def read_context_error(status: int, message: str, body: object = None) -> ContextRejection | None:
    """The rejection in an HTTP error (its status, the error's message and the response body
    as parsed), or None when it is about something else."""
    if status not in _STATUSES:
        return None
    fields = _error_fields(body)
    code = str(fields.get("code") or "").lower()
    kind = str(fields.get("type") or "").lower()
    if not (_ABOUT_CONTEXT.search(message) or code in _CODES or kind in _CODES):
        return None
    limit = _int(fields.get("n_ctx")) or _first(_LIMIT, message)
    prompt = _int(fields.get("n_prompt_tokens")) or _first(_PROMPT, message)
    requested = _first([_REQUESTED], message) if prompt is None else None
    return ContextRejection(limit=limit, prompt=prompt, requested=requested)


def _error_fields(body: object) -> Mapping[str, Any]:
    """The error object of a body (``{"error": {...}}``, or the body itself when flat)."""
    if not isinstance(body, dict):
        return {}
    error = body.get("error")
    return error if isinstance(error, dict) else body


def _first(patterns: list[re.Pattern[str]], message: str) -> int | None:
    for pattern in patterns:
        if (m := pattern.search(message)) is not None:
            return _int(m.group(1).replace(",", ""))
    return None


def _int(value: object) -> int | None:
    """A positive count, from a JSON number or a string of digits; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, str) and value.isdigit() and len(value) <= 9:
        return int(value) or None
    return None
