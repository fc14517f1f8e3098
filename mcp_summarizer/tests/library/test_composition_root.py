"""The composition root (`assembly.root`), held by running the entry points: the command
line's serve (streamable HTTP and stdio), its proxy and its summarize, and the in-process API.
Each builds its engine, service or proxy through the root, and nothing sets an attribute of
the engine, the service or the parts they share from outside their own class (the wiring is
done by constructors, not filled in afterwards).  The serving itself is stopped before it
starts: the servers' tests run it."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

import pytest

from mcp_summarizer.cache.lookup import Answers
from mcp_summarizer.cli.commands import build_parser
from mcp_summarizer.config import load_settings
from mcp_summarizer.documents.pipeline import DocumentsPipeline
from mcp_summarizer.inprocess.ticket_api import SummarizationService
from mcp_summarizer.mcp.service import Service
from mcp_summarizer.proxy.app import Proxy
from mcp_summarizer.summarize.engine import Engine
from mcp_summarizer.web.pages import Pages

GUARDED = (Engine, Service, Proxy, Pages, DocumentsPipeline, Answers)


class Stopped(Exception):
    """Raised where the entry point would start serving or end the process."""


def _where(frame: FrameType | None) -> list[str]:
    """The functions on the stack, innermost first, as ``<package part>/<file>:<function>``."""
    found = []
    while frame is not None:
        path = Path(frame.f_code.co_filename)
        found.append(f"{path.parent.name}/{path.name}:{frame.f_code.co_name}")
        frame = frame.f_back
    return found


class Watch:
    """Where each guarded object was made, and a refusal of any assignment to one of its
    attributes by code that is not its own (a method of that very object)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.made: list[tuple[object, list[str]]] = []
        for cls in GUARDED:
            monkeypatch.setattr(cls, "__setattr__", _own_only)
            monkeypatch.setattr(cls, "__init__", self._recorded(cls.__init__))

    def _recorded(self, init: Callable[..., None]) -> Callable[..., None]:
        def made(obj: object, *args: Any, **kwargs: Any) -> None:
            if type(obj) in (Engine, Service, Proxy):
                self.made.append((obj, _where(sys._getframe(1))))
            init(obj, *args, **kwargs)

        return made

    def makers(self) -> list[tuple[str, str]]:
        """Each engine, service and proxy made, and the root's function that made it."""
        roots = ("root.py:build_service", "root.py:build_proxy", "engine_setup.py:build_engine")
        return [
            (type(obj).__name__, next((f for f in stack if f.endswith(roots)), stack[0]))
            for obj, stack in self.made
        ]

    def service(self) -> Service:
        (service,) = (obj for obj, _ in self.made if isinstance(obj, Service))
        return service


def _own_only(obj: object, name: str, value: object) -> None:
    caller = sys._getframe(1)
    if caller.f_locals.get("self") is not obj:
        raise AssertionError(
            f"{type(obj).__name__}.{name} set after construction by "
            f"{caller.f_code.co_qualname} ({Path(caller.f_code.co_filename).name}:{caller.f_lineno})"
        )
    object.__setattr__(obj, name, value)


@pytest.fixture
def watch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Watch]:
    """A clean environment (the embedded backend, a cache in ``tmp_path``, no tokens, no Redis,
    no .env), and the process left as it was: no logging set up, no exit."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SUMMARIZER_BACKEND", "extractive")
    monkeypatch.setenv("CACHE_DIR", str(tmp_path / "cache"))
    for name in ("REDIS_URL", "AUTH_TOKENS", "AUTH_TOKENS_FILE", "CACHE", "LLM_CONCURRENCY_SCOPE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("mcp_summarizer.process.logs.setup_logging", lambda *a, **k: None)
    monkeypatch.setattr("mcp_summarizer.process.ending.end_process", _stop)
    yield Watch(monkeypatch)


def _stop(*args: object) -> NoReturn:
    raise Stopped(*args)


def _run(argv: list[str]) -> None:
    args = build_parser().parse_args(argv)
    args.run(args)


def _shared_wiring(service: Service) -> None:
    """The parts share one engine, one metrics, one seam over the result cache."""
    assert service.answers is not None  # the result cache is on: CACHE_DIR is usable
    assert service.engine.observer is service.metrics
    assert service.engine.cache is service.answers
    assert service.answering.pages.shared is service.answers
    assert service.documents.engine is service.engine
    assert service.answers.counter is service.metrics
    # The tools' view of that cache, built once with the service (not per call).
    cache = service.answering.cache
    assert cache is not None and cache.answers is service.answers and cache.store is service.store
    assert service.answering.engine is service.engine and service.answering.jobs is service.jobs


@pytest.mark.parametrize("transport", ["streamable-http", "stdio"])
def test_serve_builds_its_service_through_the_root(
    watch: Watch, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    served: list[Service] = []

    def serve(app: object, service: Service) -> NoReturn:
        served.append(service)
        _stop()

    servers: list[object] = []
    monkeypatch.setattr("mcp_summarizer.mcp.http_runner.serve", serve)
    monkeypatch.setattr("mcp_summarizer.mcp.stdio.run_stdio", servers.append)
    with pytest.raises(Stopped):
        _run(["serve", "--transport", transport])
    service = watch.service()
    if transport == "stdio":
        assert len(servers) == 1 and not served  # ended after stdio, before HTTP
    else:
        assert served == [service]
    assert watch.makers() == [
        ("Engine", "assembly/engine_setup.py:build_engine"),
        ("Service", "assembly/root.py:build_service"),
    ]
    assert any(f == "assembly/root.py:build_service" for f in watch.made[0][1])  # the service's engine
    _shared_wiring(service)
    asyncio.run(service.aclose())


def test_the_proxy_is_built_through_the_root(
    watch: Watch, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"one": {"command": sys.executable, "args": ["-c", ""]}}}))
    built: list[Proxy] = []

    async def run_proxy(proxy: Proxy, transport: str) -> None:
        built.append(proxy)
        await proxy.__aexit__(None, None, None)  # never entered: its upstream never started

    monkeypatch.setattr("mcp_summarizer.proxy.app.run_proxy", run_proxy)
    with pytest.raises(Stopped):
        _run(["proxy", "--config", str(config)])
    (proxy,) = built
    assert watch.makers() == [
        ("Engine", "assembly/engine_setup.py:build_engine"),
        ("Proxy", "assembly/root.py:build_proxy"),
    ]
    assert proxy.engine.cache is not None and proxy.engine.cache.cache is proxy.cache
    assert proxy.engine.observer is None  # the proxy serves no metrics


def test_the_one_shot_callers_take_the_roots_engine(
    watch: Watch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The command line's summarize and the in-process API: an engine alone, no store, no cache."""
    text = tmp_path / "notes.txt"
    text.write_text("A line about the harbour and its ships. " * 400)
    _run(["summarize", str(text), "--max-output-tokens", "100"])
    assert "harbour" in capsys.readouterr().out
    service = SummarizationService(settings=load_settings({"SUMMARIZER_BACKEND": "extractive"}))
    assert service.engine.cache is None and service.engine.observer is None
    assert watch.makers() == [("Engine", "assembly/engine_setup.py:build_engine")] * 2


def test_the_watch_refuses_an_assignment_from_outside(watch: Watch) -> None:
    """The check itself: the engine may set its own attributes, nobody else may."""
    service = SummarizationService(settings=load_settings({"SUMMARIZER_BACKEND": "extractive"}))
    with pytest.raises(AssertionError, match=r"Engine\.observer set after construction by test_the_watch"):
        service.engine.observer = None
