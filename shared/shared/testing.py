"""Test support for the services' suites: a service started as a user starts it.

Both services' tests start `mcp-summarizer` as a subprocess on a free loopback port, wait
for `/health`, read its JSON log lines and stop it.  That launcher lives here, once.  It
uses the standard library only, so the shared package gains no dependency for it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ServiceProcess", "free_port", "scrubbed_environ", "start_service"]


def free_port() -> int:
    """A port nobody listens on right now (the kernel's pick)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def scrubbed_environ(prefixes: Iterable[str]) -> dict[str, str]:
    """The process environment without variables that start with ``prefixes``: a developer's
    own settings must not change what a test starts."""
    drop = tuple(prefixes)
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


@dataclass
class ServiceProcess:
    """A started service: its process, port and every line it printed (stdout and stderr)."""

    proc: subprocess.Popen[str]
    port: int
    lines: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The MCP endpoint."""
        return f"{self.base}/mcp"

    def events(self, name: str | None = None) -> list[dict[str, Any]]:
        """The JSON log events printed so far (all, or those named ``name``); a line that
        is not JSON fails the test, since every line must be."""
        out = []
        for line in list(self.lines):
            record: dict[str, Any] = json.loads(line)
            if name is None or record.get("event") == name:
                out.append(record)
        return out

    def wait_for_event(self, name: str, count: int = 1, timeout: float = 10.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.events(name)
            if len(found) >= count:
                return found
            time.sleep(0.05)
        raise AssertionError(f"no {count} {name!r} event(s) within {timeout}s; log: {self.lines[-5:]}")

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM, as a container runtime stops it; SIGKILL if it does not exit in time."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()


def start_service(
    command: Sequence[str], env: Mapping[str, str], port: int, *, timeout: float = 60.0
) -> ServiceProcess:
    """Run ``command`` with exactly ``env`` and wait until ``GET /health`` on ``port`` answers
    200; raise with the last log lines if it exits or does not become healthy in time (a
    liveness bound: a Python service starting on a loaded 2-core machine took 12-23 s)."""
    proc = subprocess.Popen(
        list(command),
        env={"PYTHONUNBUFFERED": "1", **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    service = ServiceProcess(proc, port)

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            service.lines.append(line.rstrip("\n"))

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            reader.join(timeout=5)  # its last lines may still be in the pipe
            raise RuntimeError(f"{command[0]} exited with {proc.returncode}: {service.lines[-10:]}")
        try:
            with urllib.request.urlopen(f"{service.base}/health", timeout=1) as response:
                if response.status == 200:
                    return service
        except (urllib.error.URLError, OSError):
            time.sleep(0.05)
    service.kill()
    raise RuntimeError(f"{command[0]} did not become healthy within {timeout}s: {service.lines[-10:]}")
