"""Shared fixtures: the local test LLM and a redis-server (the server launcher is in
support/servers.py)."""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from typing import Any

import coverage
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


# A property test runs its body hundreds of times, and under the coverage tracer (scripts/test.sh)
# Python runs 3-5x slower: the suite's property tests spent ~100 s of CPU in it, for lines their
# first examples already reach.  So the tracer follows a property test's first
# `TRACED_EXAMPLES` examples and is paused for the rest; every example still runs and is checked.
TRACED_EXAMPLES = 25


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    handle = getattr(getattr(item, "obj", None), "hypothesis", None)
    measuring = coverage.Coverage.current()
    if handle is None or measuring is None or item.get_closest_marker("no_cover"):
        return (yield)
    inner: Callable[..., Any] = handle.inner_test
    examples, paused = 0, False

    def traced_first(*args: Any, **kwargs: Any) -> Any:
        nonlocal examples, paused
        examples += 1
        if examples > TRACED_EXAMPLES and not paused:
            measuring.stop()
            paused = True
        return inner(*args, **kwargs)

    handle.inner_test = traced_first
    try:
        return (yield)
    finally:
        handle.inner_test = inner
        if paused:
            measuring.start()


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


# -- unit, integration and serial tests ------------------------------------------------------------
#
# A test is an *integration* test when it starts a real part: the service or another process,
# the test LLM, redis-server, a local web site or an MCP client over a socket.  That is read
# from what its module holds (the launchers below, imported) and the fixtures it asks for, so
# a new test is sorted without anyone remembering a marker.  The rest are *unit* tests:
# `pytest -m "not integration"` runs them alone in about a minute.
#
# *serial* tests measure the service under load (storms, kills, SIGTERM with requests in
# flight, fifty clients at once): other tests running beside them on the same two cores would
# be part of what they measure.  scripts/test.sh runs them after the others, one at a time.
# *clocked* tests hold the service to a clock (an answer by the client's deadline, progress
# every few seconds) while it mostly waits on a slow test LLM.  They barely load the cores, so
# test.sh runs them three at a time, beside the checks and the two smaller suites (beside this
# suite, its own tight timing tests failed more often).

_LAUNCHER_MODULES = (
    "tests.support.servers",
    "tests.support.fake_llm",
    "tests.support.redis_server",
    "tests.support.local_site",
    "tests.support.raw_http",
    "tests.reliability",
    "shared.testing",
    "subprocess",
    "uvicorn",
    "mcp.client",
)
_LAUNCHER_FIXTURES = {"llm", "fresh_llm", "redis"}
_SERIAL_MODULES = {
    "tests.reliability.test_reliability_faults",
    "tests.reliability.test_reliability_load",
    "tests.reliability.test_reliability_shutdown",
    "tests.server.test_redis_load",
}
_CLOCKED_MODULES = {"tests.deadline.test_deadline_http"}


def _starts_real_parts(module: object) -> bool:
    for value in vars(module).values():
        origin = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", "")
        if isinstance(origin, str) and origin.startswith(_LAUNCHER_MODULES):
            return True
    return False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    real: dict[str, bool] = {}
    for item in items:
        module = getattr(item, "module", None)
        if module is None:
            continue
        name = module.__name__
        if name not in real:
            real[name] = _starts_real_parts(module)
        fixtures = set(getattr(item, "fixturenames", ()))
        if real[name] or fixtures & _LAUNCHER_FIXTURES:
            item.add_marker(pytest.mark.integration)
        if name in _SERIAL_MODULES:
            item.add_marker(pytest.mark.serial)
        if name in _CLOCKED_MODULES:
            item.add_marker(pytest.mark.clocked)
