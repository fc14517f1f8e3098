"""summarize_documents' structure made to fit a client's byte limit: a realistic summary of 40
documents made by the real pipeline (the embedded backend, the real content store), shrunk
for Codex and Copilot, measured as clients re-serialize it (compact JSON, UTF-8 bytes)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from mcp_summarizer.assembly.engine_setup import build_engine
from mcp_summarizer.assembly.store_setup import open_store, store_options
from mcp_summarizer.citations.syntax import cited
from mcp_summarizer.clients import fit as client_fit
from mcp_summarizer.clients.profiles import PROFILES, Limits
from mcp_summarizer.config import load_settings
from mcp_summarizer.documents.pipeline import DocumentsPipeline
from mcp_summarizer.documents.schema import (
    ClusterSummary,
    Coverage,
    DocumentIn,
    DocumentsSummary,
    Index,
    MasterSummary,
)
from mcp_summarizer.documents.trim_structure import fit_structure
from mcp_summarizer.store.content import doc_of
from mcp_summarizer.tenant import LOCAL
from tests.support.documents import forty_documents

NOTICE = "[mcp-summarizer:"
SENTENCE_END = re.compile(r"[.!?\u3002\uff01\uff1f](\s*\[[^\]]+\])*$")


def at_a_cut(kept: str, whole: str) -> bool:
    """``kept`` is ``whole``, or a beginning of it that ends where `fit_structure` may cut:
    after a sentence's end (and its citations) or before a line break.  A part's summary can
    itself end mid-sentence when its share was smaller than its best sentence (the extractive
    fallback cuts at a word); such a part still ends its line, or the summary."""
    if kept == whole:  # nothing cut (ids keyed per store change the sizes from run to run)
        return True
    return whole.startswith(kept) and bool(SENTENCE_END.search(kept) or whole[len(kept) :].startswith("\n"))


def wire_bytes(summary: DocumentsSummary) -> int:
    """What Codex counts: the structure as compact JSON (serde_json), characters as they are."""
    dumped = json.dumps(summary.model_dump(mode="json"), separators=(",", ":"), ensure_ascii=False)
    return len(dumped.encode())


def summarized(tmp: Path, budget: int) -> DocumentsSummary:
    async def run() -> DocumentsSummary:
        settings = load_settings(
            {
                "SUMMARIZER_BACKEND": "extractive",
                "CACHE_DIR": str(tmp),
                "DEFAULT_CHUNK_SIZE_TOKENS": "600",
                "DEFAULT_CHUNK_OVERLAP_TOKENS": "50",
                "LLM_CONTEXT_TOKENS": "16000",
            }
        )
        store = open_store(settings, store_options(settings, 0))
        try:
            pipeline = DocumentsPipeline(
                build_engine(settings), store, min_relevance=settings.documents.cluster_min_relevance
            )
            docs = [DocumentIn.model_validate(d) for d in forty_documents()]
            return (await pipeline.summarize(docs, "wolves hunting deer", budget, tenant=LOCAL)).structured
        finally:
            await store.aclose()

    return asyncio.run(run())


@pytest.fixture(scope="module")
def forty(tmp_path_factory: pytest.TempPathFactory) -> dict[int, DocumentsSummary]:
    """The 40 documents summarized in what the server asks for a 10 KB client (`fit.room` of
    the default budget) and in a budget of 8,000 tokens (longer summaries, more to cut)."""
    tmp = tmp_path_factory.mktemp("store")
    small = client_fit.room(8000, PROFILES["codex"])
    return {small: summarized(tmp, small), 8000: summarized(tmp, 8000)}


def test_a_summary_that_fits_comes_back_unchanged(forty: dict[int, DocumentsSummary]) -> None:
    summary = forty[8000]
    for limits in (Limits(), Limits(lines=256), Limits(tokens=100), Limits(bytes=wire_bytes(summary))):
        assert fit_structure(summary, limits) is summary
    assert "_left_out" not in json.dumps(summary.model_dump(mode="json"))  # no marker when whole


@pytest.mark.parametrize("profile", ["codex", "copilot"])
@pytest.mark.parametrize("budget", ["room", 8000])
def test_forty_documents_fit_the_client_and_keep_the_most_useful(
    forty: dict[int, DocumentsSummary], profile: str, budget: int | str
) -> None:
    limits = PROFILES[profile]
    assert limits.bytes is not None
    summary = forty[client_fit.room(8000, limits) if budget == "room" else int(budget)]
    assert wire_bytes(summary) > limits.bytes  # the premise: as made, it does not fit
    before = summary.model_dump(mode="json")

    out = fit_structure(summary, limits)

    assert wire_bytes(out) <= limits.bytes
    again = DocumentsSummary.model_validate(json.loads(json.dumps(out.model_dump(mode="json"))))
    assert again == out
    assert summary.model_dump(mode="json") == before  # the input is left as it was
    # The most relevant cluster's summary keeps at least its first sentence, with its citation;
    # the master summary is whole, or cut at a sentence end with a notice.
    first, was = out.cluster_summaries[0], summary.cluster_summaries[0]
    assert first.cluster_id == was.cluster_id
    kept = first.summary.split(f"\n{NOTICE}")[0]
    assert kept and at_a_cut(kept, was.summary)
    master = out.master_summary.summary
    assert master == summary.master_summary.summary or (
        NOTICE in master and summary.master_summary.summary.startswith(master.split(f"\n{NOTICE}")[0])
    )
    # Every list shortened says by how much.
    for cut, whole in zip(out.index.clusters, summary.index.clusters, strict=True):
        assert cut.cluster_id == whole.cluster_id
        assert whole.source_ids[: len(cut.source_ids)] == cut.source_ids
        assert len(cut.source_ids) + (cut.source_ids_left_out or 0) == len(whole.source_ids)
    for cs, whole_cs in zip(out.cluster_summaries, summary.cluster_summaries, strict=True):
        assert len(cs.source_ids) + (cs.source_ids_left_out or 0) == len(whole_cs.source_ids)
    assert len(out.documents) + (out.documents_left_out or 0) == len(summary.documents)
    # The documents the kept text cites keep their entries (title, url, version).
    text = "\n".join([master, *(cs.summary for cs in out.cluster_summaries)])
    assert {doc_of(sid) for sid in cited(text)} <= {d.id for d in out.documents}
    assert out.index.coverage == summary.index.coverage


def test_least_relevant_summaries_are_cut_first_and_at_sentence_ends(
    forty: dict[int, DocumentsSummary],
) -> None:
    summary = forty[8000]  # ~44 KB; at 16 KB the text is reached, not all of it
    limits = Limits(bytes=16_000)
    out = fit_structure(summary, limits)
    pairs = list(zip(out.cluster_summaries, summary.cluster_summaries, strict=True))
    touched = [cs.summary != whole.summary for cs, whole in pairs]
    assert any(touched)  # the premise: this limit reaches the summaries' text
    first_touched = touched.index(True)
    assert first_touched > 0  # the most relevant is whole while less relevant ones are cut
    assert all(touched[first_touched:])  # every less relevant one is cut too
    assert out.master_summary.summary == summary.master_summary.summary  # kept longest
    for cs, whole in pairs:
        if cs.summary != whole.summary:
            kept, notice = cs.summary.rsplit("\n", 1) if "\n" + NOTICE in cs.summary else ("", cs.summary)
            assert notice.startswith(NOTICE) and limits.describe() in notice
            assert not kept or at_a_cut(kept, whole.summary)


def cjk(n_clusters: int, sentences: int) -> DocumentsSummary:
    """A hand-made structure whose text is CJK and emoji: three UTF-8 bytes a character, four
    for an emoji, six or twelve as \\u escapes."""
    sentence = "灰狼群在月光下的森林里猎鹿🐺。"
    clusters = [
        ClusterSummary(
            cluster_id=f"c{i}",
            topic="狼",
            subtopic="森林",
            relevance_score=1.0 - i / 10,
            summary="".join(f"{sentence}[d{i}#{j}]" for j in range(sentences)),
            source_ids=[f"d{i}#{j}" for j in range(sentences)],
            doc_ids=[f"d{i}"],
        )
        for i in range(n_clusters)
    ]
    return DocumentsSummary(
        index=Index(
            clusters=[],
            coverage=Coverage(
                documents=n_clusters,
                clusters=n_clusters,
                excerpts=n_clusters * sentences,
                clusters_summarized=n_clusters,
                documents_not_covered=[],
                citations_removed=0,
            ),
        ),
        cluster_summaries=clusters,
        master_summary=MasterSummary(
            summary=sentence * 3, source_ids=[], cluster_ids=[c.cluster_id for c in clusters], doc_ids=[]
        ),
        documents=[],
    )


def test_cjk_and_emoji_are_counted_in_utf8_bytes() -> None:
    summary = cjk(3, 20)
    raw = wire_bytes(summary)
    chars = len(json.dumps(summary.model_dump(mode="json"), separators=(",", ":"), ensure_ascii=False))
    escaped = len(json.dumps(summary.model_dump(mode="json"), separators=(",", ":")))
    assert chars < raw < escaped
    # Within the characters but over the bytes: shrunk to the bytes, cut at a CJK sentence end.
    out = fit_structure(summary, Limits(bytes=(chars + raw) // 2))
    assert wire_bytes(out) <= (chars + raw) // 2
    last = out.cluster_summaries[-1].summary.split(f"\n{NOTICE}")[0]
    assert last and SENTENCE_END.search(last) and summary.cluster_summaries[-1].summary.startswith(last)
    # Within the bytes though not within the \\u escapes: as it is.
    assert fit_structure(summary, Limits(bytes=raw)) is summary
