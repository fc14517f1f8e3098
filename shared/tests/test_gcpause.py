"""The collector is off inside every block and back on only when the last one ends."""

from __future__ import annotations

import gc
import threading

from shared.gcpause import no_gc_pauses


def test_nested_and_concurrent_blocks_share_one_switch() -> None:
    assert gc.isenabled()
    inside = threading.Event()
    leave = threading.Event()

    def other() -> None:
        with no_gc_pauses():
            inside.set()
            leave.wait(5)

    thread = threading.Thread(target=other)
    with no_gc_pauses():
        assert not gc.isenabled()
        thread.start()
        inside.wait(5)
        with no_gc_pauses():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert not gc.isenabled(), "the other thread's block has not ended"
    leave.set()
    thread.join(5)
    assert gc.isenabled()


def test_a_collector_turned_off_before_stays_off() -> None:
    gc.disable()
    try:
        with no_gc_pauses():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
