"""Let the event loop have the GIL sooner while worker threads compute.

The service does CPU work in worker threads while its event loop relays LLM calls: the
chunking of a long text, the receipt's scan of its facts, the encode pool's Python between
pieces.  A thread that wants the GIL gets it when the holder has held it for the switch
interval, 5 ms by default; so every LLM reply that arrives while a worker computes waits up
to 5 ms before the loop reads it and sends the call that takes its slot, and so does /health.
At 1 ms (`bench/engine.py --sizes 1M,2M --repeats 1 --latency 0.2 --no-health`, the two
settings alternated, two runs each): slot hand-off mean 12-13 -> 8-9 ms at 1M tokens, 10-11
-> 8-10 ms at 2M; wall / ideal 1.147-1.153 -> 1.127-1.132 and 1.120-1.129 -> 1.115-1.126.
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
