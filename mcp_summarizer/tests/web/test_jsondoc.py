"""Tests for mcp_summarizer.web.jsondoc: JSON pretty-printed, or kept as text, through convert()."""

from __future__ import annotations

import json

import pytest

from mcp_summarizer.web.convert import ConvertedPage, convert


def test_json_is_pretty_printed() -> None:
    value = {"name": "Zoë", "tags": ["a", "b"], "nested": {"n": 1.5, "ok": True, "none": None}}
    doc = convert(json.dumps(value, separators=(",", ":")).encode(), "application/json", None, "")
    assert doc.kind == "json" and doc.title == ""
    assert json.loads(doc.markdown) == value
    assert '\n  "tags": [\n    "a",' in doc.markdown and "Zoë" in doc.markdown


def test_json_suffix_types() -> None:
    doc = convert(b'{"@context": "https://schema.org"}', "application/ld+json", None, "")
    assert doc.kind == "json" and json.loads(doc.markdown) == {"@context": "https://schema.org"}


@pytest.mark.parametrize(
    "body",
    [b'{"a": 1, "b": [1, 2', b"not json at all", b'{"a": 1, "a": 2}', b"[" * 100_000 + b"]" * 100_000],
    ids=["truncated", "not-json", "duplicate-keys", "too-deep"],
)
def test_invalid_json_comes_back_as_text(body: bytes) -> None:
    doc = convert(body, "application/json", "utf-8", "")
    assert doc == ConvertedPage(markdown=body.decode(), title="", kind="text")
