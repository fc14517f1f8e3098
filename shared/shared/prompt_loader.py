"""Prompts live in markdown files next to the code that uses them, never in Python strings.

`load_prompt(__file__, "name")` finds `prompts/name.md` beside the calling module (or in a
parent folder, so a package can keep its prompts at its root), and `render()` fills its
`{placeholder}`s.  `render` is deliberately not `str.format`: a brace in a prompt file, or in
a caller-supplied value such as a JSON schema hint, must not break formatting, and a value is
inserted once, never expanded again.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

__all__ = ["PromptError", "load_prompt", "placeholders", "render"]

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SEARCH_DEPTH = 3  # caller's folder and up to this many parents


class PromptError(LookupError):
    """A prompt file is missing, or a placeholder has no value."""


def load_prompt(caller_file: str | Path, name: str) -> str:
    """Return the text of `prompts/<name>.md` found beside `caller_file` or in a parent folder."""
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
        raise PromptError(f"invalid prompt name {name!r}: use letters, digits, '_' or '-'")
    return _load(Path(caller_file).resolve().parent, name)


@cache
def _load(start: Path, name: str) -> str:
    searched = []
    folder = start
    for _ in range(_SEARCH_DEPTH + 1):
        candidate = folder / "prompts" / f"{name}.md"
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
        searched.append(str(candidate))
        folder = folder.parent
    raise PromptError(f"prompt {name!r} not found; looked in: {', '.join(searched)}")


def placeholders(template: str) -> set[str]:
    """The `{names}` a template expects."""
    return set(_PLACEHOLDER.findall(template))


def render(template: str, **values: object) -> str:
    """Fill `{name}` placeholders in one pass; other braces are left as they are.

    Every placeholder in the template must be given a value (a typo in a prompt file should
    fail loudly, not reach the model); extra values are ignored so callers can pass a common set.
    """
    missing = placeholders(template) - values.keys()
    if missing:
        raise PromptError(f"no value for placeholder(s): {', '.join(sorted(missing))}")
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)
