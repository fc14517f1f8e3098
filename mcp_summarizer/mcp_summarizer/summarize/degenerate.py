"""Is a model's answer a summary at all?  Pure, no I/O.

Small models, and now and then hosted ones, answer with something that is not a summary: the
same sentence until max_tokens, a refusal, the system prompt read back, the chat template's own
tokens, nothing, or a fragment cut at max_tokens.  `check` says which (a `Verdict` with a
reason) or that the answer is fit to use.

What the call was given (``given``: the text it read and the caller's own words, such as the
focus) decides what an answer may repeat: a summary of a log that repeats a line may repeat
it, a summary of a page about chat templates may name ``<|im_start|>``, a summary of a prompt
may quote it.  ``given`` is read only when an answer already looks degenerate, so the usual
cost is one pass over the answer and the prompt.

The checks, in this order (the first that holds is the reason):

1. ``empty``: no letter or digit at all, or only a preamble ("Here is the summary:").
2. ``template_tokens``: a chat-template or control token that ``given`` does not hold
   (``<|im_start|>``, ``<|endoftext|>``, ``<|eot_id|>``, ``<start_of_turn>``, ``[INST]``,
   ``</s>``, ``<<SYS>>``, DeepSeek's ``<｜...｜>``, a C0 control character ...).
3. ``cut``: the answer never got past an opened ``<think>`` block, or it stopped at max_tokens
   (``finish_reason == "length"``) with fewer than `CUT_MIN_WORDS` words (and `CUT_MAX_CHARS`
   characters: a language without spaces) and no sentence or line end: nothing to use.  (A
   longer cut answer is made to end cleanly by the engine, as before.)  A closed ``<think>``
   block at the start is removed, not rejected.
4. ``refusal``: the finish reason ``content_filter``, or an answer of fewer than
   `REFUSAL_MAX_WORDS` words whose first two sentences refuse ("I'm sorry, but ...", "I can't
   help with ...", "As an AI language model ...") in words ``given`` does not hold ("I'm sorry
   to report that 14 deployments failed" is no refusal).
5. ``prompt_echo``: the instructions read back.  Each line of the answer is cut into word
   `ECHO_N`-grams (words: runs of letters and digits, casefolded); a line at least
   `ECHO_LINE_SHARE` of whose n-grams are the prompt's and not ``given``'s is an echoed line.
   When echoed lines hold `ECHO_SHARE` of the answer's words, the answer is an echo.  Fewer are
   removed from the answer that is used (`Verdict.text`): an excerpt list read back from the
   prompt would otherwise turn into citations of excerpts the model never read.  So is, before
   any check, a line that is only a tag the prompt names and ``given`` does not hold: the
   call's framing, ``</document>``, which SmolLM2 wrote at the end of a summary.
6. ``loop``: repetition.  The answer's word `LOOP_N`-grams are counted; each occurrence of one
   after its first, beyond the number of times ``given`` holds it, is a repeat.  An answer of
   at least `LOOP_MIN_WORDS` words whose repeats are `LOOP_SHARE` of its n-grams or more is a
   loop.  A text of ``w`` words said ``N`` times has at most ``w`` distinct n-grams among its
   ``N*w - LOOP_N + 1``, so it is a loop whenever ``(N*w - LOOP_N + 1) * (1 - LOOP_SHARE) >= w``
   (any text of 13 words or more said twice, of 6 or more said three times).  Lists
   and tables repeat their structure, not eight words running: rows such as
   "NPC: Aldric, faction: Stormwind" differ within any eight words, so they pass.  Text without
   word breaks (CJK without punctuation, a run of one character) has no n-grams to count: an
   answer of `ZLIB_MIN_CHARS` characters or more, with fewer than one word in
   `ZLIB_CHARS_PER_WORD` characters, that zlib shrinks below `ZLIB_RATIO` of its size, well
   below what it does to ``given``, is a loop too.  So is an answer that says one sentence of
   `LOOP_N` words or more `LOOP_SENTENCE_TIMES` times or more, that many more than ``given``
   holds it (beyond once), whatever its share: SmolLM2 wrote a few distinct sentences and then
   "It is a service that uses a library that is designed to be used by other services." over
   and over, and it reached the client (`tests/real_llm`); said three times after 70 words of
   other text, that is 23% of the n-grams, under `LOOP_SHARE`.

Every threshold errs towards passing an answer: a rejected answer costs a retry, and a
summary of a table rejected by mistake would lose the model's work for nothing.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "REASONS",
    "Reason",
    "Verdict",
    "check",
]

Reason = Literal["empty", "template_tokens", "cut", "refusal", "prompt_echo", "loop"]
REASONS: tuple[Reason, ...] = ("empty", "template_tokens", "cut", "refusal", "prompt_echo", "loop")

CUT_MIN_WORDS = 8
CUT_MAX_CHARS = 80
REFUSAL_MAX_WORDS = 80
ECHO_N = 5
ECHO_LINE_SHARE = 0.5
ECHO_SHARE = 0.3
LOOP_N = 8
LOOP_MIN_WORDS = 16
LOOP_SHARE = 0.3
LOOP_SENTENCE_TIMES = 3
ZLIB_MIN_CHARS = 256
ZLIB_CHARS_PER_WORD = 20
ZLIB_RATIO = 0.1

_WORD = re.compile(r"[^\W_]+")
# Each of these starts with one known character (a scan skips to it at C speed).
_TEMPLATE = (
    re.compile(
        r"<(?:\|[A-Za-z_][A-Za-z0-9_.-]{0,40}\|>"  # ChatML, Llama 3, Phi, gpt-oss: <|im_start|>, <|eot_id|>
        r"|\uff5c[^\uff5c\n]{1,40}\uff5c>"  # DeepSeek: <｜end▁of▁sentence｜>
        r"|/?(?:start_of_turn|end_of_turn|s|eos|bos|pad|unk)>"  # Gemma; SentencePiece's </s>
        r"|</?SYS>>)"  # Llama 2
    ),
    re.compile(r"\[(?:/?INST|/?TOOL_CALLS|AVAILABLE_TOOLS|/?TOOL_RESULTS)\]"),  # Llama 2, Mistral
    re.compile(r"^#{2,3} ?(?:Instruction|Response|Input):[ \t]*$", re.MULTILINE),  # Alpaca
    re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"),  # control characters
)
_TAG_LINE = re.compile(r"[ \t]*(</?[A-Za-z][\w-]*>)[ \t]*")  # a line that is one bare tag
_THINK_OPEN = re.compile(r"\A\s*<think(?:ing)?>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)
_PREAMBLE = re.compile(
    r"\A\W*(?:(?:sure|certainly|okay|ok|of course)\W+)?here(?:'s| is| are)\b[^\n]{0,120}:\W*\Z",
    re.IGNORECASE,
)
_SENTENCE_OR_LINE_END = re.compile(r"[.!?\u3002\uff01\uff1f\u2026][\"'\u201d\u2019)\]*_]*(?:\s|\Z)|\n\s*\S")
_SENTENCE_END = re.compile(r"[.!?\n]")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")
_FIRST_SENTENCES = re.compile(r"\A(?:[^.!?\n]*(?:[.!?\n]+|\Z)){1,2}")
_REFUSAL = re.compile(
    r"(?:^|[.!?\n]\s*)\W*(?:"
    r"(?:(?:i'?m|i am) (?:so |very |really )?(?:sorry|afraid)\b|sorry\b|(?:my )?apologies\b|i apologi[sz]e\b)"
    r"[^.!?\n]{0,40}?\b(?:but|can(?:no|')?t|cannot|unable|not able|won'?t|as an ai|i am not|i'm not)\b"
    r"|(?:unfortunately,? )?(?:i|we) (?:can(?:no|')?t|can not|won'?t|will not|am not able to|'m not able to"
    r"|am unable to|'m unable to|must decline|do not feel comfortable|don'?t feel comfortable)\b"
    r"[^.!?\n]{0,80}\b(?:help|assist|comply|provide|summari[sz]\w*|fulfil\w*|complete|process|access"
    r"|browse|view|read|open|answer|generate|create|continue|engage|support|perform|do (?:that|this))\b"
    r"|as an ai (?:language model|model|assistant|developed|created|trained)\b|as an ai,? i\b"
    r"|i'?m (?:just |only )?an ai\b|i am (?:just |only )?an ai\b"
    r")",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What `check` found: ``reason`` None for an answer fit to use, which is then ``text`` (the
    answer without a leading reasoning block or the lines it echoed, ``removed_lines`` of them)."""

    reason: Reason | None
    detail: str = ""  # what was found, one short line for a log (no words of the answer's)
    text: str = ""
    removed_lines: int = 0


def check(answer: str, *, prompt: str, given: str, finish_reason: str = "stop") -> Verdict:
    """Whether ``answer`` (to a call whose system prompt is ``prompt``, which read ``given``
    and stopped for ``finish_reason``) is fit to use, and if not, why (see the module)."""
    text = answer.strip()
    if finish_reason == "content_filter":
        return Verdict("refusal", "finish_reason content_filter")
    if _THINK_OPEN.match(text):
        close = _THINK_CLOSE.search(text)
        if close is None:
            return Verdict("cut", "an unfinished <think> block")
        text = text[close.end() :].strip()
    text, framing = _without_framing(text, prompt, given)
    if not _WORD.search(text):
        return Verdict("empty", "no letter or digit")
    if _PREAMBLE.match(text):
        return Verdict("empty", "a preamble only")
    if (token := _foreign_token(text, given)) is not None:
        return Verdict("template_tokens", f"{token!r}")
    words = _WORD.findall(text.casefold())
    if (
        finish_reason == "length"
        and len(words) < CUT_MIN_WORDS
        and len(text) < CUT_MAX_CHARS
        and not _SENTENCE_OR_LINE_END.search(text)
    ):
        return Verdict("cut", f"{len(words)} words, no sentence end, at max_tokens")
    if len(words) < REFUSAL_MAX_WORDS and _refusal(text, given):
        return Verdict("refusal", "a refusal in its first sentences")
    text, removed, share = _echo(text, prompt, given, words)
    if share >= ECHO_SHARE:
        return Verdict("prompt_echo", f"{share:.0%} of its words are the prompt's")
    if removed:
        words = _WORD.findall(text.casefold())
    if (loop := _loop(text, words, given)) is not None:
        return Verdict("loop", loop)
    return Verdict(None, text=text, removed_lines=removed + framing)


# -- the checks ---------------------------------------------------------------------------


def _foreign_token(text: str, given: str) -> str | None:
    """The first template or control token of ``text`` that ``given`` does not hold."""
    for pattern in _TEMPLATE:
        for m in pattern.finditer(text):
            if m.group(0) not in given:
                return m.group(0)
    return None


def _refusal(text: str, given: str) -> str:
    """The refusal in ``text``'s first two sentences, if one is there and is not ``given``'s."""
    first = _FIRST_SENTENCES.match(text.replace("\u2019", "'"))
    head = first.group(0) if first else ""
    found = _REFUSAL.search(head)
    if found is None:
        return ""
    end = _SENTENCE_END.search(head, found.end())
    sentence = head[found.start() : end.start() if end else len(head)].strip(" \n.!?")
    said = _phrase(_WORD.findall(sentence.casefold()))
    if said and f" {said} " in _phrase_text(given.replace("\u2019", "'")):
        return ""  # the source's own words (a chat log, a support thread)
    return sentence[:80]


def _without_framing(text: str, prompt: str, given: str) -> tuple[str, int]:
    """``text`` without its lines that are only a tag ``prompt`` names and ``given`` does not
    hold (the ``<document>`` tags the call's content came in), and how many."""
    if "<" not in text:
        return text, 0
    lines = text.split("\n")
    kept = [
        line
        for line in lines
        if not ((tag := _TAG_LINE.fullmatch(line)) and tag.group(1) in prompt and tag.group(1) not in given)
    ]
    if len(kept) == len(lines):
        return text, 0
    return "\n".join(kept).strip(), len(lines) - len(kept)


def _echo(text: str, prompt: str, given: str, words: list[str]) -> tuple[str, int, float]:
    """``text`` without the lines it echoed from ``prompt``, how many, and the share of its
    words they held."""
    prompt_grams = set(_grams(_WORD.findall(prompt.casefold()), ECHO_N))
    if prompt_grams.isdisjoint(_grams(words, ECHO_N)):
        return text, 0, 0.0  # the usual case: one pass, no line shares five words with the prompt
    lines = text.split("\n")
    per_line = [_grams(_WORD.findall(line.casefold()), ECHO_N) for line in lines]
    shared = [[g for g in grams if g in prompt_grams] for grams in per_line]
    if not any(shared):
        return text, 0, 0.0
    given_grams = _held({g for c in shared for g in c}, given)  # only now, and only these
    echoed: list[int] = []
    said = 0
    for i, (grams, common) in enumerate(zip(per_line, shared, strict=True)):
        own = [g for g in common if g not in given_grams]
        if grams and len(own) >= ECHO_LINE_SHARE * len(grams):
            echoed.append(i)
            said += len(grams) + ECHO_N - 1
    if not echoed:
        return text, 0, 0.0
    share = said / max(len(words), 1)
    gone = set(echoed)
    kept = "\n".join(line for i, line in enumerate(lines) if i not in gone).strip()
    return kept, len(echoed), share


def _loop(text: str, words: list[str], given: str) -> str | None:
    """Why ``text`` (whose words are ``words``) is a loop, or None."""
    if len(words) >= LOOP_MIN_WORDS:
        grams = _grams(words, LOOP_N)
        counts = Counter(grams)
        repeated = {g: n for g, n in counts.items() if n > 1}
        if repeated and sum(repeated.values()) - len(repeated) >= LOOP_SHARE * len(grams):
            starts = {g.partition(" ")[0] for g in repeated}
            held = Counter(
                g for g in _grams_from(_WORD.findall(given.casefold()), LOOP_N, starts) if g in repeated
            )
            surplus = sum(n - max(1, held[g]) for g, n in repeated.items() if n > held[g])
            if surplus >= LOOP_SHARE * len(grams):
                most = max(repeated.values())
                return f"{surplus / len(grams):.0%} of its {LOOP_N}-word runs repeat (one {most} times)"
    if len(words) >= LOOP_SENTENCE_TIMES * LOOP_N and (said := _said_over(text, given)) is not None:
        return said
    if len(text) >= ZLIB_MIN_CHARS and len(text) > ZLIB_CHARS_PER_WORD * len(words):  # few word breaks
        ratio = _zlib_ratio(text)
        if ratio < ZLIB_RATIO and (not given or _zlib_ratio(given[: 4 * len(text)]) > 2 * ratio):
            return f"zlib keeps {ratio:.1%} of it"
    return None


def _said_over(text: str, given: str) -> str | None:
    """Why ``text`` is a loop by one sentence said over and over, or None."""
    said = Counter(_phrase(_WORD.findall(s.casefold())) for s in _SENTENCE_BREAK.split(text))
    # Said twice as a sentence of its own; counted as words in a row, so that the first time,
    # run on from the words before it with no sentence end between, counts too.
    twice = [p for p, n in said.items() if n >= 2 and p.count(" ") >= LOOP_N - 1]
    if not twice:
        return None
    mine, held = _phrase_text(text), _phrase_text(given)
    for phrase in twice:
        said_as = re.compile(f"(?<= ){re.escape(phrase)}(?= )")  # the space between two is shared
        n = len(said_as.findall(mine))
        if n >= LOOP_SENTENCE_TIMES and n - max(1, len(said_as.findall(held))) >= LOOP_SENTENCE_TIMES - 1:
            return f"a sentence of {phrase.count(' ') + 1} words said {n} times"
    return None


# -- helpers -------------------------------------------------------------------------------


def _grams(words: list[str], n: int) -> list[str]:
    """The n-grams of ``words``, each its words joined by spaces: strings, which the cyclic
    garbage collector does not track (thousands of tuples a call would set it off, in a
    process whose heap is large)."""
    return [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]


def _held(grams: set[str], given: str) -> set[str]:
    """Those of ``grams`` that ``given`` holds, as words in a row: each looked for on its own
    (a regex that starts with a literal word: C speed), not ``given`` cut into n-grams."""
    text = given.casefold()
    return {
        g
        for g in grams
        if _in_words(re.compile(r"[\W_]+".join(map(re.escape, g.split(" "))) + "(?![^\\W_])"), text)
    }


def _in_words(pattern: re.Pattern[str], text: str) -> bool:
    """``pattern`` (starting with a literal word) found in ``text`` at a word's start."""
    at = 0
    while (m := pattern.search(text, at)) is not None:
        if m.start() == 0 or not _WORD.match(text, m.start() - 1):
            return True
        at = m.start() + 1
    return False


def _grams_from(words: list[str], n: int, firsts: set[str]) -> list[str]:
    """The n-grams of ``words`` that start with one of ``firsts``: what ``given``'s thousands
    of words are read for, without making an n-gram of each."""
    last = len(words) - n
    return [" ".join(words[i : i + n]) for i, w in enumerate(words) if w in firsts and i <= last]


def _phrase(words: Iterable[str]) -> str:
    return " ".join(words)


def _phrase_text(text: str) -> str:
    """``text`` as casefolded words between single spaces, with a space at each end, so that a
    phrase is found in it as ``f" {phrase} "``."""
    return f" {_phrase(_WORD.findall(text.casefold()))} "


def _zlib_ratio(text: str) -> float:
    data = text.encode("utf-8", "surrogatepass")
    return len(zlib.compress(data, 6)) / max(len(data), 1)
