"""scripts/serve.sh, run as a user runs it, in a copy of the repository's layout whose
scripts/setup.sh is a stand-in that counts its runs and links the code under test (so the
script's own logic is what is tested, and no real install happens)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

from mcp import Client

import mcp_summarizer
import shared
from shared.testing import free_port, start_service
from tests.support.answers import first_text
from tests.support.local_site import Site

REPO = Path(__file__).resolve().parents[3]
PYTHONPATH = os.pathsep.join(str(Path(m.__path__[0]).resolve().parent) for m in (mcp_summarizer, shared))
PYPROJECTS = [f"{p}/pyproject.toml" for p in ("shared", "mcp_summarizer", "a_world_lore_researcher")]

FAKE_SETUP = f"""#!/usr/bin/env bash
set -euo pipefail
cd "$(dirname "$0")/.."
echo run >>setup-runs
mkdir -p .venv/bin
ln -sf {sys.executable} .venv/bin/python
printf '#!/bin/sh\\nexec {sys.executable} -m mcp_summarizer "$@"\\n' >.venv/bin/mcp-summarizer
chmod +x .venv/bin/mcp-summarizer
"""


def checkout(root: Path) -> Path:
    (root / "scripts").mkdir()
    shutil.copy(REPO / "scripts" / "serve.sh", root / "scripts" / "serve.sh")
    (root / "scripts" / "setup.sh").write_text(FAKE_SETUP)
    for name in PYPROJECTS:
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text('[project]\nname = "x"\n')
    return root


def env(root: Path, **extra: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(root), "PYTHONPATH": PYTHONPATH, **extra}


def setup_runs(root: Path) -> int:
    runs = root / "setup-runs"
    return len(runs.read_text().splitlines()) if runs.exists() else 0


def serve(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(root / "scripts" / "serve.sh"), *args],
        env=env(root),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_second_start_with_nothing_changed_does_not_set_up_again(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    first = serve(root, "--version")
    assert first.returncode == 0 and first.stdout.startswith("mcp-summarizer "), first.stderr
    assert setup_runs(root) == 1
    assert serve(root, "--version").returncode == 0
    assert setup_runs(root) == 1, "nothing changed: no second install"
    (root / "mcp_summarizer/pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["rich"]\n')
    assert serve(root, "--version").returncode == 0
    assert setup_runs(root) == 2, "a changed pyproject installs again"
    (root / ".venv/bin/mcp-summarizer").unlink()
    assert serve(root, "--version").returncode == 0
    assert setup_runs(root) == 3, "a broken .venv is set up again"
    assert serve(root, "--version").returncode == 0 and setup_runs(root) == 3


async def test_the_shell_wins_over_dotenv(tmp_path: Path) -> None:
    """The README's `FETCH_ALLOW_PRIVATE=true bash scripts/serve.sh` with a .env saying false:
    a page on 127.0.0.1 is fetched."""
    root = checkout(tmp_path)
    (root / ".env").write_text("FETCH_ALLOW_PRIVATE=false\nFETCH_MAX_TOKENS=512\n")
    port = free_port()
    store = root / "store"
    server = start_service(
        ["bash", str(root / "scripts" / "serve.sh"), "--port", str(port)],
        env(root, FETCH_ALLOW_PRIVATE="true", CACHE="off", CACHE_DIR=str(store)),
        port,
    )
    try:
        with Site() as site:
            async with Client(server.url) as client:
                result = await asyncio.wait_for(
                    client.call_tool("fetch_url", {"url": f"{site.base}/small.txt"}), timeout=30
                )
        assert not result.is_error, first_text(result)
        assert "Elwynn Forest is a zone" in first_text(result)
    finally:
        server.stop()
