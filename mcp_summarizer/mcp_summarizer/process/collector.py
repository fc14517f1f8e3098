"""Keep the garbage collector's full passes off what the service made at its start.

A full collection (generation 2) walks every container object the process holds and runs
with the GIL held, on whichever thread triggered it: the event loop stops for all of it.  By
the time the server listens, the imports and the setup (the SDK's models, pydantic's
validators, the tokenizer, the LLM client) have made most of those objects, and few of them
ever becomes garbage: 33-50 ms of CPU a pass walking them alone, and a pass that fell in a
1M-token summarize was the loop's longest step, a /health request waiting behind it
(bench/README.md).  Frozen, they are left out of every later pass (`gc.freeze`): a full pass
walks only what requests made since.
"""

from __future__ import annotations

import gc

__all__ = ["freeze_startup"]


def freeze_startup() -> None:
    """Collect what the start left as garbage, then move every object still alive into the
    collector's permanent generation (left out of its passes, never freed by it)."""
    gc.collect()
    gc.freeze()
