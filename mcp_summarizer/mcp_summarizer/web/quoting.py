"""How fetch errors quote what they name: a URL, a host, a library's own explanation.

A URL quoted in an error has its password hidden and its length capped, and text a server
sent is never quoted raw: the message goes back to the caller and into the logs.
"""

from __future__ import annotations

from shared.logs import clip, redact_credentials

__all__ = ["detail", "root_cause", "shown"]

_SHOWN_CHARS = 300  # a URL or header value quoted in an error message
_DETAIL_CHARS = 200  # a library's own explanation, quoted after ours


def shown(value: object) -> str:
    """``value`` as an error message quotes it: password hidden, length capped, repr-escaped."""
    return repr(clip(redact_credentials(str(value)), _SHOWN_CHARS))


def detail(exc: BaseException) -> str:
    """An exception's own text, redacted and capped, for the end of a message."""
    return clip(redact_credentials(str(exc)), _DETAIL_CHARS)


def root_cause(exc: BaseException) -> BaseException:
    """The innermost cause: "Connection refused" says more than "All connection attempts failed"."""
    seen = {id(exc)}
    while (inner := exc.__cause__ or exc.__context__) is not None and id(inner) not in seen:
        seen.add(id(inner))
        exc = inner
    return exc
