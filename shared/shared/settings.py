"""Settings read once from the environment, with errors that name the variable.

Every service has a pydantic-settings class; `load` reads it from the process environment
(over a `.env` file when one is given and exists: the process environment wins) or, for
tests and overrides, from an explicit mapping only (the process environment must not leak
in), and turns a validation failure into one message listing each bad variable by its
environment name, with the value it got (never for secrets).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

__all__ = ["load"]

S = TypeVar("S", bound=BaseSettings)
_SECRET_WORDS = ("key", "secret", "password")


@cache  # one subclass per settings class, so two loads compare equal
def _mapping_only(cls: type[S]) -> type[S]:
    def sources(
        _cls: type[BaseSettings],
        /,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        **_: Any,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)

    return type(f"{cls.__name__}FromMapping", (cls,), {"settings_customise_sources": classmethod(sources)})


def load(
    cls: type[S],
    env: Mapping[str, str] | None,
    error: type[Exception],
    *,
    env_file: Path | None = None,
    values: Mapping[str, Any] | None = None,
) -> S:
    """``cls`` from ``env`` (default: the process environment, over ``env_file`` if it exists),
    and ``values`` by field name over both; raise ``error`` naming every bad variable."""
    given = dict(values or {})
    try:
        if env is None:
            if env_file is not None and env_file.is_file():
                return cls(_env_file=env_file, **given)
            return cls(**given)
        # Field values, as BaseSettings takes them (**values: Any): pydantic validates them.
        lowered: dict[str, Any] = {k.lower(): v for k, v in env.items() if k.lower() in cls.model_fields}
        lowered.update(given)
        from_mapping: type[S] = _mapping_only(cls)  # functools.cache loses the TypeVar: restore it
        return from_mapping(**lowered)
    except ValidationError as exc:
        raise error("invalid configuration: " + "; ".join(_problems(exc))) from None


def _problems(exc: ValidationError) -> list[str]:
    problems = []
    for err in exc.errors():
        name = "_".join(str(p) for p in err["loc"]).upper()
        shown = (
            name and not isinstance(err["input"], dict) and not any(w in name.lower() for w in _SECRET_WORDS)
        )
        value = f" (got {err['input']!r})" if shown else ""
        message = err["msg"].removeprefix("Value error, ")
        problems.append(f"{name}: {message}{value}" if name else message)
    return problems
