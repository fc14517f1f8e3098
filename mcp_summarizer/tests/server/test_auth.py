"""AUTH_TOKENS and AUTH_TOKENS_FILE: parsed once at start, a malformed entry named (never its
token), and the verifier the SDK's bearer authentication asks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import mcp_summarizer
import shared
from mcp_summarizer.auth import load_tokens
from mcp_summarizer.config import load_settings
from mcp_summarizer.errors import ConfigError

PYTHONPATH = os.pathsep.join(str(Path(m.__path__[0]).resolve().parent) for m in (mcp_summarizer, shared))
A, B = "a" * 16 + "-alice", "b" * 16 + "-bob"


async def test_pairs_from_the_variable_and_the_file_name_their_tenants(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text(f"# tenants\n\nbob:{B}\n")
    tokens = load_tokens(load_settings({"AUTH_TOKENS": f" alice:{A} ,", "AUTH_TOKENS_FILE": str(path)}))
    alice, bob = await tokens.verify_token(A), await tokens.verify_token(B)
    assert alice is not None and alice.client_id == "alice" and bob is not None and bob.client_id == "bob"
    for wrong in ("", A[:-1], A + "x", "alice", B.upper()):
        assert await tokens.verify_token(wrong) is None
    assert not load_tokens(load_settings({}))  # none configured: authentication off


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("alice", ["AUTH_TOKENS", "name:token"]),
        (f"al ice:{A}", ["AUTH_TOKENS", "name:token"]),
        (f"_local:{A}", ["AUTH_TOKENS", "name:token"]),  # the single tenant's name cannot be taken
        ("alice:short", ["under 16 characters"]),
        (f"alice:{A},alice:{B}", ["named twice"]),
        (f"alice:{A},bob:{A}", ["another tenant's"]),
    ],
)
def test_a_malformed_entry_is_named_without_its_token(value: str, words: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        load_tokens(load_settings({"AUTH_TOKENS": value}))
    for w in words:
        assert w in str(info.value)
    assert A not in str(info.value) and B not in str(info.value) and "short" not in str(info.value)


def test_a_bad_file_line_is_named_by_its_number(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text(f"alice:{A}\nbob\n")
    with pytest.raises(ConfigError, match="AUTH_TOKENS_FILE line 2"):
        load_tokens(load_settings({"AUTH_TOKENS_FILE": str(path)}))
    with pytest.raises(ConfigError, match="cannot be read"):
        load_tokens(load_settings({"AUTH_TOKENS_FILE": str(tmp_path / "missing")}))


def test_the_service_refuses_to_start_with_one_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_summarizer"],
        cwd=tmp_path,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "PYTHONPATH": PYTHONPATH,
            "AUTH_TOKENS": "alice:short",
        },
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 2
    lines = proc.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "AUTH_TOKENS" in lines[0] and "under 16 characters" in lines[0], lines


def test_a_short_source_id_secret_is_refused() -> None:
    with pytest.raises(ConfigError, match="SOURCE_ID_SECRET"):
        load_settings({"SOURCE_ID_SECRET": "short"})
