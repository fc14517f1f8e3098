"""LangChain's LangGraph map-reduce summarization recipe, for `bench/engine.py --langgraph`.

The recipe as LangChain's docs give it ("Summarize text", map-reduce with LangGraph): split the
text, a `Send` fan-out of one map call per chunk, then while the summaries are over
``token_max`` tokens, group them greedily under ``token_max`` (`split_list_of_docs`) and
collapse each group with one reduce call, then one final reduce.  `ChatOpenAI` with
``max_retries=0``; the graph runs with ``max_concurrency`` = the engine's limit.  Its prompts
are the docs' own (`recipe_map.md`, `recipe_reduce.md`).

Where this differs from the docs, each time in the recipe's favour, so that the comparison
measures the schedule and not a handicap:
* chunks of 8,000 tokens with a 500-token overlap (the engine's), cut by
  `RecursiveCharacterTextSplitter` counting cl100k tokens with the service's offline
  tokenizer (the docs' `from_tiktoken_encoder` and `llm.get_num_tokens` would download the
  vocabulary; the counts are the same);
* a collapse level's groups are reduced concurrently, under the same limit (the docs await
  them one by one), and a group's summaries are joined with blank lines (the docs put the
  list of `Document` objects into the prompt as its Python repr);
* map calls ask for the ``max_tokens`` the engine's map calls asked for (the engine sizes
  them from the budget; the docs leave it to the model), the collapse and final calls for the
  target.

Bench only: `pip install -e 'mcp_summarizer[langgraph]'`; never a dependency of the service.
"""

from __future__ import annotations

import asyncio
import operator
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

from langchain_openai import ChatOpenAI
from langchain_text_splitters import RecursiveCharacterTextSplitter
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from mcp_summarizer.text import tokens

HERE = Path(__file__).resolve().parent
MAP_PROMPT = (HERE / "recipe_map.md").read_text(encoding="utf-8")
REDUCE_PROMPT = (HERE / "recipe_reduce.md").read_text(encoding="utf-8")


@dataclass
class RecipeRun:
    wall: float = 0.0  # from the call to the final summary, splitting included
    first_call: float = 0.0  # from the call to the first LLM request sent
    levels: list[int] = field(default_factory=list)  # calls per level: map, collapses, final
    summary: str = ""


class _Overall(TypedDict):
    contents: list[str]
    summaries: Annotated[list[str], operator.add]
    collapsed: list[str]
    final_summary: str


class _One(TypedDict):
    content: str


def split(text: str, chunk_tokens: int = 8000, overlap: int = 500) -> list[str]:
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=chunk_tokens, chunk_overlap=overlap, length_function=tokens.count
    )
    return splitter.split_text(text)


def split_list_of_docs(docs: list[str], token_max: int) -> list[list[str]]:
    """LangChain's `split_list_of_docs`: consecutive groups of at most ``token_max`` tokens."""
    groups: list[list[str]] = []
    current: list[str] = []
    for doc in docs:
        current.append(doc)
        if sum(map(tokens.count, current)) > token_max:
            if len(current) == 1:
                raise ValueError("A single document was longer than the context length")
            groups.append(current[:-1])
            current = current[-1:]
    groups.append(current)
    return groups


async def run_recipe(
    text: str,
    *,
    base_url: str,
    limit: int,
    map_max_tokens: int,
    target: int,
    token_max: int,
    model: str = "test/model",
    max_retries: int = 0,  # the SDK's own retries (bench/concurrency.py: 429s honouring Retry-After)
) -> RecipeRun:
    run = RecipeRun()
    start = time.monotonic()
    first: list[float] = []
    common: dict[str, Any] = {
        "model": model,
        "base_url": base_url,
        "api_key": "bench",
        "max_retries": max_retries,
    }
    map_llm = ChatOpenAI(max_tokens=map_max_tokens, **common)  # type: ignore[call-arg]
    reduce_llm = ChatOpenAI(max_tokens=target, **common)  # type: ignore[call-arg]
    gate = asyncio.Semaphore(limit)

    async def ask(llm: ChatOpenAI, prompt: str) -> str:
        if not first:
            first.append(time.monotonic())
        reply = await llm.ainvoke([("human", prompt)])
        return str(reply.content)

    async def reduce(docs: list[str]) -> str:
        async with gate:
            return await ask(reduce_llm, REDUCE_PROMPT.format(docs="\n\n".join(docs)))

    async def generate_summary(state: _One) -> dict[str, list[str]]:
        return {"summaries": [await ask(map_llm, MAP_PROMPT.format(context=state["content"]))]}

    def map_summaries(state: _Overall) -> list[Send]:
        run.levels.append(len(state["contents"]))
        return [Send("generate_summary", {"content": c}) for c in state["contents"]]

    def collect_summaries(state: _Overall) -> dict[str, list[str]]:
        return {"collapsed": state["summaries"]}

    async def collapse_summaries(state: _Overall) -> dict[str, list[str]]:
        groups = split_list_of_docs(state["collapsed"], token_max)
        run.levels.append(len(groups))
        return {"collapsed": list(await asyncio.gather(*(reduce(g) for g in groups)))}

    def should_collapse(state: _Overall) -> Literal["collapse_summaries", "generate_final_summary"]:
        over = sum(map(tokens.count, state["collapsed"])) > token_max
        return "collapse_summaries" if over else "generate_final_summary"

    async def generate_final_summary(state: _Overall) -> dict[str, str]:
        run.levels.append(1)
        return {"final_summary": await reduce(state["collapsed"])}

    graph = StateGraph(_Overall)
    graph.add_node("generate_summary", generate_summary)
    graph.add_node("collect_summaries", collect_summaries)
    graph.add_node("collapse_summaries", collapse_summaries)
    graph.add_node("generate_final_summary", generate_final_summary)
    graph.add_conditional_edges(START, map_summaries, ["generate_summary"])
    graph.add_edge("generate_summary", "collect_summaries")
    graph.add_conditional_edges("collect_summaries", should_collapse)
    graph.add_conditional_edges("collapse_summaries", should_collapse)
    graph.add_edge("generate_final_summary", END)
    app = graph.compile()

    chunks = await asyncio.to_thread(split, text)
    result = await app.ainvoke(
        {"contents": chunks, "summaries": [], "collapsed": [], "final_summary": ""},
        {"recursion_limit": 100, "max_concurrency": limit},
    )
    run.wall = time.monotonic() - start
    run.first_call = (first[0] if first else time.monotonic()) - start
    run.summary = result["final_summary"]
    return run
