"""JSON cut to a budget: valid, within it, and keeping what a reader of JSON looks for."""

from __future__ import annotations

import json

import pytest

from mcp_summarizer.proxy.shrink import parse_json, shrink
from mcp_summarizer.text import tokens


def records(n: int) -> list[dict[str, object]]:
    return [
        {"id": f"rec-{i}", "name": f"Record {i}", "body": f"lorem ipsum {i} " * 40, "score": i * 1.5}
        for i in range(n)
    ]


def test_a_long_array_keeps_its_first_and_last_items_and_says_how_many_were_left_out() -> None:
    value = {"total": 500, "items": records(500)}
    shrunk = shrink(value, 2000)
    assert shrunk is not None and shrunk.tokens == tokens.count(shrunk.text) <= 2000
    out = json.loads(shrunk.text)  # valid JSON
    assert out["total"] == 500
    items = out["items"]
    assert items[0]["id"] == "rec-0" and items[-1]["id"] == "rec-499"
    markers = [x for x in items if isinstance(x, str)]
    assert len(markers) == 1 and "in all" in markers[0] and "500" in markers[0]
    kept = len(items) - 1
    assert f"({500 - kept} more items, 500 in all)" in markers[0]
    assert shrunk.items_omitted == 500 - kept


def test_the_gentlest_cut_that_fits_wins() -> None:
    value = records(30)
    loose = shrink(value, 100_000)
    assert loose is not None and json.loads(loose.text) == value  # fits already: nothing cut
    tight = shrink(value, 600)
    assert tight is not None and tight.tokens <= 600 and tight.items_omitted > 0


def test_keys_ids_and_error_messages_survive_a_harsh_cut() -> None:
    error = "connection refused by db-7 while running migration 0042: " + "detail " * 60
    value = {
        "status": "failed",
        "error": {"code": "E_MIGRATION", "message": error},
        "userId": "u-123",
        "log": [f"line {i} {'x' * 80}" for i in range(400)],
    }
    shrunk = shrink(value, 250)
    assert shrunk is not None and shrunk.tokens <= 250
    out = json.loads(shrunk.text)
    assert set(out) == set(value)
    assert out["status"] == "failed" and out["userId"] == "u-123"
    assert out["error"]["code"] == "E_MIGRATION"
    assert out["error"]["message"].startswith("connection refused by db-7 while running migration 0042")
    assert out["log"][0].startswith("line 0") and out["log"][-1].startswith("line 399")


def test_an_object_with_very_many_keys_keeps_the_first_ones_and_every_salient_one() -> None:
    value = {f"k{i:05d}": "v" * 30 for i in range(5000)}
    value["request_id"] = "req-9"
    shrunk = shrink(value, 500)
    assert shrunk is not None and shrunk.tokens <= 500
    out = json.loads(shrunk.text)
    assert out["k00000"] and out["request_id"] == "req-9"
    assert out["…"].endswith("5001 in all")


@pytest.mark.parametrize(
    "text",
    ["東京は日本の首都です。" * 2000, "a" * 200_000, "<|endoftext|> " * 3000],
    ids=["cjk", "one-char-run", "special-tokens"],
)
def test_hostile_strings_are_cut_within_the_budget(text: str) -> None:
    shrunk = shrink({"id": 1, "text": text, "rows": [text] * 50}, 300)
    assert shrunk is not None and tokens.count(shrunk.text) <= 300
    out = json.loads(shrunk.text)
    assert out["id"] == 1 and out["text"].startswith(text[:10])


def test_nesting_deeper_than_any_api_becomes_a_marker() -> None:
    value: object = "leaf"
    for _ in range(200):
        value = {"child": value}
    shrunk = shrink(value, 1000)
    assert shrunk is not None and "nested deeper than 64 levels" in shrunk.text
    assert json.loads(shrunk.text)


def test_no_cut_fits_a_budget_smaller_than_the_shape_itself() -> None:
    assert shrink({f"key_{i}_{'z' * 20}": i for i in range(16)}, 5) is None


@pytest.mark.parametrize(
    ("text", "is_json"),
    [
        ('{"a": 1}', True),
        ("  [1, 2]\n", True),
        ('"a bare string"', False),
        ("42", False),
        ("Echo: {}", False),
        ("{not json", False),
        ("[" * 100_000 + "]" * 100_000, False),  # deeper than the parser goes
        ("", False),
    ],
)
def test_only_objects_and_arrays_are_json_here(text: str, is_json: bool) -> None:
    assert (parse_json(text) is not None) is is_json
