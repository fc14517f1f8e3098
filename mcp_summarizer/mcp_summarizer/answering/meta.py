"""The facts an answer's `_meta` says of it (under `mcp.results.META_SUMMARY`): who wrote
it, whether it degraded and why, its tokens, its fidelity receipt.  Here, below the MCP
surface, because the answers are kept in the result cache with them (`answering.cached`), and
every tool, the proxy and the background jobs say them the same way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.documents.compose import DocumentsOutcome
from mcp_summarizer.documents.trim_structure import fit_structure
from mcp_summarizer.summarize.engine import Outcome, by_llm

__all__ = ["documents_said", "summary_facts"]


def summary_facts(outcome: Outcome | None, model: str) -> dict[str, object]:
    """The facts `_meta` gives of an answer the engine made (``outcome``; None: the source's
    own text): who wrote it, whether it degraded and why, its tokens, the LLM's share and
    rejected answers, its fidelity receipt.  Every tool's and the proxy's summaries say them."""
    facts: dict[str, object] = {"degraded": False, "cause": None, "backend": "none", "model": None}
    if outcome is not None:
        facts.update(
            degraded=outcome.degraded,
            cause=outcome.cause or None,
            backend=outcome.backend,
            model=model if by_llm(outcome.backend) else None,
            input_tokens=outcome.input_tokens,
            output_tokens=outcome.output_tokens,
        )
        if outcome.notice:  # why it degraded, as one line (ON_LLM_FAILURE=original: only here)
            facts["notice"] = outcome.notice
        if outcome.llm_share is not None:  # how much of the source the LLM's own summaries cover
            facts["llm_share"] = outcome.llm_share
        if outcome.asked_llm():  # how many of the LLM's answers were not used (zero counts too)
            facts["rejected"] = outcome.rejected_meta()
    facts["fidelity"] = outcome.fidelity.as_meta() if outcome and outcome.fidelity else {"unchanged": True}
    return facts


def documents_said(
    outcome: DocumentsOutcome,
    model: str,
    limits: Limits,
    more: Mapping[str, object] | None = None,
    whole: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """summarize_documents' facts (with ``more``) and its structure, fit to the client
    (``whole``: the id it is kept whole under)."""
    facts = {
        "degraded": outcome.degraded,
        "cause": outcome.cause or None,
        "backend": outcome.backend,
        "model": model if by_llm(outcome.backend) else None,
        "input_tokens": outcome.input_tokens,
        "output_tokens": outcome.output_tokens,
        **({"notice": outcome.notice} if outcome.notice else {}),
        **({"llm_share": outcome.llm_share} if outcome.llm_share is not None else {}),
        "fidelity": outcome.fidelity.as_meta() if outcome.fidelity else {"unchanged": True},
        "sources_stored": outcome.sources_stored,
        **({"rejected": outcome.rejected} if outcome.rejected is not None else {}),
        **(more or {}),
    }
    return facts, fit_structure(outcome.structured, limits, whole).model_dump(mode="json")
