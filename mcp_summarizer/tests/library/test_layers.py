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
    "answering",
    "assembly",
    "cli",
    "config",
    "documents",
    "inprocess",
    "mcp",
    "proxy",
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


# All the settings stand on: the error tree, and the one formula they check a budget with
# (text.context_window, under every capability).  Each capability's options are made of the settings
# in assembly/from_settings.py, above both.
SETTINGS_STAND_ON = ("mcp_summarizer.errors", "mcp_summarizer.text.context_window")


def test_the_settings_import_no_capability() -> None:
    """config says what a user may set and checks it; it builds no capability's options, so a
    capability's new option does not reach into it, nor it into the capabilities."""
    config = PACKAGE / "config.py"
    paths = [config] if config.is_file() else sorted((PACKAGE / "config").rglob("*.py"))
    found = sorted(
        f"{path.relative_to(PACKAGE)}: {name}"
        for path in paths
        for name in imported(path)
        if name.startswith("mcp_summarizer.")
        and not name.startswith(SETTINGS_STAND_ON)
        and name.split(".")[1] != "config"
    )
    assert paths
    assert found == []


def package_imports() -> dict[str, set[str]]:
    """Each top-level part of the package (a folder, or a module at the root) and the other
    parts its modules import."""
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        part = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
        targets = graph.setdefault(part, set())
        for name in imported(path):
            if name.startswith("mcp_summarizer.") and (other := name.split(".")[1]) != part:
                if (PACKAGE / other).is_dir() or (PACKAGE / f"{other}.py").is_file():
                    targets.add(other)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one part (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_package_imports_another_that_imports_it_back() -> None:
    """The parts stand in layers: a newcomer can read one without the ones above it."""
    graph = package_imports()
    loops = {
        " <-> ".join(group): sorted(f"{a} -> {b}" for a in group for b in graph[a] if b in group)
        for group in cycles(graph)
    }
    assert loops == {}


def test_the_cycle_check_finds_a_loop_through_three_parts() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


ARCHITECTURE = Path(__file__).parents[2] / "ARCHITECTURE.md"


def drawn_layers(text: str) -> list[set[str]]:
    """The layers drawn in ARCHITECTURE.md's "Layers" section, top first: one line each, the
    parts before the comment (two spaces or more) separated by commas."""
    section = text.split("## Layers", 1)[1].split("```", 2)[1]
    layers = []
    for line in section.splitlines():
        names = line.split("  ", 1)[0].strip()
        if names:
            layers.append({name.strip() for name in names.split(",")})
    return layers


def layer_breaches(graph: dict[str, set[str]], layers: list[set[str]]) -> list[str]:
    """Parts not drawn, and imports of a part on the same line or one above."""
    depth = {part: i for i, layer in enumerate(layers) for part in layer}
    found = [f"{part} is not drawn" for part in sorted(graph) if part not in depth]
    found += [
        f"{part} -> {other}"
        for part, others in sorted(graph.items())
        for other in sorted(others)
        if part in depth and other in depth and depth[other] <= depth[part]
    ]
    return found


def test_the_architecture_drawing_holds() -> None:
    """ARCHITECTURE.md's layers are the code's: each part imports only parts drawn below it."""
    assert layer_breaches(package_imports(), drawn_layers(ARCHITECTURE.read_text())) == []


def test_the_drawing_check_finds_an_import_upwards_and_an_undrawn_part() -> None:
    layers = drawn_layers("## Layers\n\n```\na, b   the top\nc\n```\n")
    assert layers == [{"a", "b"}, {"c"}]
    assert layer_breaches({"a": {"c"}, "c": set(), "b": set()}, layers) == []
    assert layer_breaches({"a": {"b"}, "c": {"a"}, "d": set()}, layers) == [
        "d is not drawn",
        "a -> b",
        "c -> a",
    ]
