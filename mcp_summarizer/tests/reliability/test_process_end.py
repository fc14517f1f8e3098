"""The serving process leaves with `os._exit` (mcp_summarizer/process/ending.py), which skips `atexit`:
a measurement running in it must still be saved, or the test command's coverage counts the
service's own code as never run."""

from __future__ import annotations

import sys
from pathlib import Path

import coverage
import pytest

from shared.testing import free_port, scrubbed_environ, start_service

pytestmark = pytest.mark.integration


def test_a_measured_server_saves_its_coverage_when_sigterm_ends_it(tmp_path: Path) -> None:
    data = tmp_path / "coverage.data"
    port = free_port()
    env = scrubbed_environ(("OPENROUTER_", "LLM_", "MCP_SUMMARIZER_", "COVERAGE_"))
    env.update({"MCP_SUMMARIZER_PORT": str(port), "CACHE_DIR": str(tmp_path / "store"), "CACHE": "off"})
    command = [sys.executable, "-m", "coverage", "run", f"--data-file={data}", "--source=mcp_summarizer"]
    server = start_service([*command, "-m", "mcp_summarizer"], env, port)
    server.stop(timeout=30)
    assert server.proc.returncode == 0, server.lines[-20:]

    # pyproject.toml's `parallel = true` gives the file a per-process suffix.
    saved = sorted(tmp_path.glob(f"{data.name}*"))
    assert saved, "the served process exited without saving its coverage data"
    measured = coverage.CoverageData(basename=str(saved[0]))
    measured.read()
    runners = [name for name in measured.measured_files() if name.endswith("mcp/http_runner.py")]
    assert runners and measured.lines(runners[0]), "the HTTP runner's lines were not recorded"
