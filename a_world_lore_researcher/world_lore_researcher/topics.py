"""The research topics: `config/research_topics.toml` (or RESEARCHER_TOPICS_FILE)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from shared.prompt_loader import placeholders, render
from world_lore_researcher.settings import ConfigError

__all__ = ["DEFAULT_TOPICS_FILE", "Topic", "TopicsError", "load_topics", "select_topics"]

DEFAULT_TOPICS_FILE = Path(__file__).parent / "config" / "research_topics.toml"
_ALLOWED_PLACEHOLDERS = {"zone", "game"}


class TopicsError(ConfigError):
    """The topics file is unreadable or malformed, or an unknown topic was asked for."""


@dataclass(frozen=True)
class Topic:
    key: str
    title: str
    instructions: str  # template with {zone} and {game}
    schema_hint: str

    def render_instructions(self, zone: str, game: str) -> str:
        return render(self.instructions, zone=zone, game=game)


def _text(value: object) -> str:
    """A TOML string with its line-continuations already joined, tidied to single spaces."""
    return " ".join(str(value).split())


def load_topics(path: Path | None = None) -> dict[str, Topic]:
    """The topics in file order, keyed by their table name."""
    path = Path(path or DEFAULT_TOPICS_FILE)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TopicsError(f"cannot read the topics file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise TopicsError(f"{path} is not valid TOML: {exc}") from None
    table = data.get("topics")
    if not isinstance(table, dict) or not table:
        raise TopicsError(f"{path}: expected [topics.<key>] tables with instructions and schema_hint")
    topics = {}
    for key, entry in table.items():
        where = f"{path}: [topics.{key}]"
        if not isinstance(entry, dict):
            raise TopicsError(f"{where} must be a table")
        missing = [f for f in ("instructions", "schema_hint") if not str(entry.get(f, "")).strip()]
        if missing:
            raise TopicsError(f"{where} needs {' and '.join(missing)}")
        instructions = _text(entry["instructions"])
        unknown = placeholders(instructions) - _ALLOWED_PLACEHOLDERS
        if unknown:
            raise TopicsError(
                f"{where}: unknown placeholder(s) {', '.join(sorted(unknown))} (use {{zone}} and {{game}})"
            )
        topics[key] = Topic(key, _text(entry.get("title") or key), instructions, _text(entry["schema_hint"]))
    return topics


def select_topics(topics: dict[str, Topic], keys: str | list[str] | None) -> list[Topic]:
    """The topics named in `keys` ("a,b" or a list), in file order; all of them when empty."""
    if isinstance(keys, str):
        keys = [k.strip() for k in keys.split(",")]
    wanted = [k for k in keys or [] if k]
    if not wanted:
        return list(topics.values())
    unknown = [k for k in wanted if k not in topics]
    if unknown:
        raise TopicsError(f"unknown topic(s): {', '.join(unknown)}; known: {', '.join(topics)}")
    return [t for k, t in topics.items() if k in wanted]
