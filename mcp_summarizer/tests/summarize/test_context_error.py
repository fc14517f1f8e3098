"""Servers' context rejections read, in the words the real servers use (and other 400s not)."""

from __future__ import annotations

import pytest

from mcp_summarizer.summarize.context_error import ContextRejection, read_context_error


@pytest.mark.parametrize(
    ("status", "message", "body", "expected"),
    [
        (  # llama.cpp, its body carrying the numbers too
            400,
            "request (8892 tokens) exceeds the available context size (8192 tokens), try increasing it",
            {
                "error": {
                    "code": 400,
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": 8892,
                    "n_ctx": 8192,
                }
            },
            ContextRejection(limit=8192, prompt=8892),
        ),
        (  # llama.cpp, the message alone
            400,
            "request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it",
            None,
            ContextRejection(limit=4096, prompt=4476),
        ),
        (  # older llama.cpp: no numbers
            400,
            "the request exceeds the available context size, try increasing it",
            None,
            ContextRejection(),
        ),
        (  # OpenAI, vLLM before 0.10
            400,
            "This model's maximum context length is 16384 tokens. However, you requested 122946 tokens "
            "(112946 in the messages, 10000 in the completion). Please reduce the length of the messages or "
            "completion.",
            None,
            ContextRejection(limit=16384, prompt=112946),
        ),
        (  # OpenAI, the total only
            400,
            "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens. Please "
            "reduce the length of the messages.",
            {"error": {"code": "context_length_exceeded"}},
            ContextRejection(limit=8192, requested=9000),
        ),
        (
            400,
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130012 "
            "tokens. Please reduce the length of the messages.",
            None,
            ContextRejection(limit=128000, prompt=130012),
        ),
        (  # vLLM: the prompt alone is too long
            400,
            "This model's maximum context length is 1536 tokens. However, your request has 4176 input "
            "tokens. Please reduce the length of the input messages.",
            None,
            ContextRejection(limit=1536, prompt=4176),
        ),
        (  # vLLM: the prompt and max_tokens
            400,
            "'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length "
            "is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778). None",
            None,
            ContextRejection(limit=4096, prompt=2778),
        ),
        (  # OpenRouter
            400,
            "This endpoint's maximum context length is 8192 tokens. However, you requested about 9000 "
            "tokens (8000 of text input, 1000 in the output). Please reduce the length of either one, or "
            'use the "middle-out" transform to compress your prompt automatically.',
            None,
            ContextRejection(limit=8192, prompt=8000),
        ),
        (  # LiteLLM wrapping Anthropic
            400,
            "litellm.ContextWindowExceededError: AnthropicException - prompt is too long: 208310 tokens > "
            "200000 maximum",
            None,
            ContextRejection(limit=200000, prompt=208310),
        ),
        (
            400,
            "input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease input "
            "length or `max_tokens` and try again",
            None,
            ContextRejection(limit=200000, prompt=199759),
        ),
        (400, "the input length exceeds the context length", None, ContextRejection()),  # Ollama
        (  # Hugging Face TGI
            422,
            "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 "
            "`inputs` tokens and 500 `max_new_tokens`",
            None,
            ContextRejection(limit=4096, prompt=4000),
        ),
        (
            400,
            "Input length 6491 exceeds context length 1500",
            None,
            ContextRejection(limit=1500, prompt=6491),
        ),
        (  # a number written with a thousands separator
            400,
            "This model's maximum context length is 8,192 tokens. However, your request has 9,001 input "
            "tokens.",
            None,
            ContextRejection(limit=8192, prompt=9001),
        ),
    ],
)
def test_real_servers_rejections_are_read(
    status: int, message: str, body: object, expected: ContextRejection
) -> None:
    assert read_context_error(status, message, body) == expected


@pytest.mark.parametrize(
    ("status", "message", "body"),
    [
        (400, "Bad request.", None),
        (400, "Invalid value for 'temperature': must be between 0 and 2.", None),
        (401, "Incorrect API key provided.", None),
        (404, "The model `x` does not exist.", None),
        (429, "Rate limit reached for requests.", None),
        (500, "This model's maximum context length is 8192 tokens.", None),  # not a client error
        (400, "the document mentions a context of 12 chapters", None),
    ],
)
def test_other_errors_are_not_context_rejections(status: int, message: str, body: object) -> None:
    assert read_context_error(status, message, body) is None


def test_a_code_alone_marks_a_rejection_and_bad_numbers_are_ignored() -> None:
    body = {"error": {"code": "context_length_exceeded", "n_ctx": -5, "n_prompt_tokens": "lots"}}
    assert read_context_error(400, "Too long.", body) == ContextRejection()
    flat = {"type": "exceed_context_size_error", "n_ctx": True}
    assert read_context_error(400, "no.", flat) == ContextRejection()
