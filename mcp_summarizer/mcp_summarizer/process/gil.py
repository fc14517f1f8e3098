"""Let the event loop have the GIL sooner while worker threads compute.

The service does CPU work in worker threads while its event loop relays LLM calls: the
chunking of a long text, the receipt's scan of its facts, the encode pool's Python between
pieces.  A thread that wants the GIL gets it when the holder has held it for the switch
interval, 5 ms by default; so every LLM reply that arrives while a worker computes waits up
to 5 ms before the loop reads it and sends the call that takes its slot, and so does /health.
At 1 ms those waits shorten the hand-off between LLM calls (figures: bench/README.md).
More switches cost the workers little: each is microseconds, and tiktoken encodes with the
GIL released.
"""

from __future__ import annotations

import sys

__all__ = ["SWITCH_INTERVAL", "hand_over_sooner"]

SWITCH_INTERVAL = 0.001  # seconds


def hand_over_sooner() -> None:
    """Set the interpreter's switch interval to `SWITCH_INTERVAL` (for the whole process)."""
    sys.setswitchinterval(SWITCH_INTERVAL)
