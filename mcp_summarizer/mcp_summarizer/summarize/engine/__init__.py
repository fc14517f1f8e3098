"""The summarize engine: one request in, one summary out, within its budget (`Engine`).

Its public API is here; each module does one job:

* `mapreduce`: `Engine`, the map-reduce over chunks under the fair limiter.
* `reduce`: the merge tree over the map's summaries; `gather`: calls run concurrently as one.
* `bypass`: the answers that need no call (content within budget, site chrome alone too long).
* `model`: the request and outcome types, and the `Prompt` and `Run` a pipeline built on the
  engine (documents) drives calls with.
* `streamed`: long content chunked in a worker thread while the map calls run.
* `head`: a long page's first map calls from its head, before the whole page is cleaned.
* `map_cache`: chunk summaries kept in the result cache, per tenant.
* `failure`: the failure policy (ON_LLM_FAILURE) and its notice lines.
* `fidelity`: the source's facts scanned while the LLM works, and FIDELITY_REPAIR.
* `vetting`: every answer checked (`summarize.degenerate`), asked again, or its part replaced.
* `baseline`: the summary held against the embedded one's fidelity (ON_LOW_FIDELITY).
* `prompts`, `answers`: the system prompts; a cut answer made to end cleanly.
* `completion`: the ``summarization_complete`` event, the same from every surface.
* `context`, `overflow`: the budget as the server's rejections taught it; a call the server's
  context cannot take, split and sent again in parts.
* `events`: the log events that say where a request is.

Nothing here knows about MCP.
"""

from mcp_summarizer.summarize.engine.completion import log_completion
from mcp_summarizer.summarize.engine.failure import (
    describe_failure,
    offline_notice,
    store_notice,
    truncated_with_notice,
)
from mcp_summarizer.summarize.engine.mapreduce import INLINE_CHARS, Engine
from mcp_summarizer.summarize.engine.model import (
    Observer,
    Outcome,
    Progress,
    Prompt,
    Request,
    Run,
    Strategy,
    Writer,
    by_llm,
)
from mcp_summarizer.summarize.engine.reduce import SEPARATOR
from mcp_summarizer.summarize.extractive import Kind

__all__ = [
    "INLINE_CHARS",
    "SEPARATOR",
    "Engine",
    "Kind",
    "Observer",
    "Outcome",
    "Progress",
    "Prompt",
    "Request",
    "Run",
    "Strategy",
    "Writer",
    "by_llm",
    "describe_failure",
    "log_completion",
    "offline_notice",
    "store_notice",
    "truncated_with_notice",
]
