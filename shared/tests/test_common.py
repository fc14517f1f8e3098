"""shared.settings, shared.logs and shared.tokens: what both services rely on."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pytest
from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings

from shared import logs, settings, tokens


class Example(BaseSettings):
    port: int = Field(8000, ge=1, le=65535)
    api_key: SecretStr = SecretStr("")


class Bad(ValueError):
    pass


def test_load_names_every_bad_variable_and_never_echoes_a_secret() -> None:
    with pytest.raises(Bad) as info:
        settings.load(Example, {"PORT": "70000", "API_KEY": ["not", "a", "string"]}, Bad)  # type: ignore[dict-item]
    message = str(info.value)
    assert "PORT:" in message and "(got '70000')" in message
    assert "API_KEY:" in message and "not" not in message.split("API_KEY:")[1]


def test_load_from_a_mapping_ignores_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PORT", "9000")
    assert settings.load(Example, {}, Bad).port == 8000
    assert settings.load(Example, None, Bad).port == 9000
    assert settings.load(Example, {"port": "81", "UNRELATED": "x"}, Bad).port == 81
    assert settings.load(Example, {}, Bad) == settings.load(Example, {}, Bad)


def test_json_logs_carry_the_service_id_and_extras() -> None:
    stream = io.StringIO()
    logs.setup_json_logging("svc", "INFO", stream, libraries=("somelib",), quiet=("somelib.http",))
    logging.getLogger("somelib.core").info("started", extra={"port": 1, "pair": {(1, 2): "x"}})
    logging.getLogger("somelib.http").info("request")  # held at WARNING
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert len(lines) == 1
    assert lines[0]["service_id"] == "svc" and lines[0]["event"] == "started" and lines[0]["port"] == 1
    assert lines[0]["pair"] == {"(1, 2)": "x"}


def test_cl100k_ids_and_a_tampered_vocabulary(tmp_path: Path) -> None:
    assert tokens.cl100k().encode_ordinary("hello world") == [15339, 1917]
    real = tokens.vocabulary_path().read_bytes()
    lines = real.splitlines()
    lines[0], lines[1] = lines[1], lines[0]  # reordered: same tokens, a different file
    bad = tmp_path / "cl100k_base.tiktoken"
    bad.write_bytes(b"\n".join(lines))
    with pytest.raises(tokens.VocabularyError, match="sha256"):
        tokens.read_ranks(bad)
    with pytest.raises(tokens.VocabularyError, match="cannot read"):
        tokens.read_ranks(tmp_path / "missing")
