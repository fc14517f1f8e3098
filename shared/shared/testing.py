"""Test support for the services' suites: a service in its own process on a free loopback
port, waited for until `/health` answers, its JSON log lines read, stopped with SIGTERM.

Two launchers: `start_service` runs a command as a user runs it; `fork_service` forks the
service from a server that imported it once (a fraction of the CPU, for suites that start
hundreds).  They live here, once, and use the standard library only, so the shared package
gains no dependency for them.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import multiprocessing
import multiprocessing.process
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

__all__ = [
    "ForkedProcess",
    "ServiceProcess",
    "fork_service",
    "free_port",
    "scrubbed_environ",
    "start_service",
]


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


class Proc(Protocol):
    """What a test does with a service's process: a `subprocess.Popen` or a `ForkedProcess`."""

    @property
    def pid(self) -> int: ...
    @property
    def returncode(self) -> int | None: ...
    def poll(self) -> int | None: ...
    def wait(self, timeout: float | None = None) -> int: ...
    def send_signal(self, sig: int) -> None: ...
    def terminate(self) -> None: ...
    def kill(self) -> None: ...


@dataclass
class ServiceProcess:
    """A started service: its process, port and every line it printed (stdout and stderr)."""

    proc: Proc
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
    assert proc.stdout is not None
    return _until_healthy(ServiceProcess(proc, port), proc.stdout, command[0], timeout)


def fork_service(
    entry: str,
    args: Sequence[str],
    env: Mapping[str, str],
    port: int,
    *,
    preload: Sequence[str] = (),
    timeout: float = 60.0,
) -> ServiceProcess:
    """Run ``entry`` (``"package.module:function"``, called with ``args`` as its argv) in a
    process forked from a server that imported ``preload`` once, with exactly ``env``; then as
    `start_service`.

    Why: a Python service's start is mostly imports (about 2.5 s of CPU here, 4.5 s under the
    coverage tracer), and a test suite that starts two hundred services spent a third of its
    CPU on them.  The fork server (`multiprocessing`'s ``forkserver``, one per test process)
    pays the imports once; each service after that is a fork, then the same ``main`` the
    console script calls, reading its settings from ``env`` as a started process does.  What a
    fork cannot show (the interpreter's own start, a console script, imports under a given
    environment) the tests that need it start with `start_service`.
    """
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__, *preload])
    # The service's output goes to a pipe of ours: its write end travels to the child with the
    # process object (multiprocessing passes a Connection's descriptor along).
    reader, writer = context.Pipe(duplex=False)
    process = context.Process(
        target=_run_entry,
        args=(entry, list(args), {"PYTHONUNBUFFERED": "1", **env}, writer),
        name=f"service:{port}",
        daemon=True,  # a service a test forgot is ended with the test process, not left running
    )
    process.start()
    writer.close()  # the child's copy is the only write end now: its exit ends our reading
    output = os.fdopen(os.dup(reader.fileno()), "r", encoding="utf-8", errors="replace")
    reader.close()
    proc = ForkedProcess(process)
    return _until_healthy(ServiceProcess(proc, port), output, entry, timeout)


def _run_entry(entry: str, argv: list[str], env: dict[str, str], out: Any) -> None:
    """In the forked child: become a service started with ``env``, printing to ``out``."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(out.fileno(), 1)
    os.dup2(out.fileno(), 2)
    out.close()
    # Line by line, as PYTHONUNBUFFERED gives a started process: a test reads the log live.
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(line_buffering=True, write_through=True)
    os.environ.clear()
    os.environ.update(env)
    module, _, function = entry.partition(":")
    getattr(importlib.import_module(module), function)(argv)


class ForkedProcess:
    """A forked service behind the part of `subprocess.Popen`'s interface the tests use."""

    def __init__(self, process: multiprocessing.process.BaseProcess) -> None:
        self._process = process
        assert process.pid is not None
        self.pid: int = process.pid
        self.args = process.name

    @property
    def returncode(self) -> int | None:
        return self._process.exitcode

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        code = self._process.exitcode
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        return code

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:  # as Popen: no signal to a pid that may be reused
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _until_healthy(service: ServiceProcess, output: IO[str], name: str, timeout: float) -> ServiceProcess:
    """Collect ``output`` into ``service.lines`` and wait for its ``/health``."""
    proc = service.proc

    def pump() -> None:
        with output:
            for line in output:
                service.lines.append(line.rstrip("\n"))

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            reader.join(timeout=5)  # its last lines may still be in the pipe
            raise RuntimeError(f"{name} exited with {proc.returncode}: {service.lines[-10:]}")
        try:
            with urllib.request.urlopen(f"{service.base}/health", timeout=1) as response:
                if response.status == 200:
                    return service
        except (urllib.error.URLError, OSError):
            time.sleep(0.05)
    service.kill()
    raise RuntimeError(f"{name} did not become healthy within {timeout}s: {service.lines[-10:]}")
