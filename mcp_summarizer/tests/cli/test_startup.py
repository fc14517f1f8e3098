"""`mcp-summarizer --help` and a bad option answer without loading the service: the engine,
the SDKs and the tokenizer are imported by the command that needs them (its CPU time is a
figure of bench/README.md, "Start-up"; here, what it loads)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Modules that only the commands need: each costs tenths of a second of CPU to import.
HEAVY = (
    "mcp_summarizer.summarize.engine",
    "mcp_summarizer.config",
    "openai",
    "mcp.server",
    "tiktoken",
    "rich",
)

_PROBE = """
import contextlib, io, sys
from mcp_summarizer.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
print(sorted(m for m in sys.modules if m.startswith({heavy!r})))
"""


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["summarize", "--help"], ["proxy", "--help"], ["--version"], ["--port", "x"]],
    ids=" ".join,
)
def test_help_and_bad_options_load_none_of_the_service(argv: list[str]) -> None:
    probe = _PROBE.format(heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-c", probe, *argv], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "[]", f"{argv} imported {done.stdout.strip()}"


def test_the_library_surface_loads_when_first_used() -> None:
    probe = (
        "import sys, mcp_summarizer as m\n"
        "assert 'mcp_summarizer.inprocess.if_needed' not in sys.modules\n"
        "assert m.summarize_if_needed.__module__ == 'mcp_summarizer.inprocess.if_needed'\n"
        "from mcp_summarizer import Request, SummarizationService\n"
        "assert sorted(m.__all__) == sorted(n for n in m.__all__ if hasattr(m, n))\n"
        "print('ok')"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr


def test_the_summarize_command_loads_no_sdk_it_does_not_use(tmp_path: Path) -> None:
    """The command line serves no MCP: that SDK (a second of a start's CPU) stays unloaded,
    whatever the stores' setup reads (the tenants' tokens) on the way; and with no LLM
    configured, the embedded summary answers without loading the OpenAI SDK (0.8 s)."""
    page = tmp_path / "page.md"
    page.write_text("## Gates\n\n" + "The gate opens at dawn and shuts at dusk. " * 400, encoding="utf-8")
    probe = _PROBE.format(heavy=("mcp.", "mcp_types", "openai"))
    done = subprocess.run(
        [sys.executable, "-c", probe, "summarize", str(page), "--max-output-tokens", "50"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=tmp_path,
        env={**os.environ, "OPENROUTER_API_KEY": "", "OPENROUTER_BASE_URL": "", "CACHE": "off"},
    )
    assert done.stdout.strip() == "[]", f"summarize imported {done.stdout.strip()[:300]}"
