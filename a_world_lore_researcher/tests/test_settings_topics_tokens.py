"""Settings, the topics file and token counting."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared import tokens
from shared.prompt_loader import load_prompt, placeholders
from world_lore_researcher import tools
from world_lore_researcher.agent import LoreResearcher
from world_lore_researcher.settings import ConfigError, Settings, load_settings
from world_lore_researcher.topics import DEFAULT_TOPICS_FILE, TopicsError, load_topics, select_topics


def test_defaults() -> None:
    settings = load_settings({})
    assert settings.researcher_llm_model == "openai/gpt-4o-mini"
    assert settings.researcher_llm_base_url == "https://openrouter.ai/api/v1"
    assert not settings.llm_configured
    assert settings.checkpoint_db == Path("data/checkpoints.sqlite3")
    assert settings.output_dir == Path("data/research")
    assert settings.researcher_unsummarized_max_tokens == 4096


def test_key_fallback_and_local_base_url() -> None:
    assert load_settings({"OPENROUTER_API_KEY": "or"}).llm_api_key == "or"
    assert load_settings({"OPENROUTER_API_KEY": "or", "RESEARCHER_LLM_API_KEY": "own"}).llm_api_key == "own"
    local = load_settings({"RESEARCHER_LLM_BASE_URL": "http://127.0.0.1:8000/v1"})
    assert local.llm_configured and local.llm_api_key == ""


def test_errors_name_the_variable_and_hide_secrets() -> None:
    with pytest.raises(ConfigError) as err:
        load_settings(
            {
                "RESEARCHER_MAX_MODEL_REQUESTS": "0",
                "MCP_WEB_SEARCH_URL": "searxng:8080",
                "RESEARCHER_LLM_API_KEY": "sk-secret",
                "RESEARCHER_LLM_TIMEOUT_SECONDS": "-1",
            }
        )
    message = str(err.value)
    assert "RESEARCHER_MAX_MODEL_REQUESTS" in message and "MCP_WEB_SEARCH_URL" in message
    assert "RESEARCHER_LLM_TIMEOUT_SECONDS" in message and "sk-secret" not in message


def test_shipped_topics() -> None:
    topics = load_topics()
    assert list(topics) == [
        "overview",
        "npcs_and_factions",
        "lore_and_history",
        "quests_and_narrative",
        "items",
    ]
    for topic in topics.values():
        text = topic.render_instructions("Elwynn Forest", "World of Warcraft")
        assert "Elwynn Forest" in text and "World of Warcraft" in text and "{" not in text
        assert topic.schema_hint and "\n" not in topic.schema_hint
    assert DEFAULT_TOPICS_FILE.parent.name == "config"


def test_a_brace_in_a_zone_name_is_inserted_as_is() -> None:
    topic = load_topics()["overview"]
    assert "The {weird} Zone" in topic.render_instructions("The {weird} Zone", "G")


def test_select_topics_keeps_file_order() -> None:
    topics = load_topics()
    assert [t.key for t in select_topics(topics, "items, overview")] == ["overview", "items"]
    assert len(select_topics(topics, "")) == 5
    with pytest.raises(TopicsError, match="unknown topic"):
        select_topics(topics, "weather")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[topics.a]\ninstructions = 'x {zone}'\n", "needs schema_hint"),
        ("[topics.a]\ninstructions = 'x {region}'\nschema_hint = 'h'\n", "unknown placeholder"),
        ("topics = 3\n", "expected"),
        ("[topics.a\n", "not valid TOML"),
    ],
)
def test_bad_topics_files(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "topics.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TopicsError, match=expected):
        load_topics(path)


def test_system_prompt_has_the_summarization_section_and_every_tool_name() -> None:
    template = load_prompt(tools.__file__, "system_prompt")
    assert "### Content Summarization" in template
    assert placeholders(template) <= set(tools.TOOL_NAMES)
    researcher = LoreResearcher(load_settings({"RESEARCHER_LLM_API_KEY": "k"}), mcp_servers=[])
    prompt = researcher.system_prompt
    assert "`fetch_url(url, context=...)`" in prompt and "summarize_for_extraction" in prompt
    assert "web_url_read" in prompt and "searxng_web_search" in prompt
    assert "Never summarize short content" in prompt


def test_pages_are_cut_at_a_line_break_within_the_budget() -> None:
    """The pipeline cuts unsummarized pages with shared.tokens.truncate (tested there)."""
    text = "\n".join(f"Line {i}: the wolves of Elwynn Forest gather near Goldshire." for i in range(200))
    kept = tokens.truncate(text, 100)
    assert tokens.count(kept) <= 100 and text.startswith(kept)
    assert kept.endswith("Goldshire.")  # ended on a line break


def test_env_example_documents_every_setting_with_its_default() -> None:
    path = Path(__file__).parents[1] / ".env.example"
    values = dict(
        line.split("=", 1)
        for line in path.read_text(encoding="utf-8").splitlines()
        if line and line[0] != "#"
    )
    assert {k.lower() for k in values} == set(Settings.model_fields)
    urls = {"mcp_web_search_url", "mcp_summarizer_url"}  # examples: they have no default
    assert load_settings(values).model_dump(exclude=urls) == load_settings({}).model_dump(exclude=urls)
