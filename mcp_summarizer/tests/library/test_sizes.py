"""Sizes a newcomer can read: no source module over 500 lines, in any of the repository's
packages (a longer one does several jobs: split it by job into a sibling module), and at most
two functions over 80 lines."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SOURCES = [
    ROOT / "shared" / "shared",
    ROOT / "mcp_summarizer" / "mcp_summarizer",
    ROOT / "a_world_lore_researcher" / "world_lore_researcher",
]
MAX_MODULE_LINES = 500


def long_modules(folders: list[Path], limit: int) -> list[str]:
    """Each module under ``folders`` over ``limit`` lines, with its length."""
    found = []
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > limit:
                found.append(f"{path.relative_to(folder.parent)}: {lines} lines")
    return found


def test_no_source_module_is_over_500_lines() -> None:
    assert all(folder.is_dir() for folder in SOURCES), "the packages moved: update SOURCES"
    assert long_modules(SOURCES, MAX_MODULE_LINES) == []


def test_the_check_counts_lines(tmp_path: Path) -> None:
    (tmp_path / "short.py").write_text("x = 1\n" * 3)
    (tmp_path / "deep").mkdir()
    (tmp_path / "deep" / "long.py").write_text("x = 1\n" * 4)
    found = long_modules([tmp_path], 3)
    assert len(found) == 1 and found[0].endswith("long.py: 4 lines")


# Issue 36's bound: a function over 80 lines does several jobs (none is, today).
MAX_FUNCTION_LINES = 80
MAX_LONG_FUNCTIONS = 2


def long_functions(folders: list[Path], limit: int) -> list[str]:
    """Each function or method under ``folders`` over ``limit`` lines (def to its end)."""
    found = []
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    lines = (node.end_lineno or node.lineno) - node.lineno + 1
                    if lines > limit:
                        found.append(f"{path.relative_to(folder.parent)}:{node.name}: {lines} lines")
    return found


def test_at_most_two_functions_are_over_80_lines() -> None:
    found = long_functions(SOURCES, MAX_FUNCTION_LINES)
    assert len(found) <= MAX_LONG_FUNCTIONS, found


def test_the_check_measures_functions_def_to_end(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "def short():\n    return 1\n\n\n"
        "class C:\n    async def long(self):\n        a = 1\n\n        return a\n"
    )
    assert long_functions([tmp_path], 4) == []
    assert long_functions([tmp_path], 3) == [f"{tmp_path.name}/m.py:long: 4 lines"]
