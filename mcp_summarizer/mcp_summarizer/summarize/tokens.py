"""cl100k_base token counting that never touches the network (`shared.tokens` reads and checks
the vocabulary and holds the helpers every service uses), plus the numpy helpers the
chunker's one-pass sizing needs.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import numpy.typing as npt
import tiktoken

from shared.tokens import CL100K_SPECIAL, cl100k, count, encode, ranks, truncate

__all__ = ["count", "encode", "encode_array", "encoding", "token_byte_lengths", "truncate"]


def encoding() -> tiktoken.Encoding:
    return cl100k()


def encode_array(text: str) -> npt.NDArray[np.uint32]:
    """Token ids as a uint32 array (no Python list: cheaper for megabyte inputs)."""
    return cl100k().encode_to_numpy(text, disallowed_special=())


@cache
def token_byte_lengths() -> npt.NDArray[np.int64]:
    """UTF-8 byte length of every token id, so token offsets can be computed with numpy."""
    lengths = np.zeros(cl100k().n_vocab, dtype=np.int64)
    for token_bytes, rank in ranks().items():
        lengths[rank] = len(token_bytes)
    for special, rank in CL100K_SPECIAL.items():
        lengths[rank] = len(special.encode())
    return lengths
