"""`.env.example` documents every setting with its real default."""

from __future__ import annotations

import re
from pathlib import Path

from mcp_summarizer.config import Settings, load_settings

ENV_EXAMPLE = Path(__file__).resolve().parents[2] / ".env.example"


def _documented() -> dict[str, str]:
    text = ENV_EXAMPLE.read_text(encoding="utf-8")
    return dict(re.findall(r"^([A-Z][A-Z0-9_]*)=(.*)$", text, re.MULTILINE))


def test_every_setting_is_documented() -> None:
    documented = _documented()
    missing = {name.upper() for name in Settings.model_fields} - documented.keys()
    assert not missing, f".env.example lacks {sorted(missing)}"


def test_documented_values_are_the_defaults() -> None:
    from_file = load_settings(_documented())
    defaults = load_settings({})
    assert from_file.model_dump() == defaults.model_dump()
