"""The engine's system prompts, from the markdown files in ``prompts/``: the map and reduce
prompts a request asks for (checked against the context's share for instructions), the
repair prompt, and the ``<document>`` wrapper of a call's content."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from mcp_summarizer.citations.ask import NO_CITATIONS
from mcp_summarizer.errors import InputError
from mcp_summarizer.summarize.budget import Budget
from mcp_summarizer.summarize.engine.model import Prompt, Request, named_cut
from mcp_summarizer.text import tokens
from shared.prompt_loader import load_prompt, render

__all__ = ["Prompts"]

_NAMES = (
    "map_general",
    "map_extraction",
    "reduce",
    "focus_instructions",
    "source_context",
    "repair",
    "document",
)


class Prompts:
    def __init__(self) -> None:
        self._t = {name: load_prompt(__file__, name) for name in _NAMES}
        self.repair = self._t["repair"]
        self.document_overhead = tokens.count(self.document(""))  # the wrapper's tokens

    def document(self, content: str) -> str:
        """A call's user message: ``content`` in its ``<document>`` tags."""
        return render(self._t["document"], content=content)

    def systems(self, request: Request, budget: Budget) -> tuple[Prompt, Prompt]:
        """The map and reduce system prompts, waiting for their ``max_tokens``; a source still
        being cut must be `named_cut` (for None) first.  Raises InputError when the focus
        or schema hint makes one longer than ``budget`` allows instructions.

        Rendered in one pass at call time: a caller's ``{braces}`` in a schema hint are
        inserted as text, never read as placeholders.
        """
        t = self._t
        focus = render(t["focus_instructions"], focus=request.focus) if request.focus.strip() else ""
        if request.source.strip() or request.query.strip():
            focus += render(
                t["source_context"],
                source=request.source.strip() or "not given",
                query=request.query.strip() or "not given",
            )
        cite = request.cite
        per_chunk = cite.map_values if cite is not None else None
        ready = (
            partial(named_cut, cite, request.cut) if cite is not None and request.cut is not None else None
        )
        if request.kind == "extraction":
            values = {"schema_hint": request.focus, **NO_CITATIONS}
            map_system = Prompt(t["map_extraction"], values, per_chunk, ready)
        else:
            values = {"focus_instructions": focus, **NO_CITATIONS}
            map_system = Prompt(t["map_general"], values, per_chunk, ready)
        kept = cite.reduce_values() if cite is not None else NO_CITATIONS
        reduce_system = Prompt(t["reduce"], {"focus_instructions": focus, **kept})
        limit = budget.max_instructions
        for system in (map_system, reduce_system):
            size = tokens.count(replace(system, per_chunk=None, ready=None)(0))  # the caller's part: no ids
            if size > limit:
                what = "schema_hint" if request.kind == "extraction" else "focus_areas"
                raise InputError(
                    f"{what} is too long: the prompt built from it is {size} tokens, "
                    f"over an eighth of LLM_CONTEXT_TOKENS={budget.setting}"
                )
        return map_system, reduce_system
