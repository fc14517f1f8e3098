"""Names a newcomer can tell apart (ARCHITECTURE.md, "Names"): no two modules of the package
share a name unless they do one job for parallel parts, and no name is another's plural."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import mcp_summarizer

PACKAGE = Path(mcp_summarizer.__file__).parent

# One job, parallel parts: the backends of one interface; each package's server, built.
PARALLEL = {
    "app": {"mcp", "proxy"},
    "redis": {"cache", "store"},
    "sqlite": {"cache", "store"},
}


def names(package: Path) -> dict[str, set[str]]:
    """Each module's and folder's name, and the folders it stands in ("" for the root);
    `__init__`/`__main__` are every package's and name nothing."""
    found: dict[str, set[str]] = defaultdict(set)
    for path in package.rglob("*"):
        if path.name.startswith("__"):
            continue
        if path.suffix == ".py" or (path.is_dir() and (path / "__init__.py").is_file()):
            folder = path.parent.relative_to(package).as_posix()
            found[path.stem].add("" if folder == "." else folder)
    return found


def shared_names(found: dict[str, set[str]]) -> dict[str, list[str]]:
    """Names in more than one place (beyond `PARALLEL`'s), and pairs that differ by a plural
    "s" (``limiter``/``limiters``, ``answer``/``answers``)."""
    shared = {
        name: sorted(places)
        for name, places in found.items()
        if len(places) > 1 and places != PARALLEL.get(name)
    }
    for name, places in found.items():
        if name.endswith("s") and name[:-1] in found:
            shared[f"{name[:-1]}/{name}"] = sorted(found[name[:-1]] | places)
    return shared


def test_no_two_modules_share_a_name() -> None:
    assert shared_names(names(PACKAGE)) == {}


def test_the_check_finds_a_shared_name_and_a_plural(tmp_path: Path) -> None:
    for file in ("cache/answers.py", "mcp/answers.py", "store/redis.py", "cache/redis.py", "limiter.py"):
        (tmp_path / file).parent.mkdir(exist_ok=True)
        (tmp_path / file).touch()
    (tmp_path / "limiters").mkdir()
    (tmp_path / "limiters" / "__init__.py").touch()
    for folder in ("cache", "mcp", "store"):
        (tmp_path / folder / "__init__.py").touch()
    assert shared_names(names(tmp_path)) == {
        "answers": ["cache", "mcp"],
        "limiter/limiters": [""],
    }
