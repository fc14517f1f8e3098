"""Cache keys, made in one place: a hash of everything that can change an answer, so that a
changed endpoint, model, size, prompt, policy or version never serves a stale summary.

`CacheKeys` holds the service's side of every key (the setup: endpoint, model, backend,
chunk sizes, context size, temperature, failure policies, prompt files, version; built by
`assembly.from_settings.cache_keys`); each request adds its own (the content, tool, budget, focus...).
Pure, no I/O but reading the package's prompt files once."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from urllib.parse import urlsplit, urlunsplit

from mcp_summarizer.version import __version__

__all__ = ["CacheKeys", "endpoint", "prompt_version", "result_key"]


@cache
def prompt_version() -> str:
    """A hash of every prompt file the package ships (name and text)."""
    digest = hashlib.sha256()
    folder = resources.files("mcp_summarizer") / "prompts"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".md"):
            digest.update(entry.name.encode() + b"\0" + entry.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def endpoint(url: str) -> str:
    """The LLM endpoint as it decides answers: scheme, host, port, path and query, without
    the credentials a URL may carry, in one spelling (case, default port, trailing slash)."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    default = {"http": 80, "https": 443}.get(scheme)
    port = f":{parts.port}" if parts.port is not None and parts.port != default else ""
    host = f"[{host}]" if ":" in host else host
    return urlunsplit((scheme, host + port, parts.path.rstrip("/"), parts.query, ""))


def result_key(tool: str, content: str, **decides: object) -> str:
    """A hash of ``tool``, ``content`` and ``decides`` (with the prompt files and version)."""
    facts = {
        "tool": tool,
        "content": hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest(),
        "prompts": prompt_version(),
        "version": __version__,
        **decides,
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True, default=str).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class CacheKeys:
    """The setup every answer depends on; `result` and `map` add the request's part."""

    setup: tuple[tuple[str, object], ...]

    def result(self, tool: str, content: str, **request: object) -> str:
        """A tool's whole answer for ``content`` under the request's ``request`` facts
        (budget, focus, strategy...)."""
        return result_key(tool, content, **dict(self.setup), request=request)

    def map(self, system: str, content: str, max_tokens: int) -> str:
        """One map call's answer: its prompt, its chunk and its budget."""
        return result_key("map", system + "\0" + content, **dict(self.setup), max_tokens=max_tokens)

    @staticmethod
    def page(url: str) -> str:
        """A fetched page (before any summary), by its URL."""
        return result_key("page", url)
