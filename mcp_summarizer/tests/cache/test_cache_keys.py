"""Everything that can change an answer is in its cache key, at the result and the map level:
the endpoint (without its credentials), model, backend, chunk size and overlap, context size,
temperature, failure policies, prompt files and version.  Through the real server: two
endpoints serving the same model name on one CACHE_DIR never share an answer."""

from __future__ import annotations

import tempfile

import pytest

from mcp_summarizer.assembly.from_settings import cache_keys
from mcp_summarizer.cache.key import CacheKeys, endpoint
from mcp_summarizer.config import load_settings
from tests.cache.test_result_cache import summarize
from tests.support.fake_llm import FakeLLM
from tests.support.servers import start_server, stop_server

BASE = {
    "OPENROUTER_BASE_URL": "http://127.0.0.1:9001/v1",
    "LLM_MODEL": "same/model",
    "DEFAULT_CHUNK_SIZE_TOKENS": "2000",
    "DEFAULT_CHUNK_OVERLAP_TOKENS": "100",
    "LLM_CONTEXT_TOKENS": "32000",
    "ON_LLM_FAILURE": "extractive",
    "FIDELITY_REPAIR": "false",
    "LLM_TEMPERATURE": "0.1",
}
CHANGES = [
    ("OPENROUTER_BASE_URL", "http://127.0.0.1:9002/v1"),
    ("OPENROUTER_BASE_URL", "http://127.0.0.1:9001/v2"),
    ("LLM_MODEL", "other/model"),
    ("DEFAULT_CHUNK_SIZE_TOKENS", "3000"),
    ("DEFAULT_CHUNK_OVERLAP_TOKENS", "200"),
    ("LLM_CONTEXT_TOKENS", "64000"),
    ("ON_LLM_FAILURE", "original"),
    ("FIDELITY_REPAIR", "true"),
    ("LLM_TEMPERATURE", "0.7"),
    ("SUMMARIZER_BACKEND", "extractive"),
]


def keys(**env: str) -> CacheKeys:
    settings = load_settings({**BASE, **env})
    model = settings.llm.llm_model if settings.llm.backend == "openai" else "extractive"
    return cache_keys(settings, model=model)


def both(k: CacheKeys) -> tuple[str, str]:
    return k.result("summarize", "text", budget=300, focus=""), k.map("system", "chunk", 500)


@pytest.mark.parametrize(("name", "value"), CHANGES)
def test_each_setting_that_decides_an_answer_changes_both_keys(name: str, value: str) -> None:
    result, map_ = both(keys())
    changed_result, changed_map = both(keys(**{name: value}))
    assert changed_result != result, f"{name} is not in the result key"
    assert changed_map != map_, f"{name} is not in the map key"


def test_prompts_and_version_change_both_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    result, map_ = both(keys())
    monkeypatch.setattr("mcp_summarizer.cache.key.prompt_version", lambda: "edited")
    assert both(keys()) != (result, map_) and both(keys())[0] != result and both(keys())[1] != map_
    monkeypatch.undo()
    monkeypatch.setattr("mcp_summarizer.cache.key.__version__", "9.9.9")
    assert both(keys())[0] != result and both(keys())[1] != map_


def test_the_request_and_the_content_change_the_key() -> None:
    k = keys()
    base = k.result("summarize", "text", budget=300, focus="")
    assert base == k.result("summarize", "text", budget=300, focus="")
    assert base != k.result("summarize", "text!", budget=300, focus="")
    assert base != k.result("summarize", "text", budget=301, focus="")
    assert base != k.result("summarize_for_extraction", "text", budget=300, focus="")
    assert k.map("s", "c", 500) != k.map("s", "c", 501) != k.map("s", "c!", 501)


def test_credentials_and_spelling_of_the_endpoint_do_not_count() -> None:
    """The key says which server answers, not who asked: a password in the URL is left out
    (it is never hashed into a key kept on disk), and so are case and a trailing slash."""
    assert endpoint("HTTP://user:secret@Example.COM:80/api/v1/") == "http://example.com/api/v1"
    assert endpoint("https://example.com:8443/v1?x=1") == "https://example.com:8443/v1?x=1"
    assert both(keys(OPENROUTER_BASE_URL="http://u:p@127.0.0.1:9001/v1/")) == both(keys())


async def test_another_endpoint_with_the_same_model_and_cache_dir_misses() -> None:
    """Issue 21, item 4: an instance pointed at another endpoint, with the same LLM_MODEL and
    CACHE_DIR, served the first endpoint's answer with cached: true.  Now it asks its own
    endpoint, for every chunk too (no map summary is shared either)."""
    folder = tempfile.mkdtemp(prefix="summarizer-cache-")
    common = {"CACHE": "on", "CACHE_DIR": folder, "LLM_MODEL": "same/model", "LLM_RETRY_BASE_SECONDS": "0"}
    with FakeLLM() as first, FakeLLM() as second:
        a = start_server({**common, "OPENROUTER_BASE_URL": first.base_url})
        try:
            _, facts = await summarize(a)
            assert "cached" not in facts and first.calls > 1
            _, facts = await summarize(a)
            assert facts.get("cached") is True  # the cache works: the same setup hits
        finally:
            stop_server(a)
        b = start_server({**common, "OPENROUTER_BASE_URL": second.base_url})
        try:
            _, facts = await summarize(b)
            assert "cached" not in facts, "another endpoint's answer was served"
            assert second.calls == first.calls, "another endpoint's map summaries were reused"
            (done,) = b.wait_for_event("summarization_complete", 1)
            assert done["cached_map_calls"] == 0
        finally:
            stop_server(b)
