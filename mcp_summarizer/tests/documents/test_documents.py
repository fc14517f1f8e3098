"""summarize_documents and expand: the real server (`python -m mcp_summarizer`), the real MCP
client over HTTP (and stdio), both backends: the embedded one (no key) and the LLM path
against the local test LLM answering scripted JSON (valid, malformed, made-up ids)."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from mcp_summarizer.citations.syntax import cited
from mcp_summarizer.documents.schema import DocumentsSummary
from mcp_summarizer.text import tokens
from tests.support.fake_llm import FakeLLM, Recorded, Reply, error, ok
from tests.support.servers import RunningServer, start_server, stop_server

META = "io.github.mythline/summary"
ID = re.compile(r"\[([A-Za-z0-9][A-Za-z0-9._-]*(?:~[0-9a-f]+)?#\d+)\]")


VOCABULARY = {
    "wolves": "packs of grey wolves hunt deer in the forest at night, howling under the moon",
    "mines": "dwarven miners dig copper ore and tin from deep tunnels lit by lanterns",
}


def page(name: str, sections: int, subject: str) -> str:
    parts = [f"# {name}"]
    for s in range(sections):
        parts.append(f"## {subject.title()} part {s}")
        for p in range(3):
            parts.append(
                f"In {name} ({s}.{p}) {VOCABULARY[subject]}; Marshal Dughan counts {s * 7 + p} {subject} "
                f"in year {600 + s}. " * 3
            )
    return "\n\n".join(parts)


WOLVES = [page(f"Elwynn {i}", 6, "wolves") for i in range(3)]
MINES = [page(f"Dun Morogh {i}", 6, "mines") for i in range(3)]
DOCS = [
    {"text": t, "title": f"Page {i}", "url": f"https://wiki.example/page{i}"}
    for i, t in enumerate(WOLVES + MINES)
]


def env(tmp: Path, **extra: str) -> dict[str, str]:
    return {
        "CACHE_DIR": str(tmp),
        "LLM_CONTEXT_TOKENS": "16000",
        "DEFAULT_CHUNK_SIZE_TOKENS": "600",
        "DEFAULT_CHUNK_OVERLAP_TOKENS": "50",
        "DEFAULT_MAX_OUTPUT_TOKENS": "1500",
        "LLM_RETRY_BASE_SECONDS": "0.01",
        "LLM_TIMEOUT_SECONDS": "30",  # generous: answers late on a loaded machine are no failure here
        **extra,
    }


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    srv = start_server(env(tmp_path_factory.mktemp("cache"), SUMMARIZER_BACKEND="extractive"))
    yield srv
    stop_server(srv)


@pytest.fixture(scope="module")
def with_llm(llm: FakeLLM, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    srv = start_server(
        env(
            tmp_path_factory.mktemp("cache"),
            OPENROUTER_BASE_URL=llm.base_url,
            OPENROUTER_API_KEY="test-key",
            LLM_MODEL="test/fake",
            LLM_MAX_ATTEMPTS="2",
        )
    )
    yield srv
    stop_server(srv)


async def call(srv: RunningServer, tool: str, args: dict[str, Any]) -> Any:
    async with Client(f"{srv.base}/mcp") as client:
        return await client.call_tool(tool, args)


def text_of(result: Any) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


def sid_of(structured: DocumentsSummary, doc_id: str, n: int = 0) -> str:
    """Excerpt ``n`` of document ``doc_id`` in that answer (its version in the id)."""
    version = next(d.version for d in structured.documents if d.id == doc_id)
    return f"{doc_id}~{version}#{n}"


def check_answer(result: Any, docs: list[dict[str, Any]], budget: int) -> DocumentsSummary:
    """The invariants of every answer: valid structure, budget, every id real, citations valid."""
    assert not result.is_error, text_of(result)
    structured = DocumentsSummary.model_validate(result.structured_content)
    text = text_of(result)
    assert 0 < tokens.count(text) <= budget
    known = {f"{d.id}~{d.version}#{i}" for d in structured.documents for i in range(d.chunk_count)}
    assert len(structured.documents) == len(docs)
    everywhere = set(ID.findall(text))
    for c in structured.index.clusters:
        everywhere |= set(c.source_ids)
    for s in structured.cluster_summaries:
        everywhere |= set(s.source_ids) | set(ID.findall(s.summary))
    everywhere |= set(structured.master_summary.source_ids) | set(
        ID.findall(structured.master_summary.summary)
    )
    assert everywhere <= known, everywhere - known
    index_ids = [sid for c in structured.index.clusters for sid in c.source_ids]
    assert sorted(index_ids) == sorted(known)  # every excerpt in exactly one cluster
    return structured


# -- embedded backend ------------------------------------------------------------------------


async def test_embedded_answer_is_traceable_and_expand_opens_the_original(embedded: RunningServer) -> None:
    result = await call(embedded, "summarize_documents", {"documents": DOCS, "max_output_tokens": 1200})
    s = check_answer(result, DOCS, 1200)
    assert s.index.coverage.documents == 6 and s.index.coverage.excerpts >= 6
    assert s.cluster_summaries and s.master_summary.summary
    assert result.meta[META]["backend"] == "extractive" and result.meta[META]["degraded"] is False
    # wolves and mines never share a cluster (doc ids are hashes: told apart by their texts)
    by_id = {d.id: DOCS[i]["text"] for i, d in enumerate(s.documents)}
    for c in s.index.clusters:
        kinds = {("wolves" in by_id[d]) for d in c.doc_ids}
        assert len(kinds) == 1, c
    # every cited id opens to text that is in its document
    cited = ID.findall(text_of(result))
    assert cited
    for sid in cited[:5]:
        opened = await call(embedded, "expand", {"source_id": sid})
        assert not opened.is_error, text_of(opened)
        header, _, body = text_of(opened).partition("\n\n")
        assert (
            f"Source: {sid}" in header and "Title: Page" in header and "URL: https://wiki.example" in header
        )
        assert body and body in by_id[sid.split("~")[0]]


async def test_embedded_is_deterministic(embedded: RunningServer) -> None:
    args = {"documents": DOCS, "focus": "wolves", "max_output_tokens": 800}
    first, second = (
        await call(embedded, "summarize_documents", args),
        await call(embedded, "summarize_documents", args),
    )
    assert text_of(first) == text_of(second) and first.structured_content == second.structured_content


async def test_focus_ranks_relevant_clusters_first(embedded: RunningServer) -> None:
    result = await call(
        embedded, "summarize_documents", {"documents": DOCS, "focus": "mines", "max_output_tokens": 800}
    )
    s = check_answer(result, DOCS, 800)
    scores = [c.relevance_score for c in s.index.clusters]
    assert scores == sorted(scores, reverse=True)
    assert s.index.clusters[0].relevance_score == 1.0 and s.index.clusters[-1].relevance_score < 1.0
    by_id = {d.id: DOCS[i]["text"] for i, d in enumerate(s.documents)}
    assert all("mines" in by_id[d] for d in s.cluster_summaries[0].doc_ids)


async def test_a_tight_budget_drops_clusters_and_says_so(embedded: RunningServer) -> None:
    result = await call(
        embedded, "summarize_documents", {"documents": DOCS, "focus": "mines", "max_output_tokens": 150}
    )
    s = check_answer(result, DOCS, 150)
    dropped = [c for c in s.index.clusters if not c.summarized]
    assert dropped and all(c.dropped_because for c in dropped)
    assert s.index.coverage.clusters_summarized == len(s.cluster_summaries) < s.index.coverage.clusters


@pytest.mark.parametrize(
    ("documents", "words"),
    [
        ([{"text": "a", "id": "x"}, {"text": "b", "id": "x"}], ["documents[0] and documents[1]", "unique"]),
        (
            [{"text": "a", "url": "https://e.example"}, {"text": "b", "url": "https://e.example"}],
            ["same url"],
        ),
    ],
)
async def test_duplicate_ids_are_refused(
    embedded: RunningServer, documents: list[dict[str, str]], words: list[str]
) -> None:
    result = await call(embedded, "summarize_documents", {"documents": documents})
    assert result.is_error
    for w in words:
        assert w in text_of(result)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ({"max_output_tokens": 10}, ["max_output_tokens=10", "at least 64"]),
        ({"focus": "wolves " * 500_000}, ["focus is too long", "LLM_CONTEXT_TOKENS"]),
        ({"max_output_tokens": -1}, ["max_output_tokens"]),
    ],
)
async def test_bad_budgets_and_focus_are_refused(
    embedded: RunningServer, args: dict[str, Any], words: list[str]
) -> None:
    result = await call(embedded, "summarize_documents", {"documents": DOCS[:1], **args})
    assert result.is_error
    for w in words:
        assert w in text_of(result)


@pytest.mark.parametrize(
    "text",
    [
        "." * 1_000_000,  # no word, no space, no newline
        "東京は日本の首都です。" * 50_000,  # CJK, no spaces
        "<|endoftext|> " * 20_000,  # special tokens, read as text
        "a" * 300_000,  # one run of one character
    ],
    ids=["dots", "cjk", "special-tokens", "one-run"],
)
async def test_hostile_text(embedded: RunningServer, text: str) -> None:
    docs = [{"text": text, "id": "h"}, {"text": WOLVES[0], "id": "w"}]
    result = await call(embedded, "summarize_documents", {"documents": docs, "max_output_tokens": 500})
    s = check_answer(result, docs, 500)
    assert s.documents[0].chunk_count >= 1
    health = await asyncio.to_thread(urllib.request.urlopen, f"{embedded.base}/health", timeout=5)
    assert health.status == 200


async def test_no_documents_and_one_small_document(embedded: RunningServer) -> None:
    none = await call(embedded, "summarize_documents", {"documents": []})
    assert not none.is_error
    s = DocumentsSummary.model_validate(none.structured_content)
    assert s.index.coverage.documents == 0 and s.cluster_summaries == []
    one = await call(
        embedded, "summarize_documents", {"documents": [{"text": "Hogger leads the gnolls.", "id": "h"}]}
    )
    s = check_answer(one, [{}], 5000)
    sid = f"h~{s.documents[0].version}#0"
    assert s.index.clusters[0].source_ids == [sid] and f"[{sid}]" in text_of(one)


async def test_empty_documents_are_reported_as_not_covered(embedded: RunningServer) -> None:
    docs = [{"text": "", "id": "empty"}, {"text": WOLVES[0], "id": "w"}]
    s = check_answer(await call(embedded, "summarize_documents", {"documents": docs}), docs, 5000)
    assert "empty" in s.index.coverage.documents_not_covered
    assert s.documents[0].chunk_count == 0


async def test_five_hundred_small_documents(embedded: RunningServer) -> None:
    docs = [
        {"text": f"Note {i}: the {['wolves', 'mines'][i % 2]} report {i} says {i * 3} items.", "id": f"n{i}"}
        for i in range(500)
    ]
    s = check_answer(
        await call(embedded, "summarize_documents", {"documents": docs, "max_output_tokens": 2000}),
        docs,
        2000,
    )
    assert s.index.coverage.excerpts == 500


async def test_one_document_of_a_million_tokens(embedded: RunningServer) -> None:
    big = page("Huge", 1, "wolves")
    text = "\n\n".join(
        big.replace("Huge", f"Huge {i}") for i in range(int(1_000_000 / tokens.count(big)) + 1)
    )
    assert tokens.count(text) >= 1_000_000
    docs = [{"text": text, "id": "huge"}]
    s = check_answer(
        await call(embedded, "summarize_documents", {"documents": docs, "max_output_tokens": 3000}),
        docs,
        3000,
    )
    assert s.documents[0].tokens >= 1_000_000 and s.documents[0].chunk_count > 100


@pytest.mark.parametrize(
    ("source_id", "words"),
    [("nothere#3", ["nothere#3"]), ("", ["source"]), ("a" * 300, ["source_id"])],
)
async def test_expand_names_the_problem(embedded: RunningServer, source_id: str, words: list[str]) -> None:
    result = await call(embedded, "expand", {"source_id": source_id})
    assert result.is_error
    for w in words:
        assert w in text_of(result)


async def test_expand_max_tokens_cuts_and_says_so(embedded: RunningServer) -> None:
    made = await call(embedded, "summarize_documents", {"documents": [{"text": WOLVES[0], "id": "cut"}]})
    version = DocumentsSummary.model_validate(made.structured_content).documents[0].version
    result = await call(embedded, "expand", {"source_id": f"cut~{version}#0", "max_tokens": 20})
    header, _, body = text_of(result).partition("\n\n")
    assert "cut to max_tokens=20" in header and 0 < tokens.count(body) <= 20
    assert "Previous: none (the first)" in header and f"Next: cut~{version}#1" in header


# -- the LLM path ----------------------------------------------------------------------------


EXCERPT = re.compile(r'<excerpt id="([^"]+)" max_tokens="(\d+)">\n(.*?)\n</excerpt>', re.DOTALL)


def scripted(malformed: set[str], invent: bool = True) -> Any:
    """The test LLM as a model that follows the prompts: JSON for the map, one object for an
    excerpt, an array entry per excerpt of a batch (but malformed for excerpts whose text
    holds a marker in ``malformed``), citations for the merges (plus one made-up id when
    ``invent``)."""

    def entry(text: str) -> dict[str, Any]:
        subject = "wolves" if "wolves" in text else "mines"
        return {
            # The excerpt's own first words: a batch of the same summary over and over would
            # be a loop, which the engine rejects (summarize.degenerate).
            "summary": f"Summary about {subject}: Marshal Dughan counts them ({' '.join(text.split()[:8])}).",
            "topic": subject.title(),
            "subtopic": f"{subject} census",
            "relevance_score": 0.9 if subject == "wolves" else 0.3,
        }

    def respond(r: Recorded) -> Reply:
        if "indexing engine" in r.system:
            batch = EXCERPT.findall(r.user)
            if batch:
                return ok(
                    json.dumps(
                        [
                            {"id": sid, **entry(body)}
                            if not any(m in body for m in malformed)
                            else {"id": sid}
                            for sid, _, body in batch
                        ]
                    )
                )
            if any(m in r.user for m in malformed):
                return ok("Sure! Here is the summary: wolves, many of them.")
            return ok(json.dumps(entry(r.user)))
        ids = ID.findall(r.user)
        tail = " Also [ghost#99]." if invent else ""
        return ok(f"Merged: Dughan counts them [{ids[0]}]." + tail if ids else "Merged.")

    return respond


async def test_llm_path_validates_json_retries_once_and_removes_made_up_ids(
    with_llm: RunningServer, fresh_llm: FakeLLM
) -> None:
    fresh_llm.responder = scripted(malformed={"Dun Morogh 2"})
    result = await call(
        with_llm, "summarize_documents", {"documents": DOCS, "focus": "wolves", "max_output_tokens": 1000}
    )
    s = check_answer(result, DOCS, 1000)
    # The malformed excerpts' summaries are their fallback's (extracted): not all the LLM's.
    assert result.meta[META]["backend"] == "mixed" and result.meta[META]["degraded"] is False
    assert 0 < result.meta[META]["llm_share"] < 1, result.meta[META]  # as summarize says it
    assert "ghost#99" not in text_of(result) and s.index.coverage.citations_removed >= 1
    topics = {c.topic for c in s.index.clusters}
    assert {"Wolves", "Mines"} <= topics
    # the malformed excerpts were asked again once, then got the fallback label (the title)
    retries = [r for r in fresh_llm.requests if "Answer again" in r.system]
    assert retries and all("Dun Morogh 2" in r.user for r in retries)
    assert any(c.topic == "Page 5" for c in s.index.clusters)
    assert s.index.clusters[0].topic == "Wolves"  # most relevant first
    assert "[" in s.master_summary.summary


async def test_llm_down_answers_offline_with_a_notice(with_llm: RunningServer, fresh_llm: FakeLLM) -> None:
    fresh_llm.responder = lambda r: error(500, delay=0.0)
    result = await call(with_llm, "summarize_documents", {"documents": DOCS, "max_output_tokens": 600})
    s = check_answer(result, DOCS, 600)
    assert result.meta[META]["degraded"] is True and result.meta[META]["backend"] == "extractive"
    assert text_of(result).startswith("[summarized offline: the LLM failed: HTTP 500")
    # As every tool says it: the line that says so (it had none).
    assert result.meta[META]["notice"] == text_of(result).split("\n\n")[0]
    assert s.cluster_summaries


# -- many small documents: calls follow the tokens -------------------------------------------


@pytest.fixture(scope="module")
def defaults_llm(llm: FakeLLM, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """The service with its default sizes (context, chunks, answers), on the test LLM."""
    srv = start_server(
        {
            "CACHE_DIR": str(tmp_path_factory.mktemp("cache")),
            "OPENROUTER_BASE_URL": llm.base_url,
            "OPENROUTER_API_KEY": "test-key",
            "LLM_MODEL": "test/fake",
            "LLM_RETRY_BASE_SECONDS": "0.01",
            "LLM_MAX_ATTEMPTS": "2",
        }
    )
    yield srv
    stop_server(srv)


NUMBERED = re.compile(r"(?:line|note) (\d+)\b")


def numbered_model(skip: frozenset[int] = frozenset(), broken: frozenset[int] = frozenset()) -> Any:
    """A model that answers a batch with its entries in reverse order (an id, not a position,
    says whose entry it is), each summary naming the number its excerpt carries; an excerpt
    numbered in ``skip`` gets no entry the first time it is asked, one in ``broken`` an
    invalid entry every time.  Merges cite the ids they read."""
    asked: set[str] = set()

    def respond(r: Recorded) -> Reply:
        if "indexing engine" in r.system:
            entries = []
            for sid, _, body in reversed(EXCERPT.findall(r.user)):
                n = int(NUMBERED.search(body).group(1))  # type: ignore[union-attr]
                first = sid not in asked
                asked.add(sid)
                if n in skip and first:
                    continue
                if n in broken:
                    entries.append({"id": sid, "summary": "", "topic": "x"})
                    continue
                subject = "wolves" if "wolves" in body else "mines"
                entries.append(
                    {"id": sid, "summary": f"item {n} of {subject}", "topic": subject, "subtopic": "count"}
                )
            if not EXCERPT.search(r.user):  # one excerpt alone: one object
                n = int(NUMBERED.search(r.user).group(1))  # type: ignore[union-attr]
                subject = "wolves" if "wolves" in r.user else "mines"
                return ok(
                    json.dumps({"summary": f"item {n} of {subject}", "topic": subject, "subtopic": "count"})
                )
            return ok("```json\n" + json.dumps(entries) + "\n```")
        ids = ID.findall(r.user)
        return ok(" ".join(f"Counted [{i}]." for i in ids[:30]) or "Merged.")

    return respond


def one_liners(n: int) -> list[dict[str, Any]]:
    return [
        {"text": f"The {['wolves', 'mines'][i % 2]} line {i} says {i * 7}.", "id": f"l{i}"} for i in range(n)
    ]


def notes(n: int) -> list[dict[str, Any]]:
    return [
        {
            "text": f"Note {i}: the {['wolves', 'mines'][i % 2]} report {i} counts {i * 3} items in year "
            f"{600 + i % 40}. Marshal Dughan filed note {i} on day {i % 28 + 1}.",
            "id": f"n{i}",
            "title": f"Note {i}",
        }
        for i in range(n)
    ]


def merge_pieces(requests: list[Recorded]) -> dict[str, str]:
    """What the cluster merges were given: each excerpt's id and the summary beside it."""
    pieces: dict[str, str] = {}
    for r in requests:
        if "summarization engine" in r.system and "subject" in r.system:
            for sid, summary in re.findall(r"\[([A-Za-z0-9.-]+(?:~[0-9a-f]+)?#\d+)\] ([^\n]*)", r.user):
                pieces.setdefault(sid, summary)
    return pieces


@pytest.mark.parametrize(
    ("make", "count", "most_calls", "most_map_calls"),
    # Each excerpt's id (with its 16-hex version) is in its batch tag and its answer entry.
    [(one_liners, 2000, 40, 34), (notes, 500, 16, 10)],
    ids=["2000-one-liners", "500-notes"],
)
async def test_small_documents_share_map_calls_each_summary_keeps_its_id(
    defaults_llm: RunningServer,
    fresh_llm: FakeLLM,
    make: Any,
    count: int,
    most_calls: int,
    most_map_calls: int,
) -> None:
    fresh_llm.responder = numbered_model()
    docs = make(count)
    result = await call(defaults_llm, "summarize_documents", {"documents": docs})
    s = check_answer(result, docs, 5000)
    assert result.meta[META]["backend"] == "llm" and result.meta[META]["degraded"] is False
    assert result.meta[META]["llm_share"] == 1.0, result.meta[META]
    maps = [r for r in fresh_llm.requests if "indexing engine" in r.system]
    assert len(maps) <= most_map_calls, len(maps)
    assert len(fresh_llm.requests) <= most_calls, len(fresh_llm.requests)
    # every excerpt asked exactly once, and each answer within the model's context
    asked = [sid for r in maps for sid, _, _ in EXCERPT.findall(r.user)]
    assert sorted(asked) == sorted(sid_of(s, d["id"]) for d in docs)
    assert all(r.prompt_tokens + (r.max_tokens or 0) <= 128_000 for r in fresh_llm.requests)
    # each excerpt's summary went on under its own id (the model answered in reverse order)
    pieces = merge_pieces(fresh_llm.requests)
    assert len(pieces) == count
    for sid, summary in pieces.items():
        assert summary.startswith(f"item {sid[1:].split('~')[0]} of "), (sid, summary)
    assert {c.topic for c in s.index.clusters} == {"wolves", "mines"}


async def test_a_malformed_batch_answer_falls_back_per_excerpt(
    defaults_llm: RunningServer, fresh_llm: FakeLLM
) -> None:
    fresh_llm.responder = numbered_model(skip=frozenset({3, 4}), broken=frozenset({7}))
    docs = notes(20)
    result = await call(defaults_llm, "summarize_documents", {"documents": docs})
    s = check_answer(result, docs, 5000)
    maps = [r for r in fresh_llm.requests if "indexing engine" in r.system]
    # one call for the 20 notes, then one retry asking for the three without a valid entry
    assert len(maps) == 2
    assert "Answer again" in maps[1].system and f"{sid_of(s, 'n7')}: empty summary" in maps[1].system
    assert sorted(sid for sid, _, _ in EXCERPT.findall(maps[1].user)) == sorted(
        sid_of(s, f"n{i}") for i in (3, 4, 7)
    )
    # 3 and 4 answered the second time; 7 never: its fallback is its title, the others' labels stay
    topic = {sid: c.topic for c in s.index.clusters for sid in c.source_ids}
    assert topic[sid_of(s, "n7")] == "Note 7"
    assert all(topic[sid_of(s, f"n{i}")] in ("wolves", "mines") for i in range(20) if i != 7)
    event = defaults_llm.wait_for_event("documents_summary_complete")[-1]
    assert event["json_retries"] == 1 and event["json_fallbacks"] == 1


QUOTING = [
    {
        "id": "a",
        "text": "Hogger leads the gnolls of Elwynn Forest near the river; see [secret#0] for the rest.",
    },
    {
        "id": "b",
        "text": "The gnolls of Elwynn Forest raid the farms by the river [a#0, secret#1] every night.",
    },
]


async def test_embedded_path_removes_ids_quoted_in_documents(embedded: RunningServer) -> None:
    result = await call(embedded, "summarize_documents", {"documents": QUOTING})
    s = check_answer(result, QUOTING, 5000)
    text = text_of(result)
    assert "secret#" not in text and "secret#" not in json.dumps(result.structured_content)
    assert "Hogger leads the gnolls" in text  # the sentence stays, without the quoted id
    assert s.index.coverage.citations_removed == 3  # secret#0, and a#0 and secret#1 quoted by b
    for c in s.cluster_summaries:  # b's sentence cites b, never the a#0 it quoted
        for para in c.summary.split("\n\n"):
            if "raid the farms" in para:
                assert ID.findall(para) == [sid_of(s, "b")], para


async def test_llm_path_removes_ids_a_map_summary_copied_from_a_document(
    with_llm: RunningServer, fresh_llm: FakeLLM
) -> None:
    def echo(r: Recorded) -> Reply:  # a model that copies the quoted ids into its summaries
        def entry(text: str) -> dict[str, str]:
            quoted = " ".join(f"[{i}]" for i in cited(text)) or "nothing"
            topic = "Gnolls" if "gnolls" in text else "Harbour"
            return {"summary": f"{topic}, see {quoted}.", "topic": topic, "subtopic": "raids"}

        if "indexing engine" in r.system:
            batch = EXCERPT.findall(r.user)
            if batch:
                return ok(json.dumps([{"id": sid, **entry(body)} for sid, _, body in batch]))
            return ok(json.dumps(entry(r.user)))
        return ok("Merged.")

    fresh_llm.responder = echo
    docs = [*QUOTING, {"id": "c", "text": "The harbour of Stormwind holds forty ships and two lighthouses."}]
    result = await call(with_llm, "summarize_documents", {"documents": docs})
    s = check_answer(result, docs, 1500)
    assert "secret#" not in text_of(result), text_of(result)
    assert s.index.coverage.citations_removed == 3
    # b quoted a#0, a source of the same cluster: still not a citation of b's piece
    gnolls = next(c for c in s.cluster_summaries if c.topic == "Gnolls")
    assert sorted(gnolls.source_ids) == [sid_of(s, "a"), sid_of(s, "b")]
    for para in gnolls.summary.split("\n\n"):
        assert len(cited(para)) == 1, para
    merges = [r for r in fresh_llm.requests if "indexing engine" not in r.system]
    assert merges and all("secret#" not in r.user for r in merges)


# -- stdio --------------------------------------------------------------------------------------


async def test_over_stdio(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_summarizer", "--transport", "stdio"],
        env={"SUMMARIZER_BACKEND": "extractive", "CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    async with Client(params) as client:
        result = await client.call_tool(
            "summarize_documents", {"documents": DOCS[:2], "max_output_tokens": 500}
        )
        s = check_answer(result, DOCS[:2], 500)
        sid = s.cluster_summaries[0].source_ids[0]
        opened = await client.call_tool("expand", {"source_id": sid})
        assert not opened.is_error and f"Source: {sid}" in text_of(opened)


async def test_progress_is_reported_per_phase(
    embedded: RunningServer, with_llm: RunningServer, fresh_llm: FakeLLM
) -> None:
    fresh_llm.responder = scripted(malformed=set(), invent=False)
    for srv, last in ((embedded, "embedded summaries"), (with_llm, "reduce")):
        seen: list[str] = []

        async def on_progress(
            progress: float, total: float | None, message: str | None, seen: list[str] = seen
        ) -> None:
            seen.append(message or "")

        async with Client(f"{srv.base}/mcp") as client:
            result = await client.call_tool(
                "summarize_documents",
                {"documents": DOCS, "max_output_tokens": 800},
                progress_callback=on_progress,
            )
        assert not result.is_error
        assert seen[0].startswith("indexing") and any(m.startswith(last) for m in seen), seen
        if srv is with_llm:
            assert any(m.startswith("map") for m in seen)
