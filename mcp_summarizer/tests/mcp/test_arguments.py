"""The argument checks of the main server and the proxy: one message for an unknown argument,
and validation errors without pydantic's documentation links."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from mcp_summarizer.errors import InputError
from mcp_summarizer.mcp.arguments import check_arguments, unknown_arguments, without_pydantic_links

SCHEMA = {"properties": {"source_id": {}, "max_tokens": {}, "offset": {}}, "required": ["source_id"]}


def test_an_unknown_argument_is_named_with_the_nearest_known_one() -> None:
    message = unknown_arguments("expand", {"source_id": "x", "max_token": 5}, list(SCHEMA["properties"]))
    assert message == (
        "unknown argument 'max_token' (did you mean 'max_tokens'?); "
        "expand takes: source_id, max_tokens, offset"
    )
    assert unknown_arguments("expand", {"source_id": "x"}, ["source_id"]) is None


def test_the_proxy_check_raises_the_same_message_and_names_what_is_missing() -> None:
    given = {"source_id": "x", "max_token": 5, "zzz": 1}
    with pytest.raises(InputError) as unknown:
        check_arguments("expand", given, SCHEMA)
    assert str(unknown.value) == unknown_arguments("expand", given, list(SCHEMA["properties"]))
    assert str(unknown.value).startswith("unknown arguments 'max_token' (did you mean 'max_tokens'?), 'zzz';")
    with pytest.raises(InputError) as missing:
        check_arguments("expand", {"offset": 1}, SCHEMA)
    assert str(missing.value) == "expand needs source_id"


def test_a_long_unknown_name_is_clipped_saying_how_much() -> None:
    message = unknown_arguments("expand", {"x" * 200: 1}, ["source_id"])
    assert message is not None and "…(+120 chars)" in message and "x" * 81 not in message


def test_pydantic_links_are_taken_out_of_a_validation_error() -> None:
    class Arguments(BaseModel):
        max_tokens: int
        strategy: bool

    with pytest.raises(ValidationError) as caught:
        Arguments.model_validate({"max_tokens": "many", "strategy": "fancy"})
    text = f"Error executing tool summarize: {caught.value}"
    assert "errors.pydantic.dev" in text  # what the SDK sends on its own
    cleaned = without_pydantic_links(text)
    assert "errors.pydantic.dev" not in cleaned and "For further information" not in cleaned
    assert "max_tokens\n  Input should be a valid integer" in cleaned
    assert "strategy\n  Input should be a valid boolean" in cleaned
    assert cleaned.endswith("[type=bool_parsing, input_value='fancy', input_type=str]")
