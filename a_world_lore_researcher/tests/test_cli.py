"""The command line: the no-key stop, clear configuration errors, a full run writing JSON."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FakeSummarizer, PageServer, SearchServer
from scripted_model import ScriptedResearcher

from shared import tokens
from world_lore_researcher.cli import run_cli
from world_lore_researcher.settings import Settings


@pytest.fixture(autouse=True)
def _clean(clean_env: None) -> None:
    """Every test here runs in a clean environment (conftest.clean_env)."""


def cli(*argv: str, **kwargs: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_cli(list(argv), stdout=out, stderr=err, **kwargs)  # type: ignore[arg-type]
    return code, out.getvalue(), err.getvalue()


def test_no_key_stops_at_once_saying_what_to_set(tmp_path: Path) -> None:
    code, out, err = cli("research", "Elwynn Forest")
    assert code == 2 and out == ""
    assert (
        "RESEARCHER_LLM_API_KEY" in err and "OPENROUTER_API_KEY" in err and "RESEARCHER_LLM_BASE_URL" in err
    )
    assert not (tmp_path / "data").exists()


def test_no_key_from_the_shell_is_fast() -> None:
    """As a user runs it: the console script, exit code 2, before pydantic-ai is even imported."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RESEARCHER_", "OPENROUTER_"))}
    proc = subprocess.run(  # -X importtime: every module imported, one line each, on stderr
        [sys.executable, "-X", "importtime", "-m", "world_lore_researcher", "research", "Elwynn Forest"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "RESEARCHER_LLM_API_KEY" in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("import time:")]
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in lines}
    assert "world_lore_researcher" in imported  # the measure works
    assert not imported & {"pydantic_ai", "openai", "mcp"}, "it stops before the heavy imports"


def test_a_local_base_url_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESEARCHER_LLM_BASE_URL", "http://127.0.0.1:8000/v1")
    code, _, err = cli("research", "Elwynn Forest")
    # Past the key check: the next thing missing is the MCP config's variable.
    assert code == 2 and "MCP_WEB_SEARCH_URL" in err and "mcp_config.json" in err


def test_openrouter_key_is_the_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    code, _, err = cli("research", "Elwynn Forest")
    assert code == 2 and "MCP_WEB_SEARCH_URL" in err


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("RESEARCHER_UNSUMMARIZED_MAX_TOKENS", "lots"),
        ("RESEARCHER_LLM_BASE_URL", "openrouter.ai"),
        ("MCP_SUMMARIZER_URL", "mcp-summarizer:8007"),
        ("RESEARCHER_LOG_LEVEL", "LOUD"),
    ],
)
def test_bad_values_name_the_variable(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    monkeypatch.setenv(name, value)
    code, _, err = cli("research", "Elwynn Forest")
    assert code == 2 and name in err and "invalid configuration" in err


def test_unknown_topic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESEARCHER_LLM_API_KEY", "k")
    code, _, err = cli("research", "Elwynn Forest", "--topics", "overview,weather")
    assert code == 2 and "unknown topic(s): weather" in err and "npcs_and_factions" in err


def test_topics_lists_the_shipped_topics() -> None:
    code, out, _ = cli("topics")
    assert code == 0
    assert [line.split("\t")[0] for line in out.splitlines()] == [
        "overview",
        "npcs_and_factions",
        "lore_and_history",
        "quests_and_narrative",
        "items",
    ]


def _configure(monkeypatch: pytest.MonkeyPatch, search: SearchServer, summarizer_url: str) -> None:
    monkeypatch.setenv("RESEARCHER_LLM_API_KEY", "k")
    monkeypatch.setenv("MCP_WEB_SEARCH_URL", search.url)
    monkeypatch.setenv("MCP_SUMMARIZER_URL", summarizer_url)
    monkeypatch.setenv("RESEARCHER_UNSUMMARIZED_MAX_TOKENS", "500")


def test_full_run_writes_the_research_as_json(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    pages: PageServer,
    search: SearchServer,
    fake_summarizer: FakeSummarizer,
) -> None:
    _configure(monkeypatch, search, fake_summarizer.url)
    model = ScriptedResearcher()
    seen: list[Settings] = []

    def factory(settings: Settings):  # the test hook: the configured LLM is never built
        seen.append(settings)
        return model.model()

    code, out, err = cli(
        "research",
        "Elwynn Forest",
        "--topics",
        "items,overview",
        "--out",
        str(tmp_path / "out"),
        model_factory=factory,
    )
    assert code == 0, err
    path = Path(out.strip())
    assert path == tmp_path / "out" / "world_of_warcraft__elwynn_forest.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    assert (document["zone"], document["game"]) == ("Elwynn Forest", "World of Warcraft")
    assert list(document["topics"]) == ["overview", "items"]  # file order, not argument order
    for topic in document["topics"].values():
        assert [s["url"] for s in topic["sources"]] == [pages.url("/keyword.html"), pages.url("/large.html")]
        for source in topic["sources"]:
            assert source["content"] == fake_summarizer.answers[source["url"]]
            assert source["tokens"] == tokens.count(source["content"])
            assert {"summarized", "status", "reason", "truncated", "title", "tool"} <= source.keys()
        assert topic["tokens"] == sum(s["tokens"] for s in topic["sources"])
    assert document["totals"]["sources"] == 4 and document["totals"]["summarized_sources"] == 2
    assert seen[0].llm_api_key == "k"

    progress = [line for line in err.splitlines() if line.startswith("[")]
    assert progress[0] == "[1/2] overview: researching..."
    assert progress[1].startswith("[1/2] overview: done in ") and "2 sources" in progress[1]
    assert progress[2] == "[2/2] items: researching..."
    logs = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    assert logs and all(entry["service_id"] == "world_lore_researcher" for entry in logs)
    assert {"research_step_completed", "research_accumulated"} <= {entry["event"] for entry in logs}
    fastmcp = logging.getLogger("fastmcp")  # it installs rich console handlers when imported
    assert fastmcp.handlers == [] and fastmcp.propagate

    # A second run finds everything done in the checkpoint: no model call, same research.
    calls = model.calls
    code, out2, err2 = cli("research", "Elwynn Forest", "--topics", "overview", model_factory=factory)
    assert code == 0 and model.calls == calls
    assert "[1/1] overview: done in an earlier run (checkpoint)" in err2
    assert Path(out2.strip()).parent == tmp_path / "data" / "research"  # the default output dir


def test_a_failed_step_exits_1_and_a_rerun_resumes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, search: SearchServer, fake_summarizer: FakeSummarizer
) -> None:
    _configure(monkeypatch, search, fake_summarizer.url)
    failing = ScriptedResearcher(fail_on_run=2)
    code, out, err = cli(
        "research", "Elwynn Forest", "--topics", "overview,items", model_factory=lambda _: failing.model()
    )
    assert code == 1 and out == ""
    assert "[2/2] items: FAILED: RuntimeError" in err and "rerun the same command to resume" in err

    rerun = ScriptedResearcher()
    code, out, err = cli(
        "research", "Elwynn Forest", "--topics", "overview,items", model_factory=lambda _: rerun.model()
    )
    assert code == 0 and rerun.runs == 1
    assert "[1/2] overview: done in an earlier run" in err

    again = ScriptedResearcher()
    code, _, _ = cli(
        "research",
        "Elwynn Forest",
        "--topics",
        "overview",
        "--restart",
        model_factory=lambda _: again.model(),
    )
    assert code == 0 and again.runs == 1  # --restart ignores the checkpoint
