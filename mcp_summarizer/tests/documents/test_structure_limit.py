"""Issue 33, item 7: summarize_documents' structuredContent within TOOL_OUTPUT_MAX_BYTES when
its lists are long.  10,000 one-line documents at 20,000 bytes made 158,983 bytes of it
(``doc_ids`` and ``documents_not_covered`` listed whole): now each long list is kept as its
first and last ids with the count between, and the whole structure opens through expand and
the excerpt resource.  The real server, the real MCP client over HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from mcp import Client

from tests.support.servers import RunningServer, start_server, stop_server

DOCUMENTS = 10_000
LIMIT = 20_000
WORDS = "wolves deer forest river hunt pack winter snow moon den".split()


def one_liners() -> list[dict[str, str]]:
    return [
        {"id": f"d{i}", "text": f"The {WORDS[i % 10]} and the {WORDS[i * 3 % 10]} number {i} met at dawn."}
        for i in range(DOCUMENTS)
    ]


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    srv = start_server({"SUMMARIZER_BACKEND": "extractive", "TOOL_OUTPUT_MAX_BYTES": str(LIMIT)})
    yield srv
    stop_server(srv)


def wire(value: Any) -> bytes:
    """As Codex re-serializes structuredContent: compact JSON, characters as they are."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def shortened(kept: list[str], left_out: int | None, whole: list[str]) -> bool:
    """``kept`` is ``whole``, or its first and last ids with the count of those between."""
    if left_out is None:
        return kept == whole
    return kept == [whole[0], whole[-1]] and left_out == len(whole) - 2


async def test_ten_thousand_documents_fit_and_the_whole_structure_opens(server: RunningServer) -> None:
    async with Client(server.url) as mcp:
        result = await mcp.call_tool("summarize_documents", {"documents": one_liners(), "focus": "wolves"})
        schema = next(
            t.output_schema for t in (await mcp.list_tools()).tools if t.name == "summarize_documents"
        )
        got = result.structured_content
        assert not result.is_error and got is not None and schema is not None
        whole_id = got["whole_structure_id"]
        page = await mcp.call_tool("expand", {"source_id": whole_id})
        handle, n = whole_id.split("#")
        read = await mcp.read_resource(f"summary://{handle}/{n}")
    assert len(wire(got)) <= LIMIT, len(wire(got))
    jsonschema.validate(got, schema)
    whole = json.loads(read.contents[0].text)  # type: ignore[union-attr]
    assert len(wire(whole)) > 10 * LIMIT  # the premise: as made, the lists are far over
    # Each list says what it kept and how much it left out; the whole lists are those.
    coverage, whole_coverage = got["index"]["coverage"], whole["index"]["coverage"]
    assert coverage["documents"] == whole_coverage["documents"] == DOCUMENTS
    assert len(whole_coverage["documents_not_covered"]) > 2
    assert shortened(
        coverage["documents_not_covered"],
        coverage.get("documents_not_covered_left_out"),
        whole_coverage["documents_not_covered"],
    )
    whole_clusters = {c["cluster_id"]: c for c in whole["index"]["clusters"]}
    assert len(got["index"]["clusters"]) + got["index"].get("clusters_left_out", 0) == len(whole_clusters)
    for cluster in got["index"]["clusters"]:
        was = whole_clusters[cluster["cluster_id"]]
        assert shortened(cluster["doc_ids"], cluster.get("doc_ids_left_out"), was["doc_ids"])
        assert len(cluster["source_ids"]) + cluster.get("source_ids_left_out", 0) == len(was["source_ids"])
    master, whole_master = got["master_summary"], whole["master_summary"]
    assert shortened(master["doc_ids"], master.get("doc_ids_left_out"), whole_master["doc_ids"])
    assert len(got["documents"]) + got.get("documents_left_out", 0) == DOCUMENTS == len(whole["documents"])
    assert "whole_structure_id" not in whole
    # expand opens the same text, a page at a time (this client's limit holds for it too).
    text = "".join(c.text for c in page.content if c.type == "text")
    head, _, body = text.partition("\n\n")
    assert whole_id in head and len(text.encode()) <= LIMIT
    assert body and read.contents[0].text.startswith(body.rstrip("\n")[:1000])  # type: ignore[union-attr]


async def test_a_structure_that_fits_is_as_made(server: RunningServer) -> None:
    """Nothing shortened: no counts, no whole structure kept."""
    docs = one_liners()[:5]
    async with Client(server.url) as mcp:
        result = await mcp.call_tool("summarize_documents", {"documents": docs, "focus": "wolves"})
    got = result.structured_content
    assert got is not None and "_left_out" not in json.dumps(got) and "whole_structure_id" not in got
    assert len(wire(got)) <= LIMIT
