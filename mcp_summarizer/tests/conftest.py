"""Shared fixtures: the real server as a subprocess on 127.0.0.1, and the local test LLM."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parent))  # tests/ is not a package: make fake_llm importable

from fake_llm import FakeLLM


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class RunningServer:
    """`mcp-summarizer` started as a user would, with its JSON log lines collected."""

    proc: subprocess.Popen[str]
    port: int
    lines: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def events(self, name: str | None = None) -> list[dict]:
        out = []
        for line in list(self.lines):
            record = json.loads(line)  # every line must be JSON
            if name is None or record.get("event") == name:
                out.append(record)
        return out

    def wait_for_event(self, name: str, count: int = 1, timeout: float = 10.0) -> list[dict]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.events(name)
            if len(found) >= count:
                return found
            time.sleep(0.05)
        raise AssertionError(f"no {count} {name!r} event(s) within {timeout}s; log: {self.lines[-5:]}")


def start_server(env: dict[str, str], args: list[str] | None = None) -> RunningServer:
    port = free_port()
    full_env = {
        k: v for k, v in os.environ.items() if not k.startswith(("OPENROUTER_", "LLM_", "MCP_SUMMARIZER_"))
    }
    full_env.update({"MCP_SUMMARIZER_PORT": str(port), "PYTHONUNBUFFERED": "1", **env})
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_summarizer", *(args or [])],
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    server = RunningServer(proc, port)

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            server.lines.append(line.rstrip("\n"))

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {server.lines}")
        try:
            if httpx.get(f"{server.base}/health", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"server did not become healthy: {server.lines}")


def stop_server(server: RunningServer) -> None:
    server.proc.terminate()
    try:
        server.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        server.proc.wait()


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
