"""The summarizer's token helpers: numpy arrays and byte offsets; the service counts with no
network, no cache and no writable directory."""

from __future__ import annotations

import itertools
import json
import os
import random
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_summarizer.summarize import chunker, extractive
from mcp_summarizer.text import tokens
from mcp_summarizer.text.offsets import TokenOffsets, is_safe_boundary
from shared import tokens as shared_tokens

# Ids, counting, special tokens and the vocabulary check are shared.tokens' own tests
# (shared/tests/test_tokens.py); here: the numpy helpers, and the service sealed off.


def test_pattern_and_special_tokens_match_tiktokens_published_cl100k(monkeypatch: pytest.MonkeyPatch) -> None:
    """Take cl100k's definition from tiktoken itself, with its download replaced by our ranks."""
    from tiktoken_ext import openai_public

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: shared_tokens.ranks())
    published = openai_public.cl100k_base()
    assert published["pat_str"] == shared_tokens.CL100K_PATTERN
    assert published["special_tokens"] == shared_tokens.CL100K_SPECIAL


@pytest.mark.parametrize("special", list(shared_tokens.CL100K_SPECIAL))
def test_special_token_text_is_an_array_of_text_tokens(special: str) -> None:
    text = f"A crawled page that mentions {special} in its body."
    array = tokens.encode_array(text)  # no "disallowed special token" error
    assert array.dtype == np.uint32
    assert array.tolist() == tokens.encode(text)
    assert shared_tokens.CL100K_SPECIAL[special] not in array.tolist()


def test_encode_array_matches_encode_and_decodes() -> None:
    text = "Stormwind 日本語 😀 naïve café\n\n  indented"
    array = tokens.encode_array(text)
    assert array.tolist() == tokens.encode(text)
    assert tokens.encoding().decode(array.tolist()) == text


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=300)
EMOJI_TEXT = st.lists(
    st.sampled_from(
        ["😀", "👩‍👩‍👧", "🇫🇷", "日本語", "é", " ", "\n", "<|endoftext|>", "word", "\u00a0", "\t"]
    ),
    max_size=50,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(st.one_of(TEXT, EMOJI_TEXT))
def test_decode_encode_round_trip(text: str) -> None:
    ids = tokens.encode(text)
    assert tokens.encoding().decode(ids) == text
    assert tokens.count(text) == len(ids)
    assert tokens.encode_array(text).tolist() == ids


# -- token byte lengths ----------------------------------------------------------------------


def test_token_byte_lengths_match_the_vocabulary() -> None:
    lengths = tokens.token_byte_lengths()
    enc = tokens.encoding()
    assert lengths.shape == (enc.n_vocab,)
    sample = [*random.Random(1234).sample(range(100_256), 2000), 0, 1, 100_255]
    for token in sample:
        assert lengths[token] == len(enc.decode_single_token_bytes(token)), token
    for special, token in shared_tokens.CL100K_SPECIAL.items():
        assert lengths[token] == len(special.encode())
        assert lengths[token] == len(enc.decode_single_token_bytes(token))


@pytest.mark.parametrize("text", ["hello world", "naïve 日本語 😀👩‍👩‍👧 " * 20, "<|endoftext|>\n\n x"])
def test_token_byte_lengths_give_utf8_offsets(text: str) -> None:
    ids = tokens.encode_array(text)
    offsets = np.cumsum(tokens.token_byte_lengths()[ids])
    assert offsets[-1] == len(text.encode())


# -- no network, no cache --------------------------------------------------------------------

# Audit hooks see every socket use and every file opened for writing, even as root (for whom
# a read-only directory is no obstacle), so the child proves what it did not do.
HOOK = r"""
import json, os, sys

def hook(event, args):
    if event.startswith("socket.") and event not in ("socket.__new__",):
        raise RuntimeError(f"network use: {event} {args!r}")
    if event in ("urllib.Request", "http.client.connect"):
        raise RuntimeError(f"network use: {event} {args!r}")
    if event in ("os.mkdir", "os.rename", "os.replace", "shutil.copyfile", "shutil.move"):
        raise RuntimeError(f"filesystem write: {event} {args!r}")
    if event == "open":
        path, mode, flags = args
        writes = (mode is not None and any(c in str(mode) for c in "wax+")) or (
            isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
        )
        if writes:
            raise RuntimeError(f"filesystem write: {path!r} mode={mode!r} flags={flags!r}")

sys.addaudithook(hook)
"""

CHILD = (
    HOOK
    + r"""
from mcp_summarizer.text import tokens

result = {
    "ids": tokens.encode("hello world"),
    "special": tokens.count("<|endoftext|>"),
    "round_trip": tokens.encoding().decode(tokens.encode("naïve 日本語 😀")) == "naïve 日本語 😀",
    "lengths": int(tokens.token_byte_lengths()[15339]),
}
# The hook is live: a write into TMPDIR is caught.
try:
    open(os.path.join(os.environ["TMPDIR"], "probe"), "w")
    result["hook"] = "missed a write"
except RuntimeError:
    result["hook"] = "caught"
print(json.dumps(result))
"""
)

# Control: tiktoken's own loader, which downloads cl100k_base, is stopped by the same hook.
CONTROL = HOOK + 'import tiktoken\ntiktoken.get_encoding("cl100k_base")\n'


def run_sealed(code: str, readonly: Path) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(readonly),
        "TMPDIR": str(readonly),
        "TIKTOKEN_CACHE_DIR": "",
        "DATA_GYM_CACHE_DIR": "",
        "PYTHONDONTWRITEBYTECODE": "1",
        "HTTP_PROXY": "http://127.0.0.1:9",  # were anything to try the network, it would fail
        "HTTPS_PROXY": "http://127.0.0.1:9",
    }
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.fixture
def readonly(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "readonly"
    path.mkdir()
    path.chmod(stat.S_IRUSR | stat.S_IXUSR)
    yield path
    path.chmod(stat.S_IRWXU)


def test_works_without_network_cache_or_writable_dirs(readonly: Path) -> None:
    proc = run_sealed(CHILD, readonly)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == {"ids": [15339, 1917], "special": 7, "round_trip": True, "lengths": 5, "hook": "caught"}
    assert list(readonly.iterdir()) == []


def test_the_sealed_child_does_stop_a_download(readonly: Path) -> None:
    proc = run_sealed(CONTROL, readonly)
    assert proc.returncode != 0
    assert "network use" in proc.stderr or "filesystem write" in proc.stderr, proc.stderr[-2000:]


# -- any input: a million blanks, lone surrogates ---------------------------------------------------


def test_a_million_spaces_then_text_do_not_kill_the_process() -> None:
    """The colleague's report: tiktoken's Rust regex overflowed its stack and panicked."""
    code = (
        "from mcp_summarizer.summarize.extractive import summarize\n"
        "print(repr(summarize('Text.\\n\\n' + ' ' * 1_000_000 + 'x\\n', 5)))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "'Text.'"


LONG_BLANKS = [
    "Text.\n\n" + " " * 1_000_000 + "x\n",
    "Intro words" + "\t \u3000" * 400_000 + "end of it. " * 20,
    "# Title\n\n" + ("word " * 50 + " " * 300_000 + "\n") * 4,
]


@pytest.mark.parametrize("text", LONG_BLANKS, ids=["spaces", "mixed blanks", "paragraphs"])
@pytest.mark.parametrize("strategy", ["semantic", "token"])
def test_chunks_of_long_whitespace_runs_keep_every_invariant(text: str, strategy: str) -> None:
    size = 2000
    chunks = chunker.chunk(text, strategy=strategy, chunk_size=size, overlap=100)
    covered = 0
    for c in chunks:
        n = tokens.count(c.text)
        assert n == c.tokens and n <= size
        assert c.text[len(c.context) :] == text[c.start : c.end]
        assert c.start <= covered < c.end
        covered = c.end
        assert "\ufffd" not in c.text
    assert covered == len(text)
    offsets = TokenOffsets(text)
    assert offsets.n == tokens.count(text) == len(tokens.encode(text)) == len(tokens.encode_array(text))


def test_one_encoding_splits_exactly_at_safe_boundaries_around_a_long_run() -> None:
    text = "Alpha beta.\n" + " " * 300_000 + "gamma delta\nEpsilon zeta " + "\t" * 200_000 + "eta theta."
    offsets = TokenOffsets(text)
    safe = [p for p in range(len(text) + 1) if is_safe_boundary(text, p)]
    assert len(safe) == 7  # the ends, spaces before words, line starts
    for a, b in itertools.combinations(safe, 2):
        ia, ib = offsets.index(a), offsets.index(b)
        assert ia is not None and ib is not None
        assert tokens.count(text[a:b]) == ib - ia


def test_lone_surrogates_are_encoded_one_for_one() -> None:
    text = ("Hello \ud800 world. " * 2000) + "a\ud83d\ude00b"
    offsets = TokenOffsets(text)  # was UnicodeEncodeError
    assert offsets.n == tokens.count(text) == len(tokens.encode_array(text))
    clean = text.replace("\ud800", "\ufffd").replace("\ud83d", "\ufffd").replace("\ude00", "\ufffd")
    assert tokens.encode_array(text).tolist() == tokens.encode(clean)
    assert int(offsets.char[-1]) == len(text), "character offsets stay aligned"
    assert chunker.chunk(text, chunk_size=500)
    assert extractive.summarize(text, 50)
