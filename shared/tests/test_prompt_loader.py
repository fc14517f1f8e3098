from pathlib import Path

import pytest

from shared.prompt_loader import PromptError, load_prompt, placeholders, render


def _write(root: Path, name: str, text: str) -> None:
    (root / "prompts").mkdir(parents=True, exist_ok=True)
    (root / "prompts" / f"{name}.md").write_text(text, encoding="utf-8")


def test_finds_prompt_beside_caller_and_in_parent(tmp_path: Path) -> None:
    _write(tmp_path, "beside", "one")
    pkg = tmp_path / "pkg" / "sub"
    pkg.mkdir(parents=True)
    assert load_prompt(tmp_path / "mod.py", "beside") == "one"
    assert load_prompt(pkg / "mod.py", "beside") == "one"


def test_missing_prompt_names_the_places_searched(tmp_path: Path) -> None:
    with pytest.raises(PromptError, match=r"'nope' not found; looked in: .*prompts/nope\.md"):
        load_prompt(tmp_path / "mod.py", "nope")


def test_rejects_path_like_names(tmp_path: Path) -> None:
    with pytest.raises(PromptError, match="invalid prompt name"):
        load_prompt(tmp_path / "mod.py", "../secrets")


def test_render_leaves_foreign_braces_and_does_not_reexpand() -> None:
    template = 'Schema: {schema_hint}\nExample JSON: {"npc": {"name": "x"}}\nBudget {max_tokens}'
    out = render(template, schema_hint="{max_tokens} {0} {", max_tokens=500)
    assert out == 'Schema: {max_tokens} {0} {\nExample JSON: {"npc": {"name": "x"}}\nBudget 500'


def test_render_requires_every_placeholder() -> None:
    assert placeholders("a {x} b {y_2} {not valid}") == {"x", "y_2"}
    with pytest.raises(PromptError, match="y_2"):
        render("a {x} b {y_2}", x=1)
