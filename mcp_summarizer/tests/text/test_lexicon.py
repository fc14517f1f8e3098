"""Words and stems as `text.lexicon` reads them (its named things are tested with the
extractive summarizer, in tests/summarize/test_extractive.py)."""

from __future__ import annotations

from mcp_summarizer.text.lexicon import Stems, stemmed_words, words


def test_words_are_lowercase_runs_and_single_cjk_characters_in_order() -> None:
    text = "Hello, 東京 Wörld_x 42 the NPCs"
    assert words(text) == ["hello", "東", "京", "wörld_x", "42", "the", "npcs"]
    assert words("") == [] and words("... !!!") == []


def test_stemmed_words_are_the_words_with_a_stem() -> None:
    text = "The wolves of Stormwind hunt NPCs in 東京; a it is"
    stems = Stems()
    assert stemmed_words(text) == [(w, stems[w]) for w in words(text) if stems[w]]
    assert stems["wolves"] == "wolf" and stems["the"] == "", "a stopword has no stem"
