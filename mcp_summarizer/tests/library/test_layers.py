"""The layers: the summarize engine is configured with its own small objects
(`summarize.options`) and knows nothing of the service above it, so no module under
`summarize/` imports the settings or a surface built on the engine, not even for type checking."""

from __future__ import annotations

import ast
from pathlib import Path

import mcp_summarizer

PACKAGE = Path(mcp_summarizer.__file__).parent

# What stands above summarize/: the settings and what builds or serves the engine.
ABOVE_SUMMARIZE = {
    "cli",
    "config",
    "documents",
    "engine_setup",
    "inprocess",
    "mcp",
    "proxy",
    "storage",
    "summarization",
    "web",
}


def imported(path: Path) -> set[str]:
    """Every module ``path`` names in an import statement (at any depth: in functions and
    under ``if TYPE_CHECKING:`` too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_summarize_imports_nothing_above_it() -> None:
    found = sorted(
        f"{path.relative_to(PACKAGE)}: {name}"
        for path in (PACKAGE / "summarize").rglob("*.py")
        for name in imported(path)
        if name.startswith("mcp_summarizer.") and name.split(".")[1] in ABOVE_SUMMARIZE
    )
    assert found == []


def test_the_check_sees_imports_at_any_depth(tmp_path: Path) -> None:
    """The scan itself: an import inside a function or under TYPE_CHECKING counts."""
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from mcp_summarizer.config import Settings\n"
        "def f() -> None:\n"
        "    import mcp_summarizer.web.pages\n"
    )
    assert {"mcp_summarizer.config", "mcp_summarizer.web.pages"} <= imported(module)
