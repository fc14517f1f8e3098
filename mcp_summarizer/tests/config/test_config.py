"""Settings: documented defaults, bad values named in UPPER_CASE, backend resolution, hosts."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest
from pydantic import SecretStr, ValidationError

from mcp_summarizer import config
from mcp_summarizer.assembly.from_settings import (
    budget,
    concurrency_options,
    engine_options,
    llm_endpoint,
    llm_options,
)
from mcp_summarizer.clients import profiles
from mcp_summarizer.config import (
    DEFAULT_BASE_URL,
    PARTS,
    WEBSUM_ALIASES,
    Environment,
    Settings,
    flat_values,
    load_settings,
)
from mcp_summarizer.errors import ConfigError
from mcp_summarizer.summarize import options

ENV_NAMES = [name.upper() for name in [*Environment.model_fields, *WEBSUM_ALIASES]]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No setting from the developer's shell may leak into these tests."""
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)


def test_each_variable_is_one_part_s() -> None:
    """The settings are nested by part, and the reader's variables are the parts' fields, each
    in one part, in the order of .env.example's sections (the order errors are listed in)."""
    names = [name for part in PARTS.values() for name in part.model_fields]
    assert names == list(Environment.model_fields) and len(set(names)) == len(names)
    s = load_settings({"LLM_MODEL": "vendor/m", "FETCH_MAX_BYTES": "2048", "CACHE": "off"})
    assert (s.llm.llm_model, s.fetch.fetch_max_bytes, s.result_cache.cache) == ("vendor/m", 2048, "off")
    assert flat_values(s)["llm_model"] == "vendor/m" and len(flat_values(s)) == len(names)


def test_a_part_knows_which_of_its_variables_were_set() -> None:
    """A default that shrinks (FETCH_MAX_TOKENS) and a ceiling that rises (LLM_CONCURRENCY_MAX)
    go by what was set: each part keeps that for its own variables."""
    s = load_settings({"FETCH_MAX_TOKENS": "1000", "LLM_CONCURRENCY_MAX": "9"})
    assert s.fetch.model_fields_set == {"fetch_max_tokens"}
    assert s.llm.model_fields_set == {"llm_concurrency_max"}
    assert s.summarization.model_fields_set == set()


def test_a_part_s_name_sets_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Variables named like the parts (LLM, TRANSPORT, FETCH...) are nobody's settings: read from
    the process environment, a .env file or a mapping, they change nothing and break nothing."""
    junk = {"LLM": '{"llm_model": "x"}', "TRANSPORT": "junk", "FETCH": "{}", "RESULT_CACHE": "off"}
    for name, value in junk.items():
        monkeypatch.setenv(name, value)
    (tmp_path / ".env").write_text("".join(f"{k}='{v}'\n" for k, v in junk.items()), encoding="utf-8")
    for s in (load_settings(), load_settings(env_file=tmp_path / ".env"), load_settings(junk)):
        assert s == load_settings({})


def test_the_choices_are_the_capabilities_own() -> None:
    """config spells the values of ON_LLM_FAILURE, ON_LOW_FIDELITY and CLIENT_PROFILE itself
    (it imports no capability): the same values the capabilities take, no fewer."""
    assert get_args(config.FailurePolicy) == get_args(options.FailurePolicy)
    assert get_args(config.LowFidelityPolicy) == get_args(options.LowFidelityPolicy)
    assert get_args(config.Profile) == get_args(profiles.Profile)


# -- defaults --------------------------------------------------------------------------------


def test_defaults_match_the_documented_ones() -> None:
    s = load_settings({})
    assert s.transport.mcp_summarizer_host == "127.0.0.1"
    assert s.transport.mcp_summarizer_port == 8007
    assert s.llm.llm_model == "openai/gpt-4o-mini"
    assert s.llm.openrouter_base_url == "https://openrouter.ai/api/v1" == DEFAULT_BASE_URL
    assert s.summarization.default_chunk_size_tokens == 8000
    assert s.summarization.default_chunk_overlap_tokens == 500
    assert s.summarization.default_max_output_tokens == 5000
    assert s.llm.max_concurrent_llm_calls == 5
    assert (concurrency_options(s).mode, concurrency_options(s).limit, concurrency_options(s).maximum) == (
        "adaptive",
        5,
        64,
    )
    assert s.llm.llm_context_tokens == 128_000
    assert s.llm.llm_max_attempts == 3
    assert s.summarization.on_llm_failure == "extractive"
    assert s.llm.summarizer_backend == "auto"
    assert s.process.log_level == "INFO"
    assert s.llm.llm_tokenizer_margin == 0.25
    # T with 1.25 x (32 + 128000 / 8 + T) + T <= 128000: the final merge reads what it writes,
    # counted by a tokenizer that makes a quarter more tokens than cl100k.
    assert budget(s).max_output == 47_982
    cl100k = load_settings({"LLM_TOKENIZER_MARGIN": "0"})
    assert budget(cl100k).max_output == 55_984  # (128000 - 32 - 16000) / 2
    assert s.llm.openrouter_api_key.get_secret_value() == ""


def test_values_are_parsed_to_their_types() -> None:
    s = load_settings(
        {
            "MCP_SUMMARIZER_PORT": "9001",
            "LLM_TIMEOUT_SECONDS": "2.5",
            "MAX_CONCURRENT_LLM_CALLS": "12",
            "ON_LLM_FAILURE": "truncate",
            "LLM_MODEL": "anthropic/claude-3-haiku",
        }
    )
    assert s.transport.mcp_summarizer_port == 9001
    assert s.llm.llm_timeout_seconds == 2.5
    assert s.llm.max_concurrent_llm_calls == 12
    assert s.summarization.on_llm_failure == "truncate"
    assert s.llm.llm_model == "anthropic/claude-3-haiku"


def test_the_adaptive_ceiling_rises_to_a_larger_start_unless_it_was_set() -> None:
    """MAX_CONCURRENT_LLM_CALLS=100 is where the adaptive limit starts: the default ceiling (64)
    does not stop the service; a ceiling someone set under the start does, naming both."""
    limit = concurrency_options(load_settings({"MAX_CONCURRENT_LLM_CALLS": "100"}))
    assert (limit.mode, limit.limit, limit.maximum) == ("adaptive", 100, 100)
    fixed = concurrency_options(
        load_settings({"MAX_CONCURRENT_LLM_CALLS": "100", "LLM_CONCURRENCY": "fixed"})
    )
    assert (fixed.mode, fixed.limit) == ("fixed", 100)
    with pytest.raises(ConfigError, match="LLM_CONCURRENCY_MAX=4 is under MAX_CONCURRENT_LLM_CALLS=5"):
        load_settings({"LLM_CONCURRENCY_MAX": "4"})


def test_names_are_case_insensitive_and_unknown_names_ignored() -> None:
    s = load_settings({"llm_model": "m1", "Max_Concurrent_LLM_Calls": "7", "UNRELATED_VARIABLE": "x"})
    assert s.llm.llm_model == "m1"
    assert s.llm.max_concurrent_llm_calls == 7


def test_settings_are_frozen() -> None:
    s = load_settings({})
    with pytest.raises(ValidationError):
        s.llm.llm_model = "other"


# -- bad values ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "name"),
    [
        ({"MAX_CONCURRENT_LLM_CALLS": "zero"}, "MAX_CONCURRENT_LLM_CALLS"),
        ({"MAX_CONCURRENT_LLM_CALLS": "0"}, "MAX_CONCURRENT_LLM_CALLS"),
        ({"MAX_CONCURRENT_LLM_CALLS": "1001"}, "MAX_CONCURRENT_LLM_CALLS"),
        ({"MCP_SUMMARIZER_PORT": "70000"}, "MCP_SUMMARIZER_PORT"),
        ({"MCP_SUMMARIZER_PORT": "0"}, "MCP_SUMMARIZER_PORT"),
        ({"MCP_SUMMARIZER_PORT": "http"}, "MCP_SUMMARIZER_PORT"),
        ({"SUMMARIZER_BACKEND": "gpu"}, "SUMMARIZER_BACKEND"),
        ({"ON_LLM_FAILURE": "drop"}, "ON_LLM_FAILURE"),
        ({"LLM_MAX_ATTEMPTS": "0"}, "LLM_MAX_ATTEMPTS"),
        ({"LLM_MAX_ATTEMPTS": "11"}, "LLM_MAX_ATTEMPTS"),
        ({"LLM_TIMEOUT_SECONDS": "0"}, "LLM_TIMEOUT_SECONDS"),
        ({"LLM_TEMPERATURE": "3"}, "LLM_TEMPERATURE"),
        ({"LLM_RETRY_BASE_SECONDS": "-1"}, "LLM_RETRY_BASE_SECONDS"),
        ({"LLM_MODEL": ""}, "LLM_MODEL"),
        ({"OPENROUTER_BASE_URL": "ftp://example.com/v1"}, "OPENROUTER_BASE_URL"),
        ({"LLM_CONTEXT_TOKENS": "1000"}, "LLM_CONTEXT_TOKENS"),
        ({"DEFAULT_CHUNK_SIZE_TOKENS": "100"}, "DEFAULT_CHUNK_SIZE_TOKENS"),
        ({"MAX_INPUT_TOKENS": "0"}, "MAX_INPUT_TOKENS"),
        ({"LOG_LEVEL": "VERBOSE"}, "LOG_LEVEL"),
        # Cross-field rules: overlap over a quarter of the chunk, output over the ceiling.
        ({"DEFAULT_CHUNK_OVERLAP_TOKENS": "2001"}, "DEFAULT_CHUNK_OVERLAP_TOKENS"),
        (
            {"DEFAULT_CHUNK_SIZE_TOKENS": "1000", "DEFAULT_CHUNK_OVERLAP_TOKENS": "300"},
            "DEFAULT_CHUNK_OVERLAP_TOKENS",
        ),
        ({"DEFAULT_MAX_OUTPUT_TOKENS": "47983"}, "LLM_TOKENIZER_MARGIN=0.25"),
        ({"LLM_TOKENIZER_MARGIN": "0", "DEFAULT_MAX_OUTPUT_TOKENS": "55985"}, "DEFAULT_MAX_OUTPUT_TOKENS"),
        ({"LLM_TOKENIZER_MARGIN": "-0.1"}, "LLM_TOKENIZER_MARGIN"),
        ({"LLM_TOKENIZER_MARGIN": "3.5"}, "LLM_TOKENIZER_MARGIN"),
        ({"LLM_CONTEXT_TOKENS": "16000", "DEFAULT_MAX_OUTPUT_TOKENS": "7000"}, "DEFAULT_MAX_OUTPUT_TOKENS"),
        ({"LLM_CONTEXT_TOKENS": "8192", "FETCH_MAX_TOKENS": "4096"}, "FETCH_MAX_TOKENS"),  # 4096 > 8192 / 4
    ],
)
def test_bad_value_raises_config_error_naming_the_variable(env: dict[str, str], name: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(env)
    assert isinstance(info.value, ValueError)
    assert name in str(info.value)


def test_budget_defaults_shrink_to_what_a_small_model_can_produce() -> None:
    small = budget(load_settings({"LLM_CONTEXT_TOKENS": "8192"}))
    assert small.default_output == small.fetch_output == small.max_output == 3054
    usual = budget(load_settings({}))
    assert (usual.default_output, usual.fetch_output) == (5000, 4096)
    chosen = budget(load_settings({"LLM_CONTEXT_TOKENS": "8192", "FETCH_MAX_TOKENS": "1000"}))
    assert chosen.fetch_output == 1000


def test_bad_value_is_quoted_in_the_message() -> None:
    with pytest.raises(ConfigError, match=r"MAX_CONCURRENT_LLM_CALLS: .*\(got 'zero'\)"):
        load_settings({"MAX_CONCURRENT_LLM_CALLS": "zero"})


def test_every_bad_variable_is_named() -> None:
    with pytest.raises(ConfigError) as info:
        load_settings({"MCP_SUMMARIZER_PORT": "70000", "LLM_MAX_ATTEMPTS": "0", "LLM_MODEL": "fine"})
    message = str(info.value)
    assert "MCP_SUMMARIZER_PORT" in message
    assert "LLM_MAX_ATTEMPTS" in message
    assert "LLM_MODEL" not in message


@pytest.mark.parametrize(
    "env",
    [
        {"DEFAULT_CHUNK_OVERLAP_TOKENS": "2000"},  # exactly a quarter of 8000
        {"DEFAULT_MAX_OUTPUT_TOKENS": "47982"},  # exactly the ceiling at 128000
        {"LLM_TOKENIZER_MARGIN": "0", "DEFAULT_MAX_OUTPUT_TOKENS": "55984"},  # ... for a cl100k server
        {"LLM_CONTEXT_TOKENS": "16384", "DEFAULT_MAX_OUTPUT_TOKENS": "5000"},  # fits a 16k model
        {"LLM_CONTEXT_TOKENS": "20000"},  # 5000 == 20000 / 4
        {"MCP_SUMMARIZER_PORT": "65535", "MAX_CONCURRENT_LLM_CALLS": "1", "LLM_MAX_ATTEMPTS": "10"},
    ],
)
def test_boundary_values_are_accepted(env: dict[str, str]) -> None:
    load_settings(env)


def test_config_error_does_not_echo_the_api_key() -> None:
    with pytest.raises(ConfigError) as info:
        load_settings({"OPENROUTER_API_KEY": "sk-or-very-secret", "MCP_SUMMARIZER_PORT": "x"})
    assert "sk-or-very-secret" not in str(info.value)


# -- backend resolution ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "backend"),
    [
        ({}, "extractive"),
        ({"OPENROUTER_BASE_URL": DEFAULT_BASE_URL + "/"}, "extractive"),
        ({"SUMMARIZER_BACKEND": "auto"}, "extractive"),
        ({"OPENROUTER_API_KEY": "sk-or-test"}, "openai"),
        ({"OPENROUTER_BASE_URL": "http://127.0.0.1:9/v1"}, "openai"),
        ({"OPENROUTER_BASE_URL": "http://localhost:11434/v1"}, "openai"),
        ({"SUMMARIZER_BACKEND": "openai", "OPENROUTER_API_KEY": "sk-or-test"}, "openai"),
        ({"SUMMARIZER_BACKEND": "extractive", "OPENROUTER_API_KEY": "sk-or-test"}, "extractive"),
    ],
)
def test_backend_resolution(env: dict[str, str], backend: str) -> None:
    s = load_settings(env)
    assert s.llm.backend == backend
    assert s.llm.configured == (
        "OPENROUTER_API_KEY" in env or "127.0.0.1" in str(env) or "localhost" in str(env)
    )


def test_openai_backend_without_any_llm_settings_is_refused() -> None:
    with pytest.raises(ConfigError, match="SUMMARIZER_BACKEND=openai needs OPENROUTER_API_KEY"):
        load_settings({"SUMMARIZER_BACKEND": "openai"})


# -- allowed hosts ---------------------------------------------------------------------------


def test_default_allowed_hosts_accept_any_port() -> None:
    assert load_settings({}).transport.allowed_hosts == [
        "localhost",
        "localhost:*",
        "127.0.0.1",
        "127.0.0.1:*",
        "mcp-summarizer",
        "mcp-summarizer:*",
    ]


def test_allowed_hosts_are_trimmed_and_blanks_dropped() -> None:
    s = load_settings({"MCP_SUMMARIZER_ALLOWED_HOSTS": " example.com , ,svc,"})
    assert s.transport.allowed_hosts == ["example.com", "example.com:*", "svc", "svc:*"]


@pytest.mark.parametrize("value", ["*", "localhost, *", " * "])
def test_star_turns_the_host_check_off(value: str) -> None:
    assert load_settings({"MCP_SUMMARIZER_ALLOWED_HOSTS": value}).transport.allowed_hosts is None


# -- secrets ---------------------------------------------------------------------------------


def test_api_key_is_a_secret_not_shown_in_repr() -> None:
    s = load_settings({"OPENROUTER_API_KEY": "sk-or-very-secret"})
    assert isinstance(s.llm.openrouter_api_key, SecretStr)
    assert s.llm.openrouter_api_key.get_secret_value() == "sk-or-very-secret"
    assert "sk-or-very-secret" not in repr(s)
    assert "sk-or-very-secret" not in str(s)
    assert "sk-or-very-secret" not in repr(s.model_dump())


def test_the_llm_options_keep_the_api_key_out_of_their_repr() -> None:
    options = llm_options(load_settings({"OPENROUTER_API_KEY": "sk-or-very-secret"}))
    assert options.api_key == "sk-or-very-secret"
    assert "sk-or-very-secret" not in repr(options)
    assert "sk-or-very-secret" not in str(options)


@pytest.mark.parametrize(
    ("name", "value", "shown"),
    [
        ("OPENROUTER_API_KEY", "${OPENROUTER_API_KEY}", "${OPENROUTER_API_KEY}"),
        ("OPENROUTER_API_KEY", "Bearer ${OPENROUTER_API_KEY", "${OPENROUTER_API_KEY"),
        ("OPENROUTER_BASE_URL", "${OPENROUTER_BASE_URL}", "${OPENROUTER_BASE_URL}"),
        ("OPENROUTER_BASE_URL", "http://${LLM_HOST}:8000/v1", "${LLM_HOST}"),
        ("OPENROUTER_BASE_URL", "https://proxy-user:pw-4f9a71@${LLM_HOST}/v1", "${LLM_HOST}"),
    ],
)
@pytest.mark.parametrize("source", ["mapping", "process"])
def test_an_unexpanded_variable_is_refused_at_start_up_naming_it(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, shown: str, source: str
) -> None:
    # A harness passed "${OPENROUTER_API_KEY}" with the variable unset: the literal placeholder
    # would otherwise be sent as the key (a 401 on every request) or fail as a bad URL.
    with pytest.raises(ConfigError) as info:
        if source == "mapping":
            load_settings({name: value})
        else:
            monkeypatch.setenv(name, value)
            load_settings()
    message = str(info.value)
    assert f"{name} looks like an unexpanded variable {shown}" in message
    assert "pw-4f9a71" not in message, "credentials in the URL are not quoted back"


def test_a_dollar_sign_alone_is_not_a_placeholder() -> None:
    s = load_settings({"OPENROUTER_API_KEY": "sk-or-a$b", "OPENROUTER_BASE_URL": "http://h/v1?x=$y"})
    assert s.llm.openrouter_api_key.get_secret_value() == "sk-or-a$b"


# -- the process environment -----------------------------------------------------------------


def test_load_settings_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_MODEL", "anthropic/claude-3-haiku")
    monkeypatch.setenv("MCP_SUMMARIZER_PORT", "9123")
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-from-env")
    s = load_settings()
    assert s.llm.llm_model == "anthropic/claude-3-haiku"
    assert s.transport.mcp_summarizer_port == 9123
    assert s.llm.openrouter_api_key.get_secret_value() == "sk-or-from-env"
    assert s.llm.backend == "openai"


def test_bad_process_environment_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_CONCURRENT_LLM_CALLS", "zero")
    with pytest.raises(ConfigError, match="MAX_CONCURRENT_LLM_CALLS"):
        load_settings()


def test_explicit_mapping_is_not_mixed_with_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_MODEL", "leaked/from-process-env")
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-leaked")
    # An explicit mapping is the whole configuration: nothing leaks in from the process.
    s = load_settings({"MCP_SUMMARIZER_PORT": "9001"})
    assert s.transport.mcp_summarizer_port == 9001
    assert s.llm.llm_model == "openai/gpt-4o-mini"
    assert s.llm.backend == "extractive"
    assert isinstance(s, Settings)


def test_bad_process_variable_does_not_break_an_explicit_mapping(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_CONCURRENT_LLM_CALLS", "zero")
    assert load_settings({}).llm.max_concurrent_llm_calls == 5


# -- the small objects each part takes ------------------------------------------------------


def test_each_part_gets_its_own_settings() -> None:
    s = load_settings(
        {
            "OPENROUTER_BASE_URL": "http://llm.internal:8000/v1",
            "OPENROUTER_API_KEY": "sk-x",
            "LLM_MODEL": "vendor/m",
            "LLM_TIMEOUT_SECONDS": "7",
            "LLM_MAX_ATTEMPTS": "4",
            "LLM_RETRY_BASE_SECONDS": "0.5",
            "LLM_RETRY_MAX_SECONDS": "9",
            "LLM_TEMPERATURE": "0.3",
            "MAX_CONCURRENT_LLM_CALLS": "6",
            "LLM_CONCURRENCY": "adaptive",
            "LLM_CONCURRENCY_MAX": "11",
            "LLM_CONCURRENCY_SCOPE": "cluster",
            "REDIS_URL": "redis://127.0.0.1:6390/0",
            "LLM_LEASE_SECONDS": "12",
            "MAX_INFLIGHT_INPUT_TOKENS": "3000000",
            "ADMISSION_WAIT_SECONDS": "2.5",
            "ON_LLM_FAILURE": "truncate",
            "FIDELITY_REPAIR": "true",
        }
    )
    llm = llm_options(s)
    assert (llm.base_url, llm.api_key, llm.model) == ("http://llm.internal:8000/v1", "sk-x", "vendor/m")
    assert (llm.timeout_seconds, llm.max_attempts, llm.retry_base_seconds, llm.retry_max_seconds) == (
        7.0,
        4,
        0.5,
        9.0,
    )
    assert llm.temperature == 0.3
    limit = concurrency_options(s)
    assert (limit.limit, limit.mode, limit.maximum) == (6, "adaptive", 11)
    assert (limit.scope, limit.redis_url, limit.lease_seconds) == (
        "cluster",
        "redis://127.0.0.1:6390/0",
        12.0,
    )
    engine = engine_options(s)
    assert engine.budget == budget(s)
    assert (engine.max_inflight_input_tokens, engine.admission_wait_seconds) == (3_000_000, 2.5)
    assert (engine.on_failure, engine.fidelity_repair) == ("truncate", True)


# -- websum's names ------------------------------------------------------------------------------


def test_websums_settings_configure_the_service_as_its_readme_writes_them() -> None:
    """BASE_URL, API_KEY, MAX_TOKENS and MAX_CONTEXT_LENGTH (websum's README, an opencode
    config copied from it) are this project's OPENROUTER_BASE_URL, OPENROUTER_API_KEY,
    FETCH_MAX_TOKENS and LLM_CONTEXT_TOKENS; BASE_URL is where /v1/chat/completions is."""
    s = load_settings(
        {
            "BASE_URL": "http://10.0.0.7:8080",
            "API_KEY": "sk-local",
            "MAX_TOKENS": "2048",
            "MAX_CONTEXT_LENGTH": "32768",
        }
    )
    assert s.llm.openrouter_base_url == "http://10.0.0.7:8080/v1" and s.llm.backend == "openai"
    assert s.llm.openrouter_api_key.get_secret_value() == "sk-local"
    assert (s.fetch.fetch_max_tokens, s.llm.llm_context_tokens) == (2048, 32768)
    assert budget(s).fetch_output == 2048, "a value someone set, not a default to shrink"
    assert s.websum_names == ("API_KEY", "BASE_URL", "MAX_CONTEXT_LENGTH", "MAX_TOKENS")
    assert llm_endpoint(s) == "http://10.0.0.7:8080/v1"
    assert load_settings({"BASE_URL": "http://h:8080/v1/"}).llm.openrouter_base_url == "http://h:8080/v1"


def test_this_projects_names_win_over_websums() -> None:
    s = load_settings(
        {
            "BASE_URL": "http://websum:8080",
            "OPENROUTER_BASE_URL": "http://mine:8000/v1",
            "MAX_TOKENS": "2048",
            "FETCH_MAX_TOKENS": "1000",
        }
    )
    assert s.llm.openrouter_base_url == "http://mine:8000/v1" and s.fetch.fetch_max_tokens == 1000
    assert s.websum_names == ()


def test_an_api_key_is_never_sent_to_the_default_endpoint_under_websums_name() -> None:
    """API_KEY is a common name: another program's key left in the environment must not
    switch the service to OpenRouter with it.  It counts with an endpoint someone chose."""
    alone = load_settings({"API_KEY": "sk-some-other-service"})
    assert alone.llm.openrouter_api_key.get_secret_value() == "" and alone.llm.backend == "extractive"
    chosen = load_settings({"API_KEY": "sk-x", "OPENROUTER_BASE_URL": "http://vllm:8000/v1"})
    assert chosen.llm.openrouter_api_key.get_secret_value() == "sk-x"


def test_a_bad_value_under_websums_name_is_named_as_it_was_set() -> None:
    with pytest.raises(ConfigError, match=r"MAX_CONTEXT_LENGTH \(websum's LLM_CONTEXT_TOKENS\)"):
        load_settings({"MAX_CONTEXT_LENGTH": "big"})
    with pytest.raises(ConfigError, match=r"BASE_URL \(websum's OPENROUTER_BASE_URL\)"):
        load_settings({"BASE_URL": "ftp://nowhere"})


def test_websums_names_are_read_from_the_process_environment_and_dotenv(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / ".env").write_text("BASE_URL=http://from-dotenv:8080\nMAX_TOKENS=1500\n", encoding="utf-8")
    monkeypatch.setenv("MAX_TOKENS", "1200")  # the process environment wins, as for any setting
    s = load_settings(env_file=tmp_path / ".env")
    assert s.llm.openrouter_base_url == "http://from-dotenv:8080/v1" and s.fetch.fetch_max_tokens == 1200
