"""The OpenAI-compatible chat backend: one call, one deadline per attempt, one retry layer.

The openai SDK retries twice on its own and skips Retry-After over 120 s; stacked under
another retry loop that makes 9 requests.  So the SDK's retries are off (`max_retries=0`)
and tenacity is the only layer: transient errors only (429, 408, 409, 5xx, connection
errors, timeouts), exponential backoff with jitter, and a server's Retry-After honoured
(never a 400/401/403/404: a context-length error does not get better by waiting).  The
caller's concurrency slot is held by each attempt, never across the waits between them: a
429 storm whose Retry-After kept every slot asleep would queue every other request too.

Each attempt has a deadline on its whole time (`pace`: LLM_TIMEOUT_SECONDS plus what the
server's measured pace says the attempt and those ahead of it need; it grows while the
attempt waits if an answer shows the server slower than it assumed).  The SDK's timeout is
per socket read, so a server trickling its answer byte by byte would keep a call alive
indefinitely; an attempt past its deadline is closed and counts as a transient timeout,
retried like one.

A server that refuses a prompt as too long for its context raises `ContextOverflow` with what
it said (`context_error`), at once: the engine splits the part and learns the server's limit.

An error's text reaches the caller (tool answers, fetch_url's Status line) and the logs: it
carries the status code and the server's reason cut short, on one line, with the API key and
any URL credentials redacted, since a server may echo what it was sent.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import re
import time
import unicodedata
import urllib.parse
import weakref
from collections.abc import Callable, Iterable
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_random_exponential

from mcp_summarizer.errors import AttemptTimeout, ContextOverflow, LLMError
from mcp_summarizer.summarize.context_error import ContextRejection, read_context_error
from mcp_summarizer.summarize.options import LLMOptions
from mcp_summarizer.summarize.pace import CAP, Pace, prompt_work

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from openai.types.chat import ChatCompletion

# The OpenAI SDK is imported by the functions that use it, never with this module: a service
# on the embedded summary (no key, no base URL) makes no LLM call, and loading the SDK is 0.8 s
# of its start's CPU.  An error can only be the SDK's once it is loaded, so the checks of an
# error import it where they run (a dictionary lookup after the first).

__all__ = ["AttemptTimeout", "Backend", "Completion", "OpenAIBackend", "Slot", "context_rejection"]

logger = logging.getLogger(__name__)
_TRANSIENT_STATUS = {408, 409, 429}


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    finish_reason: str
    prompt_tokens: int | None = None  # as billed, when the server reports usage
    attempts: int = 1


# What each attempt holds while its request is in flight (the engine's limiter slot), and
# only then: a call sleeping before its next attempt holds nothing.
Slot = Callable[[], AbstractAsyncContextManager[None]]


class Backend(Protocol):
    model: str

    async def complete(
        self, system: str, user: str, max_tokens: int, *, slot: Slot = nullcontext
    ) -> Completion: ...

    async def aclose(self) -> None: ...


def is_transient(exc: BaseException) -> bool:
    import openai

    if isinstance(exc, openai.APIConnectionError | AttemptTimeout):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in _TRANSIENT_STATUS or exc.status_code >= 500
    return False


def retry_after_seconds(exc: BaseException | None) -> float | None:
    """Seconds the server asked us to wait (Retry-After / retry-after-ms), if it said."""
    import openai

    if not isinstance(exc, openai.APIStatusError):
        return None
    headers = exc.response.headers
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None  # unparseable: fall back to our own backoff
    return max(0.0, parsed.timestamp() - time.time())


class _Wait:
    """Exponential backoff with jitter, or the server's Retry-After when it gives one."""

    def __init__(self, base: float, cap: float) -> None:
        self._backoff = wait_random_exponential(multiplier=base, max=cap) if base > 0 else None
        self._cap = cap

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        asked = retry_after_seconds(exc)
        if asked is not None:
            return min(asked, self._cap)
        return self._backoff(state) if self._backoff else 0.0


def context_rejection(exc: BaseException) -> ContextRejection | None:
    """What a server said when it refused a prompt as too long for its context, if it did."""
    import openai

    if not isinstance(exc, openai.APIStatusError):
        return None
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error")
    message = body.get("message") or (error.get("message") if isinstance(error, dict) else None)
    return read_context_error(exc.status_code, str(message or exc.message), exc.body)


def _describe(exc: BaseException, secrets: Iterable[str] = ()) -> str:
    """One line for the logs and for LLMError, whose text reaches the caller: the status code
    and the server's reason, sanitized (``secrets`` redacted, see `sanitize`)."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        error = body.get("error")
        message = body.get("message") or (error.get("message") if isinstance(error, dict) else None)
        reason = sanitize(str(message or exc.message), secrets)
        if exc.status_code in (401, 403):
            return f"the LLM endpoint rejected the API key (HTTP {exc.status_code}): {reason}"
        return f"HTTP {exc.status_code}: {reason}"
    if isinstance(exc, openai.APITimeoutError | AttemptTimeout):
        return "timed out"
    return sanitize(f"{type(exc).__name__}: {exc}", secrets)


_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s@]+@")
_AUTH_HEADER = re.compile(r"(?i)\b(bearer|basic)\s+[a-z0-9._~+/=-]+")
_REDACTED = "[redacted]"
REASON_CHARS = 200


def sanitize(text: str, secrets: Iterable[str] = ()) -> str:
    """A server's error text made fit to pass on: every secret in ``secrets`` (the API key,
    the base URL's password) and any URL's credentials or Authorization value redacted, one
    line without control characters, at most `REASON_CHARS` characters.

    Why: the text reaches tool answers and logs, and a server may echo what it was sent.
    """
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, _REDACTED)
    text = _URL_CREDENTIALS.sub(rf"\1{_REDACTED}@", text)
    text = _AUTH_HEADER.sub(rf"\1 {_REDACTED}", text)
    text = "".join(" " if unicodedata.category(c)[0] == "C" else c for c in text)
    text = " ".join(text.split())
    if len(text) > REASON_CHARS:
        text = text[: REASON_CHARS - 1].rstrip() + "…"
    return text


def _secrets(options: LLMOptions) -> tuple[str, ...]:
    """The values no error text may repeat: the API key and the base URL's password."""
    password = urllib.parse.urlsplit(options.base_url).password or ""
    return (options.api_key, password, urllib.parse.unquote(password))


class OpenAIBackend:
    """Chat completions against OpenRouter or any OpenAI-compatible server (vLLM, Ollama, LiteLLM)."""

    def __init__(self, options: LLMOptions) -> None:
        self.model = options.model
        self._options = options
        self._secrets = _secrets(options)
        self.pace = Pace(options.timeout_seconds)  # each attempt's deadline
        # One client per event loop: its connection pool belongs to the loop that made it, and
        # in-process callers may run `asyncio.run()` many times (each a new loop).
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncOpenAI] = (
            weakref.WeakKeyDictionary()
        )

    def _client(self) -> AsyncOpenAI:
        from openai import AsyncOpenAI

        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = AsyncOpenAI(
                # Local servers need no key, but the SDK insists on one.
                api_key=self._options.api_key or "not-needed",
                base_url=self._options.base_url,
                max_retries=0,
                timeout=self._options.timeout_seconds,
            )
        return client

    def warm(self) -> None:
        """Make the running loop's client, and load the SDK's chat resources (imported on
        first use), now: a server does this at its start, instead of on its first request's
        first call (about 0.15 s)."""
        _ = self._client().chat.completions

    async def complete(
        self, system: str, user: str, max_tokens: int, *, slot: Slot = nullcontext
    ) -> Completion:
        """One chat completion, retried as the module says.  Each attempt runs inside
        ``slot()`` (waiting for it is not part of the attempt's deadline); the waits between
        attempts are outside it, so a call sleeping on a Retry-After holds no slot."""
        import openai

        o = self._options
        retrying = AsyncRetrying(
            stop=stop_after_attempt(o.max_attempts),
            wait=_Wait(o.retry_base_seconds, o.retry_max_seconds),
            retry=retry_if_exception(is_transient),
            before_sleep=self._log_retry,
            reraise=True,
        )
        attempts = 0
        try:
            async for attempt in retrying:
                with attempt:
                    attempts = attempt.retry_state.attempt_number
                    async with slot():
                        response = await self._attempt(system, user, max_tokens)
        except (openai.OpenAIError, AttemptTimeout) as exc:
            if (rejection := context_rejection(exc)) is not None:
                raise ContextOverflow(_describe(exc, self._secrets), rejection, attempts=attempts) from exc
            raise LLMError(_describe(exc, self._secrets), attempts=attempts) from exc
        if not response.choices:
            raise LLMError("the LLM returned no choices", attempts=attempts)
        choice = response.choices[0]
        # An empty answer is an answer: the engine's check rejects it (`summarize.degenerate`),
        # asks once more, then stands the embedded summary in for that part alone.
        text = choice.message.content or ""
        usage = response.usage
        return Completion(
            text=text,
            finish_reason=choice.finish_reason or "stop",
            prompt_tokens=usage.prompt_tokens if usage else None,
            attempts=attempts,
        )

    async def _attempt(self, system: str, user: str, max_tokens: int) -> ChatCompletion:
        import openai

        o = self._options
        attempt = self.pace.start(prompt_work(system, user), max_tokens)
        began = asyncio.get_running_loop().time()
        try:
            async with asyncio.timeout_at(began + attempt.deadline) as scope:
                # The deadline grows while the call waits, if an answer shows the server slower
                # (not once it has expired: the task is being cancelled, and `reschedule` raises).
                def extend(seconds: float) -> None:
                    if not scope.expired():
                        scope.reschedule(began + seconds)

                self.pace.watch(attempt, extend)
                response = await self._client().chat.completions.create(
                    model=self.model,
                    messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                    max_tokens=max_tokens,
                    temperature=o.temperature,
                    # The SDK's own (per read) no shorter than the longest the deadline may grow to.
                    timeout=openai.Timeout(
                        CAP * o.timeout_seconds, connect=min(o.timeout_seconds, attempt.deadline)
                    ),
                )
        except TimeoutError:
            self.pace.timed_out(attempt)
            raise AttemptTimeout(f"no answer within {(scope.when() or began) - began:.1f} s") from None
        except BaseException:
            self.pace.dropped(attempt)
            raise
        if response.usage is not None:
            written = response.usage.completion_tokens
        else:  # a server that reports no usage: the answer's bytes / 3, as for the prompt
            written = len((response.choices[0].message.content or "") if response.choices else "") // 3
        self.pace.answered(attempt, written)
        return response

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        logger.warning(
            "llm_call_retry",
            extra={
                "attempt": state.attempt_number,
                "cause": _describe(exc, self._secrets) if exc else "unknown",
                "wait_seconds": round(state.upcoming_sleep, 3),
            },
        )

    async def aclose(self) -> None:
        """Close this loop's client (the clients of loops that are gone went with them)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()
