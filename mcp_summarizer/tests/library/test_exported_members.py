"""The package root is the library surface for Python callers: this list pins it (a name added
to or dropped from `mcp_summarizer.__all__` is a change of the public API, made on purpose)."""

from __future__ import annotations

import ast
from pathlib import Path
from types import ModuleType

import mcp_summarizer

PUBLIC = [
    "BlockedAddressError",
    "BusyError",
    "ConfigError",
    "ExpiredSource",
    "FetchError",
    "HostUnreachable",
    "InputError",
    "Kind",
    "LLMError",
    "Outcome",
    "Progress",
    "RedisUnavailable",
    "Request",
    "RobotsDisallowed",
    "StoreError",
    "SummarizationService",
    "Summarized",
    "SummarizerError",
    "UnknownSource",
    "UnsupportedContent",
    "UpstreamError",
    "__version__",
    "estimate_tokens",
    "get_summarization_service",
    "serialize_output",
    "summarize_if_needed",
    "summarize_with_receipt",
]


def test_the_root_exports_the_library_surface() -> None:
    assert mcp_summarizer.__all__ == PUBLIC
    for name in PUBLIC:
        assert getattr(mcp_summarizer, name) is not None, name


def test_every_public_name_of_the_root_is_exported() -> None:
    """As httpx's test_exported_members: nothing public at the root is left out of __all__
    (the subpackages the imports load are attributes too, and are not names of the API).
    Read through `dir`, which names the lazy exports whether or not a test before this one
    loaded them (`vars` holds only those loaded: the result hung on the test order)."""
    public = sorted(
        name
        for name in dir(mcp_summarizer)
        if (not name.startswith("_") or name == "__version__")
        and not isinstance(getattr(mcp_summarizer, name), ModuleType)
    )
    assert public == sorted(mcp_summarizer.__all__)


def test_the_exports_are_the_modules_own_objects() -> None:
    from mcp_summarizer import errors
    from mcp_summarizer.inprocess import if_needed, ticket_api
    from mcp_summarizer.summarize import engine

    assert mcp_summarizer.summarize_if_needed is if_needed.summarize_if_needed
    assert mcp_summarizer.SummarizationService is ticket_api.SummarizationService
    assert mcp_summarizer.Request is engine.Request
    assert mcp_summarizer.Outcome is engine.Outcome
    assert mcp_summarizer.SummarizerError is errors.SummarizerError


def test_no_module_of_the_package_imports_its_root() -> None:
    """The root imports the library surface, so a module that imported the root would close a
    cycle through it (the version is read from `mcp_summarizer.version`)."""
    package = Path(mcp_summarizer.__file__).parent
    importers = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if path.name != "__init__.py" or path.parent != package
        for node in ast.walk(ast.parse(path.read_text()))
        if (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "mcp_summarizer")
        or (isinstance(node, ast.Import) and any(alias.name == "mcp_summarizer" for alias in node.names))
    )
    assert importers == []
