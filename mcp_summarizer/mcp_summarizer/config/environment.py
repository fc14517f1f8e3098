"""The settings read from the environment: every part's variables in one flat reader (the
names a user sets, each checked by its part's rule, a bad one named in the error), the rules
that tie two values, and websum's names read as this project's.

The reader is made of the parts (`Environment`), so a variable is declared once, in its part;
pydantic-settings reads it exactly as it reads any flat settings class: the process
environment over a `.env` file, names in any case.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dotenv import dotenv_values
from pydantic import SecretStr, create_model, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from mcp_summarizer.config.settings import DEFAULT_BASE_URL, PARTS, Settings
from mcp_summarizer.errors import ConfigError
from mcp_summarizer.text.context_window import max_output_tokens
from shared import settings as shared_settings

__all__ = [
    "WEBSUM_ALIASES",
    "Environment",
    "flat_values",
    "load_settings",
    "nested",
    "revalidated",
    "websum_values",
]

# A shell-style reference left unexpanded ("${NAME}"); only the reference is ever shown.
_PLACEHOLDER = re.compile(r"\$\{[^}\s]{0,64}\}?")

# The smallest output limits that still hold an answer's header lines and some summary.
_MIN_OUTPUT_BYTES = 1024
_MIN_OUTPUT_LINES = 16


class _Reader(BaseSettings):
    """What `Environment` is made on: how it reads, and the checks of the whole."""

    model_config = SettingsConfigDict(case_sensitive=False, extra="ignore", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _expanded(cls, values: Any) -> Any:
        """A harness that passed "${OPENROUTER_API_KEY}" with the variable unset sent the
        placeholder itself: say so at start-up, not as a 401 on the first request.  (A model
        validator: the error then names the variable without quoting its value, which for
        the base URL may hold credentials.)"""
        if not isinstance(values, dict):
            return values
        for name in ("openrouter_api_key", "openrouter_base_url"):
            value = values.get(name)
            text = value.get_secret_value() if isinstance(value, SecretStr) else value
            if isinstance(text, str) and (match := _PLACEHOLDER.search(text)):
                raise ValueError(
                    f"{name.upper()} looks like an unexpanded variable {match.group()}: set that "
                    "variable where the service is started, or leave this one unset"
                )
        return values

    @model_validator(mode="after")
    def _consistent(self) -> _Reader:
        check(nested(self))
        return self


# Every part's fields, flat: the environment variables, each with its part's rule and default.
Environment: type[_Reader] = create_model(  # type: ignore[call-overload]
    "Environment",
    __base__=_Reader,
    __module__=__name__,
    **{
        name: (field.annotation, field)
        for part in PARTS.values()
        for name, field in part.model_fields.items()
    },
)


def nested(flat: BaseSettings) -> Settings:
    """The parts of ``flat``'s values; each part knows which of its variables were set."""
    chosen = flat.model_fields_set
    return Settings.model_construct(
        set(PARTS),
        **{
            key: part.model_construct(
                _fields_set=chosen & part.model_fields.keys(),
                **{name: getattr(flat, name) for name in part.model_fields},
            )
            for key, part in PARTS.items()
        },
    )


def flat_values(settings: Settings) -> dict[str, Any]:
    """Every variable's value, by its name in lower case (as `Environment` takes them)."""
    return {name: value for key in PARTS for name, value in getattr(settings, key).model_dump().items()}


def revalidated(settings: Settings, values: Mapping[str, Any]) -> Settings:
    """``settings`` with ``values`` (by variable, lower case) in place, all checked again as at
    load: a pydantic ValidationError names what is wrong."""
    return nested(Environment.model_validate({**flat_values(settings), **values}))


def check(s: Settings) -> None:
    """The rules that tie two values (or more): a ValueError naming the variables."""
    summ, llm, tools = s.summarization, s.llm, s.tools
    if summ.default_chunk_overlap_tokens * 4 > summ.default_chunk_size_tokens:
        raise ValueError(
            "DEFAULT_CHUNK_OVERLAP_TOKENS must be at most a quarter of DEFAULT_CHUNK_SIZE_TOKENS "
            f"({summ.default_chunk_overlap_tokens} > {summ.default_chunk_size_tokens} / 4)"
        )
    if summ.max_inflight_input_tokens < summ.max_input_tokens:
        raise ValueError(
            f"MAX_INFLIGHT_INPUT_TOKENS={summ.max_inflight_input_tokens} is under "
            f"MAX_INPUT_TOKENS={summ.max_input_tokens}: the largest request could never run"
        )
    if 0 < len(s.store.source_id_secret.get_secret_value()) < 16:
        raise ValueError("SOURCE_ID_SECRET must be at least 16 characters (or unset: one is made)")
    if (
        llm.llm_concurrency == "adaptive"
        and llm.llm_concurrency_max < llm.max_concurrent_llm_calls
        and "llm_concurrency_max" in llm.model_fields_set  # unset, it rises to the start
    ):
        raise ValueError(
            f"LLM_CONCURRENCY_MAX={llm.llm_concurrency_max} is under MAX_CONCURRENT_LLM_CALLS="
            f"{llm.max_concurrent_llm_calls}, where LLM_CONCURRENCY=adaptive starts"
        )
    deadline = s.deadlines.tool_deadline_seconds
    if deadline is not None and 0 < deadline < 1:
        raise ValueError(
            f"TOOL_DEADLINE_SECONDS={deadline:g} is under 1: a partial answer "
            "needs a moment to make (0 = no deadline)"
        )
    if llm.llm_concurrency_scope == "cluster" and not s.redis.redis_url:
        raise ValueError("LLM_CONCURRENCY_SCOPE=cluster needs REDIS_URL (the leases are kept in Redis)")
    if llm.summarizer_backend == "openai" and not llm.configured:
        raise ValueError(
            "SUMMARIZER_BACKEND=openai needs OPENROUTER_API_KEY, or OPENROUTER_BASE_URL pointing at "
            "a local OpenAI-compatible server"
        )
    if 0 < tools.tool_output_max_bytes < _MIN_OUTPUT_BYTES:
        raise ValueError(
            f"TOOL_OUTPUT_MAX_BYTES={tools.tool_output_max_bytes} is under {_MIN_OUTPUT_BYTES}: too small "
            "for an answer's header lines and a summary (0 = no limit)"
        )
    if 0 < tools.tool_output_max_lines < _MIN_OUTPUT_LINES:
        raise ValueError(
            f"TOOL_OUTPUT_MAX_LINES={tools.tool_output_max_lines} is under {_MIN_OUTPUT_LINES}: too few "
            "for an answer's header lines and a summary (0 = no limit)"
        )
    ceiling = max_output_tokens(llm.llm_context_tokens, llm.tokenizer_ratio)
    for name, value, chosen in (
        ("default_max_output_tokens", summ.default_max_output_tokens, summ.model_fields_set),
        ("fetch_max_tokens", s.fetch.fetch_max_tokens, s.fetch.model_fields_set),
    ):
        if value > ceiling and name in chosen:
            # A value someone chose is an error they should hear about; a default shrinks
            # to what a small model can give (summarize.budget).
            raise ValueError(
                f"{name.upper()}={value} is over {ceiling}, the most a final merge can write "
                f"with LLM_CONTEXT_TOKENS={llm.llm_context_tokens} and LLM_TOKENIZER_MARGIN="
                f"{llm.llm_tokenizer_margin:g} (half of it, after the prompts)"
            )


# websum's settings (its README; an opencode config copied from it), read as this project's:
# websum's name -> this project's.  This project's name wins when both are set.
WEBSUM_ALIASES = {
    "base_url": "openrouter_base_url",
    "api_key": "openrouter_api_key",
    "max_tokens": "fetch_max_tokens",
    "max_context_length": "llm_context_tokens",
}


def load_settings(env: Mapping[str, str] | None = None, *, env_file: Path | None = None) -> Settings:
    """Read the settings from `env` (default: the process environment, over ``env_file`` if
    that file exists), naming any bad variable; websum's names count as aliases
    (`websum_values`)."""
    source = _environment(env_file) if env is None else {k.lower(): v for k, v in env.items()}
    aliases = websum_values(source)
    try:
        flat = shared_settings.load(
            Environment,
            env,
            ConfigError,
            env_file=env_file,
            values={name: value for name, (_, value) in aliases.items()},
        )
    except ConfigError as exc:
        message = str(exc)
        for name, (alias, _) in aliases.items():  # the variable the user set, by the name they set
            message = message.replace(f"{name.upper()}:", f"{alias.upper()} (websum's {name.upper()}):")
        raise ConfigError(message) from None
    settings = nested(flat)
    settings._websum = tuple(sorted(alias.upper() for alias, _ in aliases.values()))
    return settings


def websum_values(source: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """This project's settings that ``source`` (lower-case names) sets by websum's names alone:
    {name: (websum's name, value)}.  websum's BASE_URL is where ``/v1/chat/completions`` is
    (so ``/v1`` is added when it does not end the path).  Its API_KEY is read only with an
    endpoint chosen by one of the two base URLs: a key some other program left in the
    environment as API_KEY is never sent to the default endpoint (OpenRouter)."""
    found: dict[str, tuple[str, str]] = {}
    for alias, name in WEBSUM_ALIASES.items():
        value = source.get(alias)
        if value is None or name in source or not value.strip():
            continue
        if alias == "base_url":
            value = value.strip().rstrip("/")
            if not value.endswith("/v1"):
                value += "/v1"
        found[name] = (alias, value)
    _, base = found.get("openrouter_base_url", ("", source.get("openrouter_base_url", DEFAULT_BASE_URL)))
    if base.strip().rstrip("/") == DEFAULT_BASE_URL:
        found.pop("openrouter_api_key", None)
    return found


def _environment(env_file: Path | None) -> dict[str, str]:
    """The process environment over ``env_file``'s values, names in lower case (as the
    settings read them: case does not matter)."""
    merged: dict[str, str] = {}
    if env_file is not None and env_file.is_file():
        merged.update({k.lower(): v for k, v in dotenv_values(env_file).items() if v is not None})
    merged.update({k.lower(): v for k, v in os.environ.items()})
    return merged
