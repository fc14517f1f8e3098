"""The settings, nested by part: each part a small frozen model that owns its environment
variables (a field's name is its variable's, in lower case: `llm.llm_model` is LLM_MODEL),
with the rules of one value beside it.  Rules that tie two values are `environment`'s, which
also reads them; `assembly.from_settings` makes each capability's options of a part.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PrivateAttr, SecretStr

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_FETCH_TOKENS",
    "DEFAULT_OUTPUT_TOKENS",
    "DEFAULT_USER_AGENT",
    "PARTS",
    "FailurePolicy",
    "LowFidelityPolicy",
    "Profile",
    "Settings",
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


def _unset_when_empty(value: Any) -> Any:
    """``TOOL_DEADLINE_SECONDS=`` (empty, as a copied .env.example may leave it) is unset."""
    return None if isinstance(value, str) and not value.strip() else value


class SettingsPart(BaseModel):
    """One part of the settings.  Frozen, as the whole; its fields are environment variables."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class TransportSettings(SettingsPart):
    mcp_summarizer_host: str = "127.0.0.1"
    mcp_summarizer_port: int = Field(8007, ge=1, le=65535)
    # Host headers accepted on /mcp (DNS-rebinding protection); "*" turns the check off.
    mcp_summarizer_allowed_hosts: str = "localhost,127.0.0.1,mcp-summarizer"

    @property
    def allowed_hosts(self) -> list[str] | None:
        """Host patterns for the transport's DNS-rebinding check; None means no check."""
        names = [h.strip() for h in self.mcp_summarizer_allowed_hosts.split(",") if h.strip()]
        if "*" in names:
            return None
        return [pattern for h in names for pattern in (h, f"{h}:*")]


class LLMSettings(SettingsPart):
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

    @property
    def tokenizer_ratio(self) -> float:
        """Server tokens per cl100k token of a prompt that every budget allows for."""
        return 1.0 + self.llm_tokenizer_margin

    @property
    def configured(self) -> bool:
        """A key, or an endpoint of one's own (a local server may need no key)."""
        return bool(self.openrouter_api_key.get_secret_value()) or (
            self.openrouter_base_url.rstrip("/") != DEFAULT_BASE_URL
        )

    @property
    def backend(self) -> Literal["openai", "extractive"]:
        """The backend in use: `auto` picks the LLM when one is configured, else the embedded
        extractive summarizer, so the service always answers."""
        if self.summarizer_backend == "auto":
            return "openai" if self.configured else "extractive"
        return self.summarizer_backend


class SummarizationSettings(SettingsPart):
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


class FidelitySettings(SettingsPart):
    # One extra LLM call when a summary has possible inventions or lost facts the focus names:
    # the model is asked to fix exactly those (the receipt then reports before and after).
    fidelity_repair: bool = False
    # An LLM summary that keeps fewer than LOW_FIDELITY_RATIO of the source's facts that the
    # embedded summary keeps at the same budget: flagged in its receipt, replaced by the
    # embedded summary, or not compared at all (off).
    on_low_fidelity: LowFidelityPolicy = "flag"
    low_fidelity_ratio: float = Field(0.25, gt=0, le=1)


class StoreSettings(SettingsPart):
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


class AuthTokenSettings(SettingsPart):
    # Bearer-token tenants on /mcp: "name:token" pairs, comma-separated, and/or a file of them
    # (one pair a line).  Empty: no authentication, one tenant.
    auth_tokens: SecretStr = SecretStr("")
    auth_tokens_file: str = ""


class ResultCacheSettings(SettingsPart):
    # The result cache (summaries already made, by a hash of all that decides them): a SQLite
    # file under CACHE_DIR, or Redis with REDIS_URL (which also holds the content store).
    cache: Literal["on", "off"] = "on"
    cache_ttl_seconds: float = Field(604_800.0, gt=0)
    cache_max_mb: float = Field(256.0, gt=0)
    # One tenant's share of it (AUTH_TOKENS); 0: CACHE_MAX_MB divided among the tenants.
    cache_tenant_max_mb: float = Field(0.0, ge=0)


class RedisSettings(SettingsPart):
    # The content store, the result cache and the cluster's LLM leases, when set.
    redis_url: str = Field("", pattern=r"^$|^rediss?://|^unix://")


class DocumentsSettings(SettingsPart):
    # summarize_documents: a cluster less relevant to the focus than this is the first to be
    # left out of the summaries when the budget is tight (it stays in the index).
    cluster_min_relevance: float = Field(0.2, ge=0, le=1)


class FetchSettings(SettingsPart):
    fetch_max_tokens: int = Field(DEFAULT_FETCH_TOKENS, ge=64)  # shrinks likewise
    fetch_max_bytes: int = Field(5_000_000, ge=1024)
    fetch_timeout_seconds: float = Field(30.0, gt=0)
    fetch_max_redirects: int = Field(5, ge=0, le=20)
    fetch_allow_private: bool = False
    fetch_respect_robots: bool = True
    fetch_user_agent: str = Field(DEFAULT_USER_AGENT, min_length=1)
    fetch_cache_seconds: float = Field(300.0, ge=0)


class ToolsSettings(SettingsPart):
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


class DeadlinesSettings(SettingsPart):
    # A tool that may call the LLM answers within this many seconds: what the LLM finished and
    # the embedded summary of the rest, the work going on in the background (summarize.deadline).
    # Unset: the client's known limit (CLIENT_PROFILE) less a sixth, else 50; 0: no deadline.
    tool_deadline_seconds: Annotated[float | None, BeforeValidator(_unset_when_empty)] = Field(None, ge=0)
    # Jobs that go on after their deadline, and the input tokens they hold together; past
    # either, a job ends at its deadline (its partial answer says so).
    background_jobs_max: int = Field(8, ge=0, le=1000)
    background_jobs_max_input_tokens: int = Field(4_000_000, ge=1)


class ProcessSettings(SettingsPart):
    # On SIGTERM: requests in flight get this long to finish, then end with an error saying so.
    shutdown_grace_seconds: float = Field(30.0, ge=0, le=3600)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"


class Settings(BaseModel):
    """All the settings, one part a field; `environment.load_settings` reads them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    transport: TransportSettings
    llm: LLMSettings
    summarization: SummarizationSettings
    fidelity: FidelitySettings
    store: StoreSettings
    auth: AuthTokenSettings
    result_cache: ResultCacheSettings
    redis: RedisSettings
    documents: DocumentsSettings
    fetch: FetchSettings
    tools: ToolsSettings
    deadlines: DeadlinesSettings
    process: ProcessSettings

    # websum's names that set values (`load_settings`), for the start-up event.
    _websum: tuple[str, ...] = PrivateAttr(default=())

    @property
    def websum_names(self) -> tuple[str, ...]:
        """websum's variables this configuration was read from (see `load_settings`)."""
        return self._websum


# Each part's model by its field in Settings, in the order of `.env.example`.
PARTS: dict[str, type[SettingsPart]] = {
    name: field.annotation
    for name, field in Settings.model_fields.items()
    if isinstance(field.annotation, type) and issubclass(field.annotation, SettingsPart)
}
