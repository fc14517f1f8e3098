"""shared.testing: the launchers both services' suites start `mcp-summarizer` with."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from shared.testing import fork_service, free_port, scrubbed_environ, start_service

# A stand-in service: answers /health, logs one JSON line per request, exits on SIGTERM.
STUB = r"""
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()
        print(json.dumps({"event": "request", "path": self.path}), flush=True)
    def log_message(self, *args):
        pass

print(json.dumps({"event": "starting"}), flush=True)
HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


def test_a_service_is_started_read_and_stopped() -> None:
    port = free_port()
    service = start_service([sys.executable, "-c", STUB, str(port)], scrubbed_environ(()), port)
    try:
        assert service.url == f"http://127.0.0.1:{port}/mcp"
        assert service.events("starting") == [{"event": "starting"}]
        assert service.wait_for_event("request")[0]["path"] == "/health"
        with pytest.raises(AssertionError, match="no 5 'request' event"):
            service.wait_for_event("request", count=5, timeout=0.2)
    finally:
        service.stop()
    assert service.proc.returncode is not None


def test_a_service_that_exits_is_reported_with_its_last_lines() -> None:
    port = free_port()
    code = "print('bad setting: PORT'); raise SystemExit(2)"
    with pytest.raises(RuntimeError, match=r"exited with 2: \['bad setting: PORT'\]"):
        start_service([sys.executable, "-c", code], {}, port)


def test_a_service_that_never_gets_healthy_is_killed() -> None:
    port = free_port()
    with pytest.raises(RuntimeError, match=r"did not become healthy within 0\.5s"):
        start_service([sys.executable, "-c", "import time; time.sleep(60)"], {}, port, timeout=0.5)


def test_scrubbed_environ_drops_the_developers_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-mine")
    monkeypatch.setenv("KEEP_ME", "1")
    env = scrubbed_environ(("OPENROUTER_",))
    assert "OPENROUTER_API_KEY" not in env and env["KEEP_ME"] == "1"


def test_a_forked_service_runs_with_exactly_its_environment_and_is_read_and_stopped() -> None:
    port = free_port()
    service = fork_service("forked_stub:main", [str(port)], {"STUB_SETTING": "1"}, port, preload=["json"])
    try:
        assert service.events("starting") == [
            {"event": "starting", "argv": [str(port)], "environ": ["PYTHONUNBUFFERED", "STUB_SETTING"]}
        ]
        assert service.events("on stderr") == [{"event": "on stderr"}]
        assert service.wait_for_event("request")[0]["path"] == "/health"
        assert service.proc.poll() is None
        with pytest.raises(subprocess.TimeoutExpired):
            service.proc.wait(timeout=0.1)
    finally:
        service.stop()
    assert service.proc.returncode == -signal.SIGTERM
    service.proc.send_signal(signal.SIGKILL)  # ended: nothing is sent, nothing raised


def test_a_forked_service_that_exits_is_reported_with_its_last_lines() -> None:
    port = free_port()
    with pytest.raises(RuntimeError, match=r"exited with 2: \['bad setting: PORT'\]"):
        fork_service("forked_stub:fail", [], {}, port, preload=["json"])


def test_a_forked_service_can_be_killed() -> None:
    port = free_port()
    service = fork_service("forked_stub:main", [str(port)], {}, port, preload=["json"])
    service.kill()
    assert service.proc.returncode == -signal.SIGKILL
