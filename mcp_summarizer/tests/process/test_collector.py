"""The collector's full passes skip what the start made (`process.collector`): what is alive
when the server has started is frozen, what was already garbage is freed first.

In process, with the interpreter's own collector: no mock.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from mcp_summarizer.process.collector import freeze_startup


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """The test process's collector as it was: nothing frozen after the test."""
    gc.unfreeze()
    try:
        yield
    finally:
        gc.unfreeze()


@pytest.mark.usefixtures("unfrozen")
def test_what_lives_at_the_start_is_left_out_of_later_passes() -> None:
    kept = Node()
    assert gc.is_tracked(kept) and any(o is kept for o in gc.get_objects())
    freeze_startup()
    assert gc.get_freeze_count() > 0
    assert not any(o is kept for o in gc.get_objects())  # in the permanent generation
    made_after = Node()
    assert any(o is made_after for o in gc.get_objects())  # later objects are collected as before


@pytest.mark.usefixtures("unfrozen")
def test_garbage_left_by_the_start_is_freed_not_frozen() -> None:
    a, b = Node(), Node()
    a.other, b.other = b, a  # a cycle: only the collector frees it
    gone = weakref.ref(a)
    del a, b
    freeze_startup()
    assert gone() is None
