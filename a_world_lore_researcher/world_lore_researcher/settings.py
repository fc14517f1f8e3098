"""Settings, read once from the environment into one typed object.

A bad value stops the command with a message naming the variable.  The MCP server URLs
(`MCP_WEB_SEARCH_URL`, `MCP_SUMMARIZER_URL`) are consumed by `config/mcp_config.json` through
`${VAR}` substitution; they are declared here too so that a malformed URL is caught early.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from shared import settings as shared_settings

__all__ = ["DEFAULT_BASE_URL", "ConfigError", "Settings", "load_settings"]

DEFAULT_BASE_URL = "https://openrouter.ai/api/v1"
_URL = re.compile(r"^https?://[^\s/]+")


class ConfigError(ValueError):
    """The environment (or a config file) holds an invalid setting; the message names it."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(case_sensitive=False, extra="ignore", frozen=True)

    # The research LLM: OpenRouter or any OpenAI-compatible endpoint.
    researcher_llm_model: str = Field("openai/gpt-4o-mini", min_length=1)
    researcher_llm_api_key: SecretStr = SecretStr("")
    openrouter_api_key: SecretStr = SecretStr("")  # fallback for RESEARCHER_LLM_API_KEY
    researcher_llm_base_url: str = Field(DEFAULT_BASE_URL, pattern=r"^https?://")
    researcher_llm_timeout_seconds: float = Field(120.0, gt=0)
    researcher_llm_max_retries: int = Field(2, ge=0, le=10)
    # Model requests allowed in one research step; past it the step keeps what it found.
    researcher_max_model_requests: int = Field(40, ge=1, le=1000)

    # MCP servers (read by config/mcp_config.json; validated here when set)
    mcp_web_search_url: str | None = None
    mcp_summarizer_url: str | None = None
    # The summarizer's bearer token, when it runs with AUTH_TOKENS (sent as Authorization).
    mcp_summarizer_auth_token: SecretStr = SecretStr("")
    researcher_mcp_config: Path | None = None  # default: the mcp_config.json shipped in the package
    researcher_mcp_connect_timeout_seconds: float = Field(5.0, gt=0)
    researcher_topics_file: Path | None = None  # default: the research_topics.toml shipped in the package

    # Research
    researcher_game: str = Field("World of Warcraft", min_length=1)
    # Page text that reaches the research without a summary (summarizer down, or its fetch
    # degraded) is cut to this many cl100k tokens per source.
    researcher_unsummarized_max_tokens: int = Field(4096, ge=64, le=1_000_000)
    # The run's digest (summarize_documents over every source): its size, and how long the
    # summarizer may take before the research is written without it.
    researcher_summary_max_tokens: int = Field(8000, ge=64, le=1_000_000)
    researcher_summary_timeout_seconds: float = Field(300.0, gt=0)

    # Storage
    researcher_data_dir: Path = Path("data")
    researcher_checkpoint_db: Path | None = None  # default: <data dir>/checkpoints.sqlite3
    researcher_output_dir: Path | None = None  # default: <data dir>/research

    researcher_log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"

    @field_validator(
        "researcher_mcp_config",
        "researcher_topics_file",
        "researcher_checkpoint_db",
        "researcher_output_dir",
        "mcp_web_search_url",
        "mcp_summarizer_url",
        mode="before",
    )
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        """`VAR=` (as in .env.example) means "use the default", not the path "." or URL ""."""
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("mcp_web_search_url", "mcp_summarizer_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and value.strip() and not _URL.match(value.strip()):
            raise ValueError("must be an http(s) URL such as http://mcp-summarizer:8007/mcp")
        return value.strip() if value else value

    @property
    def llm_api_key(self) -> str:
        return (
            self.researcher_llm_api_key.get_secret_value() or self.openrouter_api_key.get_secret_value()
        ).strip()

    @property
    def llm_base_url_is_default(self) -> bool:
        return self.researcher_llm_base_url.rstrip("/") == DEFAULT_BASE_URL

    @property
    def llm_configured(self) -> bool:
        """A key is set, or the base URL points at a (local) server that may not need one."""
        return bool(self.llm_api_key) or not self.llm_base_url_is_default

    @property
    def checkpoint_db(self) -> Path:
        return self.researcher_checkpoint_db or self.researcher_data_dir / "checkpoints.sqlite3"

    @property
    def output_dir(self) -> Path:
        return self.researcher_output_dir or self.researcher_data_dir / "research"


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Read the settings from `env` (default: the process environment), naming any bad variable."""
    return shared_settings.load(Settings, env, ConfigError)
