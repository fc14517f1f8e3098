"""Chunker invariants, property-tested over generated markdown, CJK/emoji text and
pathological shapes: the invariants listed in the chunker's docstring."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import shared.tokens
from mcp_summarizer.summarize import chunker as chunker_module
from mcp_summarizer.summarize.chunker import (
    FILL_FLOOR,
    MIN_CHUNK_SIZE,
    Chunk,
    chunk,
)
from mcp_summarizer.text import tokens
from mcp_summarizer.text.blocks import BlockScan
from mcp_summarizer.text.offsets import GrowingOffsets, TokenOffsets, is_safe_boundary
from tests.support.markdown_text import ANY_TEXT, CJK_RUN, markdown


def body(c: Chunk) -> str:
    """The source text of a chunk: its text without the header context."""
    return c.text[len(c.context) :]


HEADER_LINE = re.compile(r"^#{1,6} Heading \d+ ")

# -- generators ------------------------------------------------------------------------------


SIZES = st.sampled_from([MIN_CHUNK_SIZE, 17, 24, 40, 64, 128, 400])
OVERLAPS = st.sampled_from([0, 1, 4, 10, 50])


# -- the invariants ----------------------------------------------------------------------------


def check_invariants(text: str, chunks: list[Chunk], size: int) -> None:
    if not text.strip():
        assert chunks == []
        return
    assert chunks, "non-blank input gives at least one chunk"
    covered = 0
    for c in chunks:
        # size, counted again from scratch, header context included
        n = tokens.count(c.text)
        assert n == c.tokens, f"reported {c.tokens} tokens, counted {n}"
        assert n <= size, f"chunk of {n} tokens over the limit {size}"
        # lossless and in order: each body is the source slice it claims to be
        assert body(c) == text[c.start : c.end]
        assert c.start <= covered, f"gap: characters {covered}..{c.start} are in no chunk"
        assert c.end > c.start
        covered = max(covered, c.end)
        assert "\ufffd" not in c.text or "\ufffd" in text, "a character was broken"
        # no header line twice in one chunk (generated headers are numbered, so unique)
        headers = [line for line in c.text.split("\n") if HEADER_LINE.match(line)]
        assert len(headers) == len(set(headers)), f"duplicated header in chunk: {headers}"
        for line in c.context.splitlines():
            assert line in text[: c.start], "context headers come from above the chunk"
    assert covered == len(text)
    starts = [c.start for c in chunks]
    assert starts == sorted(starts)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(markdown(), SIZES, OVERLAPS)
def test_semantic_invariants(text: str, size: int, overlap: int) -> None:
    check_invariants(text, chunk(text, strategy="semantic", chunk_size=size, overlap=overlap), size)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(markdown(), ANY_TEXT, CJK_RUN), SIZES, OVERLAPS)
def test_token_invariants(text: str, size: int, overlap: int) -> None:
    chunks = chunk(text, strategy="token", chunk_size=size, overlap=overlap)
    check_invariants(text, chunks, size)
    assert all(c.context == "" for c in chunks)


@settings(max_examples=200, deadline=None)
@given(st.one_of(ANY_TEXT, CJK_RUN), SIZES)
def test_semantic_invariants_on_arbitrary_unicode(text: str, size: int) -> None:
    check_invariants(text, chunk(text, chunk_size=size), size)


# Where letters meet digits: base64 and hex, other scripts' letters and decimal digits
# (Arabic-Indic, fullwidth), digits that are not decimal (superscripts, fractions), contractions.
BLOBS = st.text(alphabet="abcXYZ0189+/=_-'sé日ß٣١２１²½ⅷ\n ", min_size=1, max_size=80)


@settings(max_examples=500, deadline=None)
@given(st.one_of(markdown(), ANY_TEXT, BLOBS), st.data())
def test_safe_boundaries_split_the_token_count_exactly(text: str, data: st.DataObject) -> None:
    """The claim the chunker's one-pass sizing rests on: at safe boundaries, the text on
    each side encodes exactly as it does within the whole."""
    off = TokenOffsets(text)
    safe = [p for p in range(len(text) + 1) if is_safe_boundary(text, p)]
    a, b = sorted(data.draw(st.lists(st.sampled_from(safe), min_size=2, max_size=2)))
    ia, ib = off.index(a), off.index(b)
    assert ia is not None and ib is not None, "a safe boundary is always a token boundary"
    assert tokens.count(text[a:b]) == ib - ia
    if a > 0:  # header context is only ever prepended at a cut, never at the very start
        assert tokens.count("# Ctx\n\n" + text[a:b]) == tokens.count("# Ctx\n\n") + ib - ia


# -- structure ---------------------------------------------------------------------------------


def test_empty_and_whitespace_give_no_chunks() -> None:
    for text in ["", " ", "\n\n\t \r\n"]:
        assert chunk(text, chunk_size=100) == []
        assert chunk(text, strategy="token", chunk_size=100) == []


def test_small_text_is_one_chunk_unchanged() -> None:
    text = "# Title\n\nJust a paragraph."
    [only] = chunk(text, chunk_size=100)
    assert only.text == text and only.context == ""


def test_header_path_is_prepended_and_sections_stay_together() -> None:
    section = "\n\n".join(f"Sentence number {i} about the zone." for i in range(6))
    text = f"# Zone\n\nIntro.\n\n## NPCs\n\n{section}\n\n## Quests\n\n{section}\n\n### Chains\n\n{section}\n"
    chunks = chunk(text, chunk_size=70)  # "## Quests" starts at token 56, in the last quarter
    check_invariants(text, chunks, 70)
    quests = [c for c in chunks if "## Quests" in c.text]
    assert quests and body(quests[0]).startswith("## Quests"), "a full chunk ends at the section boundary"
    chains = next(c for c in chunks if body(c).startswith("### Chains"))
    assert chains.context == "# Zone\n## Quests\n\n"
    # At 80 tokens, ending at "## Quests" would leave the chunk 70% full (under FILL_FLOOR):
    # it fills on to a paragraph break instead, and the next chunk gets the header path.
    wide = chunk(text, chunk_size=80)
    check_invariants(text, wide, 80)
    assert "## Quests" in body(wide[0]) and wide[0].tokens > 80 * FILL_FLOOR[0] // FILL_FLOOR[1]
    assert wide[1].context == "# Zone\n## Quests\n\n"


def test_code_fence_is_never_split_when_it_fits() -> None:
    code = "```python\n" + "\n\n".join(f"# step {i}\nvalue_{i} = compute({i})" for i in range(12)) + "\n```"
    text = "# Doc\n\n" + "Prose line here.\n\n" * 20 + code + "\n\nAfter the code.\n"
    size = tokens.count(code) + 20
    chunks = chunk(text, chunk_size=size)
    check_invariants(text, chunks, size)
    assert any(code in body(c) for c in chunks), "the fenced block is whole in one chunk"
    assert not any(c.context.startswith("# step") for c in chunks), "'# step' inside code is not a header"


def test_oversized_code_fence_is_split_at_lines() -> None:
    code = "```\n" + "\n".join(f"line_{i} = {i}" for i in range(400)) + "\n```\n"
    chunks = chunk(code, chunk_size=100)
    check_invariants(code, chunks, 100)
    assert len(chunks) > 5
    assert all(body(c).endswith("\n") for c in chunks[:-1]), "cuts fall at line starts"


def test_token_windows_overlap_and_cut_at_words() -> None:
    text = " ".join(f"word{i}" for i in range(3000))
    chunks = chunk(text, strategy="token", chunk_size=200, overlap=40)
    check_invariants(text, chunks, 200)
    for prev, nxt in itertools.pairwise(chunks):
        shared = prev.end - nxt.start
        assert shared > 0, "neighbouring windows overlap"
        assert tokens.count(text[nxt.start : prev.end]) <= 40
        assert text[nxt.start] == " " and text[prev.end] == " ", "windows start and end at word breaks"


def test_bad_arguments_name_the_problem() -> None:
    with pytest.raises(ValueError, match="unknown chunking strategy 'fancy'"):
        chunk("x", strategy="fancy", chunk_size=100)
    with pytest.raises(ValueError, match="chunk_size must be at least"):
        chunk("x", chunk_size=2)
    with pytest.raises(ValueError, match="overlap must not be negative"):
        chunk("x", chunk_size=100, overlap=-1)


# -- pathological inputs -----------------------------------------------------------------------


def test_one_300k_token_line() -> None:
    text = " ".join(f"w{i % 997}x" for i in range(150_000))  # a single line, ~300k tokens
    assert tokens.count(text) > 290_000
    for strategy in ("semantic", "token"):
        chunks = chunk(text, strategy=strategy, chunk_size=8000, overlap=500)
        check_invariants(text, chunks, 8000)


def test_50k_tiny_paragraphs() -> None:
    text = "\n\n".join(f"p{i}" for i in range(50_000))
    chunks = chunk(text, chunk_size=8000)
    check_invariants(text, chunks, 8000)
    assert all(c.tokens > 4000 for c in chunks[:-1]), "tiny blocks are packed, not one chunk each"


def test_10k_headers() -> None:
    text = "\n".join(f"{'#' * (1 + i % 4)} Header {i}\nbody {i}" for i in range(10_000))
    chunks = chunk(text, chunk_size=500)
    check_invariants(text, chunks, 500)


def test_long_cjk_run_without_breaks() -> None:
    text = "日本語の文字列中文测试한국어😀" * 20_000
    for strategy in ("semantic", "token"):
        chunks = chunk(text, strategy=strategy, chunk_size=1000, overlap=100)
        check_invariants(text, chunks, 1000)


# -- streaming: chunks while the text is being encoded ------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(markdown(), ANY_TEXT, CJK_RUN),
    SIZES,
    OVERLAPS,
    st.sampled_from([8, 40, 300]),
    st.sampled_from([1, 16, 200, 1 << 16]),
    st.booleans(),
)
def test_growing_offsets_give_the_same_chunks(
    text: str, size: int, overlap: int, piece_chars: int, block_chars: int, semantic: bool
) -> None:
    """Encoded piece by piece and its blocks found a segment at a time (tiny pieces and
    segments here, so that chunks span many), the chunker makes exactly the chunks it makes
    from the whole encoding, and hands each out as it is made."""
    strategy = "semantic" if semantic else "token"
    whole = chunk(text, strategy=strategy, chunk_size=size, overlap=overlap)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(shared.tokens, "PIECE_CHARS", piece_chars)
        mp.setattr(chunker_module, "BLOCK_SEGMENT_CHARS", block_chars)
        offsets = GrowingOffsets(text)
        seen: list[Chunk] = []
        streamed = chunk(
            text, strategy=strategy, chunk_size=size, overlap=overlap, offsets=offsets, on_chunk=seen.append
        )
    assert streamed == whole
    assert seen == whole
    if text.strip():
        assert offsets.complete and offsets.n == tokens.count(text)


@pytest.mark.parametrize("strategy", ["semantic", "token"])
def test_chunks_come_out_before_the_text_is_encoded(strategy: str) -> None:
    """A long page: the first chunk is made when a small part of the text is encoded; the
    chunks are those of the whole encoding."""
    text = "\n\n".join(
        f"## Part {i}\n\n" + f"Sentence {i} about the river, with 3 facts. " * 40 for i in range(2000)
    )
    assert len(text) > 3_000_000
    covered: list[int] = []
    scanned: list[int] = [0]  # how far the block scan has read
    read_segment = BlockScan.next

    def next_segment(scan: BlockScan) -> Any:
        part = read_segment(scan)
        scanned.append(scan.pos)
        return part

    offsets = GrowingOffsets(text)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(BlockScan, "next", next_segment)
        streamed = chunk(
            text,
            strategy=strategy,
            chunk_size=8000,
            overlap=500,
            offsets=offsets,
            on_chunk=lambda c: covered.append(max(offsets.covered, scanned[-1])),
        )
    assert streamed == chunk(text, strategy=strategy, chunk_size=8000, overlap=500)
    # ... and before the blocks of the rest are looked for (the token strategy has none).
    assert covered[0] < len(text) / 20, f"first chunk only after {covered[0]} of {len(text)} characters"
    assert covered == sorted(covered) and covered[-1] == len(text)
    check_invariants(text, streamed, 8000)
