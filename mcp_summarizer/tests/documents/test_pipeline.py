"""The documents pipeline in process, on the local test LLM: the receipt's scan of a long
source runs while the LLM works, not after its last answer."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from mcp_summarizer.assembly.engine_setup import build_engine
from mcp_summarizer.assembly.store_setup import open_store, store_options
from mcp_summarizer.config import load_settings
from mcp_summarizer.documents.pipeline import DocumentsPipeline
from mcp_summarizer.documents.schema import DocumentIn
from mcp_summarizer.fidelity import receipt
from mcp_summarizer.summarize.engine import fidelity_pass as fidelity
from mcp_summarizer.tenant import LOCAL
from tests.support.fake_llm import FakeLLM


def page(i: int) -> str:
    return "\n\n".join(
        f"## Region {s} of page {i}\n\n"
        + " ".join(f"Marshal Dughan counts {s * 13 + k} wolves in year {600 + k}." for k in range(40))
        for s in range(40)
    )


async def test_a_long_sources_facts_are_scanned_while_the_llm_works(
    fresh_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    documents = [DocumentIn(id=f"p{i}", title=f"Page {i}", text=page(i)) for i in range(6)]
    assert sum(len(d.text) for d in documents) >= fidelity.SCAN_AHEAD_CHARS, "the test's premise"
    scanned: list[float] = []

    def timed(scan: Any) -> Any:
        def inner(*args: Any, **kwargs: Any) -> Any:
            scanned.append(time.monotonic())
            return scan(*args, **kwargs)

        return inner

    # Both names the source is scanned by: ahead (SourceScan), or inside `receipt` at the end.
    monkeypatch.setattr(fidelity, "source_facts", timed(fidelity.source_facts))
    monkeypatch.setattr(receipt, "source_facts", timed(receipt.source_facts))
    fresh_llm.latency = 0.3
    settings = load_settings(
        {"OPENROUTER_BASE_URL": fresh_llm.base_url, "CACHE_DIR": str(tmp_path), "LLM_TIMEOUT_SECONDS": "60"}
    )
    engine = build_engine(settings)
    store = open_store(settings, store_options(settings, 0))
    try:
        pipeline = DocumentsPipeline(engine, store, min_relevance=settings.documents.cluster_min_relevance)
        out = await pipeline.summarize(documents, "", 2000, tenant=LOCAL)
    finally:
        await store.aclose()
        await engine.aclose()
    assert out.fidelity is not None and out.fidelity.source_facts > 0
    finished = [r.finished for r in fresh_llm.requests if r.finished is not None]
    assert len(finished) >= 2 and scanned
    assert scanned[0] < max(finished), "the scan started before the LLM's last answer"
