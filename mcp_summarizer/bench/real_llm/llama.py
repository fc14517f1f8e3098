"""`llama-server` as a subprocess on 127.0.0.1: started niced on one thread, waited for, stopped.

One thread (`-t 1`): on this shared 2-core machine `-t 2` was 20x slower, the second thread
waiting for a core that other work holds.  One slot (`-np 1`) with the model's whole context,
so a call is refused for its length exactly when the model's context is too small for it.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from shared.testing import free_port

__all__ = ["LlamaServer", "start"]


@dataclass
class LlamaServer:
    proc: subprocess.Popen[bytes]
    port: int
    log: Path
    alias: str

    @property
    def url(self) -> str:
        """The OpenAI-compatible base URL (OPENROUTER_BASE_URL, REAL_LLM_URL)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start(
    binary: Path,
    model: Path,
    alias: str,
    *,
    context: int,
    extra: tuple[str, ...] = (),
    port: int | None = None,
    log: Path,
    timeout: float = 600.0,
) -> LlamaServer:
    """Start the server and wait until `/health` says the model is loaded (a liveness bound:
    loading takes seconds, but a busy machine stretches it)."""
    port = port or free_port()
    cmd = [
        "nice", "-n", "10", str(binary),
        "-m", str(model), "--alias", alias,
        "--host", "127.0.0.1", "--port", str(port),
        "-t", "1", "-tb", "1", "-np", "1", "-c", str(context),
        "--metrics", *extra,
    ]  # fmt: skip
    out = log.open("ab")
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    server = LlamaServer(proc, port, log, alias)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"llama-server exited with {proc.returncode}; see {log}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if json.loads(r.read() or b"{}").get("status") == "ok":
                    return server
        except (urllib.error.URLError, OSError, ValueError):
            pass
        time.sleep(0.5)
    server.stop()
    raise SystemExit(f"llama-server did not load {model} within {timeout:g}s; see {log}")
