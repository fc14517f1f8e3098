"""The composition root: every part of a server built once, from the settings, through its
constructor, and handed to what uses it.

`build_service` is the MCP server's (over streamable HTTP and stdio alike), `build_proxy` the
proxy's; the one-shot callers (the command line's ``summarize``, the in-process API) take only
an engine, `engine_setup.build_engine`, which both use too.  Nothing is filled in after it is
built: the engine gets its observer (the metrics) and its map cache (the `Answers` seam over
the result cache, shared with the tools and fetch_url's pages) in its constructor.  Here, above
`mcp` and `proxy`, so that neither builds its own parts nor imports the settings' openers.
"""

from __future__ import annotations

from collections import Counter

from mcp_summarizer.answering.cached import AnswerCache
from mcp_summarizer.answering.call import Answering
from mcp_summarizer.assembly.engine_setup import build_engine
from mcp_summarizer.assembly.from_settings import pages_options
from mcp_summarizer.assembly.store_setup import open_indexes, open_storage
from mcp_summarizer.auth import load_tokens
from mcp_summarizer.config import Settings
from mcp_summarizer.documents.pipeline import DocumentsPipeline
from mcp_summarizer.health.dependencies import Dependencies, Dependency
from mcp_summarizer.mcp.metrics import Metrics
from mcp_summarizer.mcp.service import Service, count_answer
from mcp_summarizer.proxy.app import Proxy
from mcp_summarizer.proxy.server_list import ProxyConfig
from mcp_summarizer.summarize.jobs import Jobs
from mcp_summarizer.summarize.leases import ClusterLimiter
from mcp_summarizer.summarize.llm import Backend
from mcp_summarizer.web.pages import Pages

__all__ = ["build_proxy", "build_service"]


def build_service(settings: Settings, backend: Backend | None = None) -> Service:
    """What the MCP server's tools share.  ``backend`` defaults to the configured one (tests
    give a scripted one)."""
    tokens = load_tokens(settings)
    store, cache = open_storage(settings, len(tokens))
    metrics = Metrics()
    engine = build_engine(settings, backend, observer=metrics, results=cache)
    answers = engine.cache  # one seam over the result cache: the tools, fetch_url, the map level
    counters: Counter[str] = Counter()
    jobs = _jobs(settings)

    def counted(tool: str, input_tokens: int, output_tokens: int) -> None:  # an answer from the cache
        count_answer(counters, metrics, tool, False, input_tokens, output_tokens)

    watched = [Dependency("content store", store.down)]
    if cache is not None:
        watched.append(Dependency("result cache", cache.down))
    if isinstance(engine.limiter, ClusterLimiter):
        watched.append(Dependency("LLM concurrency leases", engine.limiter.leases.down))
    return Service(
        settings=settings,
        engine=engine,
        store=store,
        documents=DocumentsPipeline(engine, store, min_relevance=settings.documents.cluster_min_relevance),
        answers=answers,
        answering=Answering(
            engine,
            jobs,
            store,
            None if answers is None else AnswerCache(answers, store, counted),
            Pages(pages_options(settings), answers),
        ),
        indexes=open_indexes(settings, len(tokens)),
        metrics=metrics,
        jobs=jobs,
        dependencies=Dependencies(watched),
        tokens=tokens,
        counters=counters,
    )


def build_proxy(settings: Settings, config: ProxyConfig) -> Proxy:
    """The proxy in front of ``config``'s upstream servers (started when it is entered).  Its
    engine keeps map summaries in the result cache: a large output summarized again (a log
    read twice, a page changed in one place) costs LLM calls only for the chunks not seen
    before."""
    tokens = load_tokens(settings)
    store, cache = open_storage(settings, len(tokens))
    return Proxy(
        settings,
        config,
        engine=build_engine(settings, results=cache),
        store=store,
        cache=cache,
        indexes=open_indexes(settings, len(tokens)),
        jobs=_jobs(settings),
        tokens=tokens,
    )


def _jobs(settings: Settings) -> Jobs:
    """Summaries identical calls share, going on past a client's deadline (summarize.jobs)."""
    return Jobs(settings.deadlines.background_jobs_max, settings.deadlines.background_jobs_max_input_tokens)
