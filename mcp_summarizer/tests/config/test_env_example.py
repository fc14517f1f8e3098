"""`.env.example` documents every setting with its real default."""

from __future__ import annotations

import re
from pathlib import Path

from mcp_summarizer.config import Environment, load_settings

ENV_EXAMPLE = Path(__file__).resolve().parents[3] / ".env.example"


def _documented() -> dict[str, str]:
    text = ENV_EXAMPLE.read_text(encoding="utf-8")
    # Values may be double-quoted (the shell and docker compose both strip the quotes). A
    # setting left unset on purpose is documented as a comment line `# NAME=` (REDIS_URL:
    # docker compose tells unset from empty).
    return {
        name: value[1:-1] if len(value) > 1 and value[0] == value[-1] == '"' else value
        for name, value in re.findall(r"^(?:# )?([A-Z][A-Z0-9_]*)=(.*)$", text, re.MULTILINE)
    }


def test_every_setting_is_documented() -> None:
    documented = _documented()
    missing = {name.upper() for name in Environment.model_fields} - documented.keys()
    assert not missing, f".env.example lacks {sorted(missing)}"


def test_documented_values_are_the_defaults() -> None:
    from_file = load_settings(_documented())
    defaults = load_settings({})
    assert from_file.model_dump() == defaults.model_dump()


def test_the_shell_can_read_it(tmp_path) -> None:
    """A shell that sources .env with `set -a; . ./.env` (to run the researcher, say) reads a
    copy of the example without a complaint."""
    import subprocess

    result = subprocess.run(
        ["bash", "-c", f'set -a; . "{ENV_EXAMPLE}"; printf %s "$FETCH_USER_AGENT"'],
        capture_output=True,
        text=True,
        check=False,
    )
    # bash goes on past a line it cannot run (a value with an unquoted space): stderr tells.
    assert result.returncode == 0 and not result.stderr, result.stderr
    assert result.stdout == load_settings({}).fetch.fetch_user_agent
