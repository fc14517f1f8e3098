"""Shared fixtures: the local test LLM and a redis-server (the server launcher is in
support/servers.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import settings

from tests.support.fake_llm import FakeLLM
from tests.support.redis_server import REDIS, RedisServer

# Property tests judge answers, not speed: Hypothesis's 200 ms deadline per example failed on a
# loaded machine (582 ms for one example of the block scan).  Speed is the benchmarks' job.
# The test command is a promise (one red run costs a landing), so its examples are the same
# every run; `pytest --hypothesis-profile=explore` draws new ones to hunt for bugs.
settings.register_profile("no-deadline", deadline=None, derandomize=True, database=None)
settings.register_profile("explore", deadline=None, max_examples=1000)
settings.load_profile("no-deadline")


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


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer | None]:
    """A real redis-server on a free loopback port for the module, or None where the Debian
    package is missing (the tests that need it skip, naming it)."""
    if REDIS is None:
        yield None
        return
    server = RedisServer().start()
    yield server
    server.stop()
