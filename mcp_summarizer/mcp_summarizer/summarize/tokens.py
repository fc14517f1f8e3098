"""cl100k_base token counting that never touches the network (the vocabulary is read and
checked by `shared.tokens`), plus the numpy helpers the chunker's one-pass sizing needs.

All encoding is "ordinary": text such as `<|endoftext|>` inside a crawled page is counted
as text, never rejected as a special token.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import tiktoken

from shared.tokens import (
    CL100K_PATTERN,
    CL100K_SHA256,
    CL100K_SPECIAL,
    VocabularyError,
    build_encoding,
    read_ranks,
    vocabulary_path,
)

__all__ = [
    "CL100K_PATTERN",
    "CL100K_SHA256",
    "CL100K_SPECIAL",
    "VocabularyError",
    "count",
    "decode",
    "encode",
    "encode_array",
    "encoding",
    "token_byte_lengths",
    "vocabulary_path",
]


@cache
def _ranks() -> dict[bytes, int]:
    return read_ranks(vocabulary_path())  # looked up here at call time, so tests can repoint it


@cache
def encoding() -> tiktoken.Encoding:
    return build_encoding(_ranks())


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
