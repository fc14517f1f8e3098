"""Shared fixtures: the local test LLM (the server launcher is in support/servers.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.fake_llm import FakeLLM


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


@pytest.fixture
def fresh_llm(llm: FakeLLM) -> FakeLLM:
    """The module's test LLM with its records, script and latency cleared."""
    llm.reset()
    llm.responder = None
    llm.latency = 0.0
    return llm
