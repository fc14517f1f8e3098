"""What kind of answer a tool gave, for the tests that check many at once (the reliability
suite's load, fault and shutdown tests): the LLM's, a mixed one, the failure policy's, or a
problem.  One rule, so that every kind is counted and said in their report lines and none is
taken for another.

`mixed` (issue 35): the LLM wrote some parts and the embedded summary the rest, because parts'
answers were rejected twice (`_meta.rejected.parts_replaced`) or a deadline came first
(`_meta.partial`).  It is neither a problem nor an LLM answer; a `mixed` that says neither is
a problem, as is any other backend that was not expected.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from mcp.types import CallToolResult

from mcp_summarizer.text import tokens

__all__ = ["FETCH_OFFLINE", "META", "OFFLINE_NOTICE", "Answer", "Tally", "answer_kind", "answer_problem"]

META = "io.github.mythline/summary"
OFFLINE_NOTICE = "[summarized offline: the LLM failed: "
FETCH_OFFLINE = "embedded extractive summary: the LLM failed: "
Kind = Literal["llm", "mixed", "degraded", "problem"]
KINDS: tuple[Kind, ...] = ("llm", "mixed", "degraded")  # as reported, problems last
WHY = {"replaced": "with parts replaced", "deadline": "at a deadline"}  # what made an answer mixed


@dataclass(frozen=True, slots=True)
class Answer:
    """One answer's kind; ``problem``: what is wrong with it; ``why``: what made it mixed;
    ``reasons``: the LLM answers it rejected, by reason (as `_meta.rejected.reasons`)."""

    kind: Kind
    problem: str = ""
    why: tuple[str, ...] = ()
    reasons: dict[str, int] = field(default_factory=dict)


def text_of(result: CallToolResult) -> str:
    assert result.content, f"a result with no content: {result}"
    text: str = result.content[0].text  # type: ignore[union-attr]
    return text


def facts(result: CallToolResult) -> dict[str, Any]:
    meta = result.meta or {}
    value: dict[str, Any] = meta.get(META, {})
    return value


def answer_kind(tool: str, result: Any, budget: int, *, degraded: tuple[str, ...] = ()) -> Answer:
    """What ``result`` (a tool's answer, or the exception its call raised) is.  Without
    ``degraded``: the LLM's answer (`llm`, or `mixed` saying why) within ``budget`` tokens
    (fetch_url: its text after the header lines, summarized).  With it: the default failure
    policy's answer (ON_LLM_FAILURE=extractive), within the budget, saying so on its first line
    (fetch_url: on its Status line), its cause containing one of ``degraded``.  Anything else
    is a problem."""
    if isinstance(result, BaseException):
        wrong: str | None = f"no answer: {result!r}"
    elif result.is_error:
        wrong = f"error {text_of(result)[:300]!r}"
    else:
        wrong = _text_problem(tool, text_of(result), budget, degraded)
    answer = Answer("problem", wrong) if wrong else _by_meta(facts(result), degraded)
    return replace(answer, problem=f"{tool}: {answer.problem}") if answer.problem else answer


def _text_problem(tool: str, text: str, budget: int, degraded: tuple[str, ...]) -> str | None:
    if tool == "fetch_url":
        header, _, text = text.partition("\n\n")
        status = next((line for line in header.splitlines() if line.startswith("Status: ")), "")
        if not status.startswith("Status: summarized from"):
            return f"not summarized: {header!r}"
        if degraded and FETCH_OFFLINE not in status:
            return f"the Status line does not say the LLM failed: {status!r}"
    elif degraded:
        notice = text.split("\n", 1)[0]
        if not notice.startswith(OFFLINE_NOTICE):
            return f"no notice line: {notice[:200]!r}"
    if not 0 < tokens.count(text) <= budget:
        return f"{tokens.count(text)} tokens, budget {budget}"
    return None


def _by_meta(about: dict[str, Any], degraded: tuple[str, ...]) -> Answer:
    """The kind `_meta` says an answer within its budget is."""
    if degraded:
        cause = about.get("cause") or ""
        if not (about.get("degraded") is True and about.get("backend") == "extractive"):
            return Answer("problem", f"_meta does not say degraded/extractive: {about}")
        if not any(fragment in cause for fragment in degraded):
            return Answer("problem", f"cause {cause!r} names none of {degraded}")
        return Answer("degraded")
    rejected = about.get("rejected") or {}
    reasons = {str(k): int(v) for k, v in dict(rejected.get("reasons") or {}).items()}
    if about.get("degraded") is False and about.get("backend") == "llm":
        return Answer("llm", reasons=reasons)
    if about.get("degraded") is False and about.get("backend") == "mixed":
        replaced = int(rejected.get("parts_replaced") or 0) > 0
        why = tuple(w for w, yes in (("replaced", replaced), ("deadline", bool(about.get("partial")))) if yes)
        if not why:
            return Answer(
                "problem", f"mixed, but neither a deadline (partial) nor a part replaced says why: {about}"
            )
        return Answer("mixed", why=why, reasons=reasons)
    return Answer("problem", f"not an LLM answer: {about}")


def answer_problem(tool: str, result: Any, budget: int, *, degraded: tuple[str, ...] = ()) -> str | None:
    """What is wrong with a tool's answer (`answer_kind`), or None."""
    return answer_kind(tool, result, budget, degraded=degraded).problem or None


@dataclass
class Tally:
    """The kinds of a run's answers, for its report line: `add` each, then `said`."""

    kinds: Counter[str] = field(default_factory=Counter)
    mixed_why: Counter[str] = field(default_factory=Counter)
    mixed_reasons: Counter[str] = field(default_factory=Counter)

    def add(self, tool: str, result: Any, budget: int, *, degraded: tuple[str, ...] = ()) -> str | None:
        """Count ``result``'s kind; what is wrong with it, or None (as `answer_problem`)."""
        answer = answer_kind(tool, result, budget, degraded=degraded)
        self.count(answer)
        return answer.problem or None

    def count(self, answer: Answer) -> None:
        self.kinds[answer.kind] += 1
        if answer.kind == "mixed":
            self.mixed_why.update(answer.why)
            self.mixed_reasons.update(answer.reasons)

    def said(self) -> str:
        """E.g. "48 llm, 2 mixed (2 with parts replaced, 1 at a deadline; rejected answers:
        loop 4), 0 problems": every kind seen, and the problems."""
        out = [
            f"{self.kinds[k]} {k}" + (f" ({self._mixed()})" if k == "mixed" else "")
            for k in KINDS
            if self.kinds[k]
        ]
        return ", ".join([*out, f"{self.kinds['problem']} problems"])

    def _mixed(self) -> str:
        why = ", ".join(f"{self.mixed_why[w]} {said}" for w, said in WHY.items() if self.mixed_why[w])
        rejected = ", ".join(f"{reason} {n}" for reason, n in sorted(self.mixed_reasons.items()))
        return f"{why}; rejected answers: {rejected}" if rejected else why

    def as_data(self) -> dict[str, Any]:
        """The figures for the report's JSON."""
        return {
            "kinds": dict(self.kinds),
            "mixed_why": dict(self.mixed_why),
            "mixed_rejected": dict(self.mixed_reasons),
        }
