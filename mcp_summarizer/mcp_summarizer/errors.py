"""Every error the service raises on purpose, in one hierarchy (as httpx does).

The MCP surface catches `SummarizerError` and shows its message to the caller as a tool
error, so each message says what was wrong and what to do.  Anything else reaching the
surface is a bug: it is logged with its traceback.

    SummarizerError
    ├── ConfigError          an invalid setting (names the variable); stops start-up
    ├── InputError           a request that cannot be served as asked (names the limit)
    │   ├── UnknownSource        an `expand` id never stored here
    │   └── ExpiredSource        an `expand` id whose original was stored, then dropped
    ├── StoreError           the content store cannot be read or written
    │   ├── RedisUnavailable     Redis did not answer (down, slow, or refusing)
    │   └── OverStoreCap         a put larger than the store's cap (or a tenant's share): not stored
    ├── BusyError            too much is being summarized at once; try again shortly
    ├── LLMError             the LLM failed for good, after retries (the failure policy applies)
    │   ├── RejectedAnswer       an answer rejected twice (a loop, a refusal...): the caller's fallback
    │   ├── ContextOverflow      the server refused a prompt as too long for its context
    │   └── ContextTooSmall      ... and no part small enough to send would fit it
    ├── UpstreamError        a proxied MCP server could not be reached, failed or timed out
    └── FetchError           a page that cannot be had (status: the HTTP status, if any)
        ├── BlockedAddressError   the SSRF guard refused the address, before connecting
        ├── HostUnreachable       the host could not be resolved or connected to
        ├── RobotsDisallowed      robots.txt forbids the URL, or could not be read
        └── UnsupportedContent    the body is not text (image, archive, binary)

Two signals pass inside the service and never reach a caller; they stand outside the tree,
so that the surface treats one that escapes as the bug it would be:

    AttemptTimeout           one LLM attempt outran its deadline (retried like a timeout)
    Stopped                  a request ended while its text was still being encoded
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "AttemptTimeout",
    "BlockedAddressError",
    "BusyError",
    "ConfigError",
    "ContextOverflow",
    "ContextRejection",
    "ContextTooSmall",
    "ExpiredSource",
    "FetchError",
    "HostUnreachable",
    "InputError",
    "LLMError",
    "OverStoreCap",
    "RedisUnavailable",
    "RejectedAnswer",
    "RobotsDisallowed",
    "Stopped",
    "StoreError",
    "SummarizerError",
    "UnknownSource",
    "UnsupportedContent",
    "UpstreamError",
]


class SummarizerError(Exception):
    """Base of every error raised on purpose; its message is meant for the caller."""


class ConfigError(SummarizerError, ValueError):
    """The environment holds an invalid setting; the message names it."""


class InputError(SummarizerError, ValueError):
    """The request cannot be served as asked; the message says why and what the limit is."""


class UnknownSource(InputError):
    """An `expand` id that was never stored here (or whose record is long gone)."""


class ExpiredSource(InputError):
    """An `expand` id whose original was stored, then dropped: its time ran out
    (SOURCE_TTL_SECONDS) or the store needed the room (SOURCE_STORE_MAX_MB)."""


class StoreError(SummarizerError):
    """The content store cannot be read or written (a disk full, a file locked too long)."""


class RedisUnavailable(StoreError):
    """Redis did not answer (down, slow, or refusing); the message says which and where."""


class OverStoreCap(StoreError):
    """A put larger than the content store's whole cap (SOURCE_STORE_MAX_MB): not stored."""


class BusyError(SummarizerError):
    """The server is summarizing as much as MAX_INFLIGHT_INPUT_TOKENS allows and this request
    waited for room in vain; the message says so."""


class LLMError(SummarizerError):
    """The LLM failed for good (after retries, or at once for a non-transient error)."""

    def __init__(self, message: str, *, attempts: int = 1) -> None:
        super().__init__(message)
        self.attempts = attempts


class RejectedAnswer(LLMError):
    """An LLM answer, asked for twice, was rejected both times (`summarize.degenerate`: a loop,
    a refusal, the prompt read back...), for a caller that has a fallback of its own."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message, attempts=2)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class ContextRejection:
    """What a server said when it refused a prompt as too long for its context
    (`summarize.context_error` reads it); each number None when it did not say, in the
    server's own tokens."""

    limit: int | None = None  # its context
    prompt: int | None = None  # the prompt it was sent
    requested: int | None = None  # prompt + max_tokens, when only that is given


class ContextOverflow(LLMError):
    """The server refused a prompt as too long for its context (HTTP 400 and the like; never
    retried as it is).  ``rejection`` holds what it said (a `ContextRejection`): the engine
    learns the server's context from it and sends the part again in smaller pieces."""

    def __init__(self, message: str, rejection: ContextRejection, *, attempts: int = 1) -> None:
        super().__init__(message, attempts=attempts)
        self.rejection = rejection


class ContextTooSmall(LLMError):
    """The server's context cannot hold the service's prompts with a part of the text worth
    sending: the message names LLM_CONTEXT_TOKENS and the server's limit."""


class UpstreamError(SummarizerError):
    """An upstream server could not be reached, failed or timed out; the message names it."""


class FetchError(SummarizerError):
    """A refused or failed fetch; ``status`` is set when the server answered with a non-2xx."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class BlockedAddressError(FetchError):
    """The SSRF guard refused a target address (raised before any connection is attempted)."""


class HostUnreachable(FetchError):
    """The host could not be resolved or connected to; ``host`` names it.

    Kept apart from other failures because nothing about the URL's path can help: robots.txt
    and the page itself fail alike."""

    def __init__(self, message: str, *, host: str) -> None:
        super().__init__(message)
        self.host = host


class RobotsDisallowed(FetchError):
    """robots.txt forbids the URL for our user agent (or could not be read: RFC 9309 §2.3.1.4)."""


class UnsupportedContent(FetchError):
    """The body is not something we can turn into text (image, archive, binary...); the
    message names the type."""


class AttemptTimeout(Exception):
    """One attempt outran LLM_TIMEOUT_SECONDS.  The SDK's timeouts are per read: a server that
    trickles its answer a byte at a time never trips them, so each attempt has a deadline too."""


class Stopped(Exception):
    """A worker thread was told its request ended (`GrowingOffsets`, the source scan): it stops
    early, for nobody waits for its result."""
