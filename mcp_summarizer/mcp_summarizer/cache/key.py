"""The cache key: a hash of everything that decides an answer, so that a changed prompt,
model, backend or version never serves a stale summary.  Pure, no I/O but reading the
package's prompt files once."""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import resources

from mcp_summarizer.version import __version__

__all__ = ["prompt_version", "result_key"]


@cache
def prompt_version() -> str:
    """A hash of every prompt file the package ships (name and text)."""
    digest = hashlib.sha256()
    folder = resources.files("mcp_summarizer") / "prompts"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".md"):
            digest.update(entry.name.encode() + b"\0" + entry.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def result_key(tool: str, content: str, *, backend: str, model: str, **decides: object) -> str:
    """``tool``'s answer for ``content`` under ``decides`` (budget, focus, strategy...)."""
    facts = {
        "tool": tool,
        "content": hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest(),
        "backend": backend,
        "model": model,
        "prompts": prompt_version(),
        "version": __version__,
        **decides,
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True, default=str).encode()).hexdigest()
