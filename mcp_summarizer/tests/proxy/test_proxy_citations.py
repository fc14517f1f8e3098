"""A summarized upstream result cites the parts it was stored as (issue 23): each line of the
summary ends with ``[<handle>#<n>]``, the part holding it, which `expand` opens; the citations
are within the budget, and ids the model made up are removed and counted.

The proxy as a subprocess over real HTTP, the tests' own stdio upstream (a hard-wrapped
markdown report), both backends: the extractive one and the local test LLM.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client

from mcp_summarizer.text import tokens
from tests.support.fake_llm import FakeLLM, Recorded, Reply, ok
from tests.support.servers import start_server, stop_server

META = "io.github.mythline/summary"
LABEL = re.compile(r"\[src#(\d+)\]")  # a part, as the map prompts name it
SENTENCE = re.compile(r"Server node-\d{4} listens on port \d+ since [^.]*\.")
CITATION = re.compile(r" \[([^\[\]]+)\]")


def flat(text: str) -> str:
    return " ".join(text.split())


@asynccontextmanager
async def proxied(tmp_path: Path, racks: int, budget: int, **env: str) -> AsyncIterator[tuple[Client, Any]]:
    """The proxy in front of the report upstream, a client, and its summarized report."""
    config = tmp_path / "servers.json"
    upstream = str(Path(__file__).parent / "report_upstream.py")
    config.write_text(
        json.dumps({"mcpServers": {"reports": {"command": sys.executable, "args": [upstream]}}})
    )
    server = start_server(
        {"CACHE_DIR": str(tmp_path), **env},
        ["proxy", "--config", str(config), "--transport", "streamable-http"],
    )
    try:
        async with Client(f"{server.base}/mcp") as client:
            args = {"count": racks}
            result = await client.call_tool(
                "call_tool_summarized",
                {"server": "reports", "tool": "racks", "arguments": args, "max_output_tokens": budget},
            )
            yield client, result
    finally:
        stop_server(server)


async def cited_lines(client: Client, text: str, handle: str) -> list[tuple[str, list[str]]]:
    """Each run of lines and the parts its citation names, opened with expand; the text after
    the last citation must be no line of the summary (every line is cited)."""
    body = text.split("\n\n", 1)[1]  # under the proxy's first line
    runs = CITATION.split(body)
    assert not [x for x in runs[-1].splitlines() if x.strip() and not x.startswith("#")], runs[-1]
    out = []
    for said, named in zip(runs[0::2], runs[1::2], strict=False):
        ids = named.split(", ")
        assert all(i.startswith(f"{handle}#") for i in ids), ids
        opened = []
        for i in ids:
            got = await client.call_tool("expand", {"source_id": i, "max_tokens": 0})
            assert not got.is_error, got
            opened.append(flat(got.content[0].text.split("\n\n", 1)[1]))  # type: ignore[union-attr]
        out.append((said, opened))
    return out


def checked(result: Any, budget: int) -> tuple[str, dict[str, Any]]:
    """The answer's text and summary facts, after what every cited proxy summary keeps."""
    assert not result.is_error
    text, facts = result.content[0].text, (result.meta or {})[META]
    assert tokens.count(text) <= budget  # the citations within the budget
    assert facts["handle"] and facts["excerpts"] >= 3, facts
    assert facts["citations"] == len(CITATION.findall(text)) >= 3, (facts, text)
    cited = list(dict.fromkeys(i for c in CITATION.findall(text) for i in c.split(", ")))
    links = [c.name for c in result.content if c.type == "resource_link"]
    # A link to each part the summary cites, and to the first others, in order, up to 20.
    at = [int(i.rpartition("#")[2]) for i in links]
    assert set(cited[:20]) <= set(links) and at == sorted(at) and len(at) == min(20, facts["excerpts"])
    return text, facts


async def test_an_extractive_summary_cites_the_part_holding_each_sentence(tmp_path: Path) -> None:
    budget = 1200
    async with proxied(tmp_path, 200, budget, SUMMARIZER_BACKEND="extractive") as (client, result):
        text, facts = checked(result, budget)
        assert facts["citations_removed"] == 0
        handle = facts["handle"]
        sentences = 0
        for said, opened in await cited_lines(client, text, handle):
            for line in said.splitlines():
                if line.strip() and not line.startswith("#"):
                    for s in re.split(r"(?<=[.!?])\s+", line.strip()):
                        assert any(flat(s) in o for o in opened), (s, opened)
                        sentences += 1
        assert sentences >= 10, text


async def test_an_llm_summary_keeps_the_parts_the_model_cites_and_drops_made_up_ones(
    fresh_llm: FakeLLM, tmp_path: Path
) -> None:
    maps: list[Recorded] = []

    def answer(record: Recorded) -> Reply:
        labels = LABEL.findall(record.system)
        if not labels:  # a merge: keep the lines as they are
            return ok(record.user.split("<document>")[-1].split("</document>")[0].strip())
        maps.append(record)
        said = SENTENCE.findall(flat(record.user))
        return ok(
            f"- {said[0]} [src#{labels[0]}]\n"  # a real one
            f"- {said[1]} [zz~0123456789abcdef#3]\n"  # another source's id: made up
            f"- {said[2]} [src#999]\n"  # no such part
            f"- {said[-1]}"  # no id: attributed after the fact
        )

    fresh_llm.responder = answer
    budget = 2500
    env = {"OPENROUTER_BASE_URL": fresh_llm.base_url, "LLM_RETRY_BASE_SECONDS": "0", "LLM_MAX_ATTEMPTS": "2"}
    async with proxied(
        tmp_path, 80, budget, **env, DEFAULT_CHUNK_SIZE_TOKENS="1500", DEFAULT_CHUNK_OVERLAP_TOKENS="0"
    ) as (client, result):
        text, facts = checked(result, budget)
        assert maps, "the LLM path was taken"
        assert "zz~0123456789abcdef#3" not in text and "#999" not in text and "src#" not in text, text
        assert facts["citations_removed"] == 2 * len(maps), facts
        lines = 0
        for said, opened in await cited_lines(client, text, facts["handle"]):
            last = said.strip().splitlines()[-1].lstrip("- ")
            assert any(flat(last) in o for o in opened), (last, opened)
            lines += 1
        assert lines >= 2 * len(maps), text
