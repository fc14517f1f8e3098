"""`errors.py` holds every exception the package defines, its docstring draws the whole tree
(as httpx's `_exceptions.py` does), and every type name in the package means one thing."""

from __future__ import annotations

import importlib
import pkgutil
import re
import typing
from collections import defaultdict
from types import ModuleType

import mcp_summarizer
from mcp_summarizer import errors


def _modules() -> list[ModuleType]:
    return [
        importlib.import_module(info.name)
        for info in pkgutil.walk_packages(mcp_summarizer.__path__, "mcp_summarizer.")
        if not info.name.endswith("__main__")
    ]


def _own_exceptions() -> set[type[BaseException]]:
    return {
        value
        for module in _modules()
        for name, value in vars(module).items()
        if isinstance(value, type)
        and issubclass(value, BaseException)
        and value.__module__.startswith("mcp_summarizer")
        and not name.startswith("_")
    }


def test_every_exception_of_the_package_is_defined_in_errors() -> None:
    elsewhere = sorted(
        f"{e.__module__}.{e.__name__}" for e in _own_exceptions() if e.__module__ != errors.__name__
    )
    assert elsewhere == []


def test_the_docstring_draws_every_error_under_its_parent() -> None:
    drawn: dict[str, str | None] = {}  # class name -> the parent the drawing puts it under
    parents: list[tuple[int, str]] = []  # (depth, name) of the open branches
    for line in (errors.__doc__ or "").splitlines():
        match = re.match(r"^    ((?:[│ ]   )*)(?:[├└]── )?([A-Z]\w+)\s", line + " ")
        if not match or not hasattr(errors, match.group(2)):
            continue
        depth = len(match.group(1)) // 4 + (1 if "── " in line else 0)
        name = match.group(2)
        assert name not in drawn, f"{name} drawn twice"
        while parents and parents[-1][0] >= depth:
            parents.pop()
        drawn[name] = parents[-1][1] if parents else None
        parents.append((depth, name))
    defined = {e.__name__: e for e in _own_exceptions() if e.__module__ == errors.__name__}
    assert sorted(drawn) == sorted(defined)
    for name, parent in drawn.items():
        own_bases = [b.__name__ for b in defined[name].__bases__ if b.__module__ == errors.__name__]
        assert own_bases == ([parent] if parent else []), name


def test_each_type_name_means_one_thing() -> None:
    """A class or type alias defined in the package has a name no other one has (an import of
    a library's class under its own name, like `collections.Counter`, is not a definition).
    Two aliases that are equal (`config`'s and `clients`' `Profile`, one `Literal` written in
    two parts that may not import each other) mean one thing: whether Python hands back one
    object for both depends on its typing cache, so on which modules were imported between."""
    meanings: dict[str, dict[object, list[str]]] = defaultdict(lambda: defaultdict(list))
    for module in _modules():
        for name, value in vars(module).items():
            if name.startswith("_"):
                continue
            ours = isinstance(value, type) and value.__module__.startswith("mcp_summarizer")
            alias = typing.get_origin(value) is not None or (
                isinstance(value, type) and value.__name__ != name
            )
            if ours or alias:
                meaning = value if typing.get_origin(value) is not None else id(value)
                meanings[name][meaning].append(module.__name__)
    twice = {name: sorted(where.values()) for name, where in meanings.items() if len(where) > 1}
    assert twice == {}
