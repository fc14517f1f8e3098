"""Settings, read once from the environment (and a `.env` file, if given) into one typed object.

Every variable is documented in the repository's `.env.example`.  A bad value stops
start-up with a message naming the variable, rather than failing on the first request.
Nothing here imports a capability: the settings say what a user may set, and
`assembly.from_settings` makes each capability's option objects of them (so a new option changes
the capability and the assembly, and this file only for its variable).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from dotenv import dotenv_values
from pydantic import Field, PrivateAttr, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from mcp_summarizer.errors import ConfigError
from mcp_summarizer.text.context_window import max_output_tokens
from shared import settings as shared_settings

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_FETCH_TOKENS",
    "DEFAULT_OUTPUT_TOKENS",
    "DEFAULT_USER_AGENT",
    "WEBSUM_ALIASES",
    "Settings",
    "load_settings",
    "websum_values",
]

DEFAULT_BASE_URL = "https://openrouter.ai/api/v1"
# The first word is the product token robots.txt groups are matched against.
DEFAULT_USER_AGENT = "mcp-summarizer/0.1 (+https://pypi.org/project/mcp-summarizer/)"
# The budgets used when a caller asks for none (0), unless a small model cannot give them.
DEFAULT_OUTPUT_TOKENS = 5000
DEFAULT_FETCH_TOKENS = 4096

# The values each choice accepts, spelled here so the settings import no capability; mypy
# holds them to the capability's own (summarize.options, clients.profiles) where
# `assembly.from_settings` passes them on.
FailurePolicy = Literal["original", "extractive", "truncate"]
LowFidelityPolicy = Literal["flag", "replace", "off"]
Profile = Literal["auto", "none", "claude-code", "codex", "copilot", "opencode"]


# A shell-style reference left unexpanded ("${NAME}"); only the reference is ever shown.
_PLACEHOLDER = re.compile(r"\$\{[^}\s]{0,64}\}?")

# The smallest output limits that still hold an answer's header lines and some summary.
_MIN_OUTPUT_BYTES = 1024
_MIN_OUTPUT_LINES = 16


class Settings(BaseSettings):
    model_config = SettingsConfigDict(case_sensitive=False, extra="ignore", frozen=True)

    # Transport
    mcp_summarizer_host: str = "127.0.0.1"
    mcp_summarizer_port: int = Field(8007, ge=1, le=65535)
    # Host headers accepted on /mcp (DNS-rebinding protection); "*" turns the check off.
    mcp_summarizer_allowed_hosts: str = "localhost,127.0.0.1,mcp-summarizer"

    # LLM backend
    summarizer_backend: Literal["auto", "openai", "extractive"] = "auto"
    llm_model: str = Field("openai/gpt-4o-mini", min_length=1)
    openrouter_api_key: SecretStr = SecretStr("")
    openrouter_base_url: str = Field(DEFAULT_BASE_URL, pattern=r"^https?://")
    llm_context_tokens: int = Field(128_000, ge=2048)
    # How many more tokens the server's tokenizer may make of a prompt than cl100k, which every
    # budget counts in (SmolLM2: 14-25% more, Gemma ~10%): 0.25 lets LLM_CONTEXT_TOKENS be the
    # server's own context (summarize.budget).
    llm_tokenizer_margin: float = Field(0.25, ge=0, le=3)
    llm_timeout_seconds: float = Field(120.0, gt=0)
    llm_max_attempts: int = Field(3, ge=1, le=10)
    llm_retry_base_seconds: float = Field(1.0, ge=0)
    llm_retry_max_seconds: float = Field(60.0, ge=0)
    llm_temperature: float = Field(0.1, ge=0, le=2)
    max_concurrent_llm_calls: int = Field(5, ge=1, le=1000)
    # "process": MAX_CONCURRENT_LLM_CALLS per process; "cluster": for all replicas together
    # (leases in Redis: needs REDIS_URL), a crashed replica's leases back after LLM_LEASE_SECONDS.
    llm_concurrency_scope: Literal["process", "cluster"] = "process"
    llm_lease_seconds: float = Field(30.0, ge=1)
    # "adaptive" (the default: a fixed limit over a small provider's capacity had nearly every
    # call refused, bench/README.md): start at MAX_CONCURRENT_LLM_CALLS, grow while calls
    # succeed and latency holds, back off on 429/503, timeouts and rising latency, never over
    # LLM_CONCURRENCY_MAX (unset: 64, or MAX_CONCURRENT_LLM_CALLS when that is more; in cluster
    # scope the limit is shared through Redis).  "fixed": MAX_CONCURRENT_LLM_CALLS at all times.
    llm_concurrency: Literal["fixed", "adaptive"] = "adaptive"
    llm_concurrency_max: int = Field(64, ge=1, le=1000)

    # Summarization
    default_chunk_size_tokens: int = Field(8000, ge=256)
    default_chunk_overlap_tokens: int = Field(500, ge=0)
    # Left unset, a default over what the model can give shrinks to it (summarize.budget).
    default_max_output_tokens: int = Field(DEFAULT_OUTPUT_TOKENS, ge=1)
    max_input_tokens: int = Field(2_000_000, ge=1)
    # Input tokens being summarized at once, all requests together (memory: roughly 20 bytes a
    # token); a request that does not fit waits up to ADMISSION_WAIT_SECONDS, then gets a busy error.
    max_inflight_input_tokens: int = Field(8_000_000, ge=1)
    admission_wait_seconds: float = Field(30.0, ge=0)
    on_llm_failure: FailurePolicy = "extractive"

    # One extra LLM call when a summary has possible inventions or lost facts the focus names:
    # the model is asked to fix exactly those (the receipt then reports before and after).
    fidelity_repair: bool = False
    # An LLM summary that keeps fewer than LOW_FIDELITY_RATIO of the source's facts that the
    # embedded summary keeps at the same budget: flagged in its receipt, replaced by the
    # embedded summary, or not compared at all (off).
    on_low_fidelity: LowFidelityPolicy = "flag"
    low_fidelity_ratio: float = Field(0.25, gt=0, le=1)

    # The content store: the originals behind summarize_documents' source ids (expand).
    # CACHE_DIR: its SQLite file's folder; empty = the user's cache directory.
    cache_dir: str = ""
    source_ttl_seconds: float = Field(86_400.0, gt=0)
    source_store_max_mb: float = Field(512.0, gt=0)
    # One tenant's share of it (AUTH_TOKENS); 0: SOURCE_STORE_MAX_MB divided among the tenants.
    source_store_tenant_max_mb: float = Field(0.0, ge=0)
    # search: the indexes of recently searched sources, in this process's memory (least recently
    # used dropped first; ~10 MB for a source of 2M tokens).
    search_index_max_mb: float = Field(128.0, gt=0)
    # One tenant's share of it (AUTH_TOKENS); 0: SEARCH_INDEX_MAX_MB divided among the tenants.
    search_index_tenant_max_mb: float = Field(0.0, ge=0)

    # The key source ids and proxy handles are digests with (ids a client cannot compute);
    # empty: one made once and kept in the content store (CACHE_DIR's file, or Redis).
    source_id_secret: SecretStr = SecretStr("")
    # Bearer-token tenants on /mcp: "name:token" pairs, comma-separated, and/or a file of them
    # (one pair a line).  Empty: no authentication, one tenant.
    auth_tokens: SecretStr = SecretStr("")
    auth_tokens_file: str = ""

    # The result cache (summaries already made, by a hash of all that decides them): a SQLite
    # file under CACHE_DIR, or Redis with REDIS_URL (which also holds the content store).
    cache: Literal["on", "off"] = "on"
    cache_ttl_seconds: float = Field(604_800.0, gt=0)
    cache_max_mb: float = Field(256.0, gt=0)
    # One tenant's share of it (AUTH_TOKENS); 0: CACHE_MAX_MB divided among the tenants.
    cache_tenant_max_mb: float = Field(0.0, ge=0)
    redis_url: str = Field("", pattern=r"^$|^rediss?://|^unix://")

    # summarize_documents: a cluster less relevant to the focus than this is the first to be
    # left out of the summaries when the budget is tight (it stays in the index).
    cluster_min_relevance: float = Field(0.2, ge=0, le=1)

    # fetch_url
    fetch_max_tokens: int = Field(DEFAULT_FETCH_TOKENS, ge=64)  # shrinks likewise
    fetch_max_bytes: int = Field(5_000_000, ge=1024)
    fetch_timeout_seconds: float = Field(30.0, gt=0)
    fetch_max_redirects: int = Field(5, ge=0, le=20)
    fetch_allow_private: bool = False
    fetch_respect_robots: bool = True
    fetch_user_agent: str = Field(DEFAULT_USER_AGENT, min_length=1)
    fetch_cache_seconds: float = Field(300.0, ge=0)

    # The MCP proxy (`mcp-summarizer proxy`): an upstream tool result over this many tokens is
    # summarized (a server's toolOutputMaxTokens in the proxy config overrides it).
    tool_output_max_tokens: int = Field(8000, ge=256)
    # Every tool answer (the proxy's and the service's own) within these too: bytes of UTF-8 and
    # lines, as agents count them (0: no limit).  CLIENT_PROFILE adds the limits of one agent;
    # "auto" takes them from the client's clientInfo.name (clients.profiles), the tightest wins.
    tool_output_max_bytes: int = Field(0, ge=0)
    tool_output_max_lines: int = Field(0, ge=0)
    client_profile: Profile = "auto"
    upstream_timeout_seconds: float = Field(300.0, gt=0)  # one upstream tool call
    upstream_start_timeout_seconds: float = Field(60.0, gt=0)  # an upstream's start (npx may download)
    # One message from a stdio upstream: a longer line fails the call and ends the connection.
    upstream_max_message_mb: float = Field(64.0, gt=0, le=4096)

    # A tool that may call the LLM answers within this many seconds: what the LLM finished and
    # the embedded summary of the rest, the work going on in the background (summarize.deadline).
    # Unset: the client's known limit (CLIENT_PROFILE) less a sixth, else 50; 0: no deadline.
    tool_deadline_seconds: float | None = Field(None, ge=0)
    # Jobs that go on after their deadline, and the input tokens they hold together; past
    # either, a job ends at its deadline (its partial answer says so).
    background_jobs_max: int = Field(8, ge=0, le=1000)
    background_jobs_max_input_tokens: int = Field(4_000_000, ge=1)

    # On SIGTERM: requests in flight get this long to finish, then end with an error saying so.
    shutdown_grace_seconds: float = Field(30.0, ge=0, le=3600)

    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"

    # websum's names that set values above (`load_settings`), for the start-up event.
    _websum: tuple[str, ...] = PrivateAttr(default=())

    @field_validator("tool_deadline_seconds", mode="before")
    @classmethod
    def _unset_when_empty(cls, value: Any) -> Any:
        """``TOOL_DEADLINE_SECONDS=`` (empty, as a copied .env.example may leave it) is unset."""
        return None if isinstance(value, str) and not value.strip() else value

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
    def _consistent(self) -> Settings:
        if self.default_chunk_overlap_tokens * 4 > self.default_chunk_size_tokens:
            raise ValueError(
                "DEFAULT_CHUNK_OVERLAP_TOKENS must be at most a quarter of DEFAULT_CHUNK_SIZE_TOKENS "
                f"({self.default_chunk_overlap_tokens} > {self.default_chunk_size_tokens} / 4)"
            )
        if self.max_inflight_input_tokens < self.max_input_tokens:
            raise ValueError(
                f"MAX_INFLIGHT_INPUT_TOKENS={self.max_inflight_input_tokens} is under "
                f"MAX_INPUT_TOKENS={self.max_input_tokens}: the largest request could never run"
            )
        if 0 < len(self.source_id_secret.get_secret_value()) < 16:
            raise ValueError("SOURCE_ID_SECRET must be at least 16 characters (or unset: one is made)")
        if (
            self.llm_concurrency == "adaptive"
            and self.llm_concurrency_max < self.max_concurrent_llm_calls
            and "llm_concurrency_max" in self.model_fields_set  # unset, it rises to the start
        ):
            raise ValueError(
                f"LLM_CONCURRENCY_MAX={self.llm_concurrency_max} is under MAX_CONCURRENT_LLM_CALLS="
                f"{self.max_concurrent_llm_calls}, where LLM_CONCURRENCY=adaptive starts"
            )
        if self.tool_deadline_seconds is not None and 0 < self.tool_deadline_seconds < 1:
            raise ValueError(
                f"TOOL_DEADLINE_SECONDS={self.tool_deadline_seconds:g} is under 1: a partial answer "
                "needs a moment to make (0 = no deadline)"
            )
        if self.llm_concurrency_scope == "cluster" and not self.redis_url:
            raise ValueError("LLM_CONCURRENCY_SCOPE=cluster needs REDIS_URL (the leases are kept in Redis)")
        if self.summarizer_backend == "openai" and not self.llm_configured:
            raise ValueError(
                "SUMMARIZER_BACKEND=openai needs OPENROUTER_API_KEY, or OPENROUTER_BASE_URL pointing at "
                "a local OpenAI-compatible server"
            )
        if 0 < self.tool_output_max_bytes < _MIN_OUTPUT_BYTES:
            raise ValueError(
                f"TOOL_OUTPUT_MAX_BYTES={self.tool_output_max_bytes} is under {_MIN_OUTPUT_BYTES}: too small "
                "for an answer's header lines and a summary (0 = no limit)"
            )
        if 0 < self.tool_output_max_lines < _MIN_OUTPUT_LINES:
            raise ValueError(
                f"TOOL_OUTPUT_MAX_LINES={self.tool_output_max_lines} is under {_MIN_OUTPUT_LINES}: too few "
                "for an answer's header lines and a summary (0 = no limit)"
            )
        ceiling = max_output_tokens(self.llm_context_tokens, self.tokenizer_ratio)
        for name in ("default_max_output_tokens", "fetch_max_tokens"):
            value = getattr(self, name)
            if value > ceiling and name in self.model_fields_set:
                # A value someone chose is an error they should hear about; a default shrinks
                # to what a small model can give (summarize.budget).
                raise ValueError(
                    f"{name.upper()}={value} is over {ceiling}, the most a final merge can write "
                    f"with LLM_CONTEXT_TOKENS={self.llm_context_tokens} and LLM_TOKENIZER_MARGIN="
                    f"{self.llm_tokenizer_margin:g} (half of it, after the prompts)"
                )
        return self

    @property
    def tokenizer_ratio(self) -> float:
        """Server tokens per cl100k token of a prompt that every budget allows for."""
        return 1.0 + self.llm_tokenizer_margin

    @property
    def allowed_hosts(self) -> list[str] | None:
        """Host patterns for the transport's DNS-rebinding check; None means no check."""
        names = [h.strip() for h in self.mcp_summarizer_allowed_hosts.split(",") if h.strip()]
        if "*" in names:
            return None
        return [pattern for h in names for pattern in (h, f"{h}:*")]

    @property
    def websum_names(self) -> tuple[str, ...]:
        """websum's variables this configuration was read from (see `load_settings`)."""
        return self._websum

    @property
    def llm_configured(self) -> bool:
        return bool(self.openrouter_api_key.get_secret_value()) or (
            self.openrouter_base_url.rstrip("/") != DEFAULT_BASE_URL
        )

    @property
    def backend(self) -> Literal["openai", "extractive"]:
        """The backend in use: `auto` picks the LLM when one is configured, else the embedded
        extractive summarizer, so the service always answers."""
        if self.summarizer_backend == "auto":
            return "openai" if self.llm_configured else "extractive"
        return self.summarizer_backend


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
        settings = shared_settings.load(
            Settings,
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
