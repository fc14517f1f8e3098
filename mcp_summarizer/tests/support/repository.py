"""The repository's own files as one text: its .md and .py files as git tracks them, in git's
order, each whole (a real input of mixed prose and code, 2.4 MB at the time of writing)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

__all__ = ["REPOSITORY", "repository_files"]

REPOSITORY = Path(__file__).resolve().parents[3]


def repository_files() -> dict[str, str]:
    """Path -> text of every .md and .py file git tracks in the checkout, sorted by path;
    skips the test when there is no git or no checkout."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--", "*.md", "*.py"], cwd=REPOSITORY, capture_output=True, timeout=60
        )
    except FileNotFoundError:
        pytest.skip("git is not installed")
    if listed.returncode != 0 or not listed.stdout:
        pytest.skip(f"{REPOSITORY} is not a git checkout")
    names = sorted(listed.stdout.decode().strip("\0").split("\0"))
    return {name: (REPOSITORY / name).read_text(encoding="utf-8") for name in names}
