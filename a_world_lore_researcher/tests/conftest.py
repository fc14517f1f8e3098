"""Local stand-ins for everything the researcher talks to, all on 127.0.0.1.

- `PageServer`: stdlib http.server in a thread, serving real HTML (the Debian python docs when
  installed, generated pages otherwise) and one large page (> 20k tokens).
- `SearchServer`: an MCP server (mcp's `MCPServer`, streamable HTTP, in a thread) with
  mcp-searxng's tool names, returning canned results that point at the page server.
- `FakeSummarizer`: an MCP test double of the summarizer with the `fetch_url` contract
  (header lines, a blank line, the content), switchable to failing or degraded answers.
- The real summarizer: `mcp-summarizer` as a subprocess, its LLM the FakeLLM of
  ../mcp_summarizer/tests/support/fake_llm.py (imported by path, not copied: one test LLM to maintain).

Nothing but loopback may be contacted: `_loopback_only` fails any other connection.
"""

from __future__ import annotations

import _socket  # socket.socket's methods are _socket.socket's: the guards below replace them
import asyncio
import html
import importlib.util
import ipaddress
import logging
import os
import re
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any, Self

import httpx
import pytest
import uvicorn
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from shared import tokens
from shared.testing import ServiceProcess, free_port, scrubbed_environ, start_service
from world_lore_researcher.mcp_config import MCPServerSpec
from world_lore_researcher.settings import Settings, load_settings

sys.path.insert(0, str(Path(__file__).parent))  # tests/ is not a package: make helpers importable

DOCS = Path("/usr/share/doc/python3.11/html/library")
FAKE_LLM_PATH = Path(__file__).resolve().parents[2] / "mcp_summarizer" / "tests" / "support" / "fake_llm.py"


# --------------------------------------------------------------------------------------------
# Network guard
# --------------------------------------------------------------------------------------------

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _check(address: Any) -> None:
    if isinstance(address, tuple) and address:
        host = address[0]
        try:
            loopback = ipaddress.ip_address(host.split("%")[0]).is_loopback
        except ValueError:
            loopback = host == "localhost"
        if not loopback:
            raise ConnectionRefusedError(f"test network guard: only loopback may be contacted, not {host!r}")


def _guarded_connect(self: _socket.socket, address: Any) -> None:
    _check(address)
    return _real_connect(self, address)


def _guarded_connect_ex(self: _socket.socket, address: Any) -> int:
    _check(address)
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True, scope="session")
def _loopback_only() -> Iterator[None]:
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
    yield
    socket.socket.connect = _real_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _real_connect_ex  # type: ignore[method-assign]


def closed_port_url() -> str:
    """An MCP URL nobody listens on (connection refused)."""
    return f"http://127.0.0.1:{free_port()}/mcp"


# --------------------------------------------------------------------------------------------
# Pages
# --------------------------------------------------------------------------------------------


def html_to_text(page: str) -> str:
    """A crude HTML -> text for the test doubles (the real summarizer has its own converter)."""
    page = re.sub(r"(?is)<(script|style|head)\b.*?</\1>", "", page)
    page = re.sub(r"(?i)<br\s*/?>|</(p|div|h[1-6]|li|pre|tr|section)>", "\n", page)
    text = html.unescape(re.sub(r"<[^>]+>", " ", page))
    lines = (" ".join(line.split()) for line in text.splitlines())
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _body(page: str) -> str:
    match = re.search(r"(?is)<body[^>]*>(.*)</body>", page)
    return match.group(1) if match else page


def _generated(title: str, paragraphs: int) -> str:
    parts = [
        f"<h2>{title} part {i}</h2><p>"
        + " ".join(
            f"In {title} the scouts of section {i} counted {j} wolves near Goldshire." for j in range(25)
        )
        + "</p>"
        for i in range(paragraphs)
    ]
    return f"<html><head><title>{title}</title></head><body><h1>{title}</h1>{''.join(parts)}</body></html>"


def build_pages() -> dict[str, tuple[str, str]]:
    """path -> (title, html): two small real pages and one large one (> 20k tokens)."""
    if (DOCS / "keyword.html").is_file():
        small = {
            name: (DOCS / name).read_text(encoding="utf-8") for name in ("keyword.html", "textwrap.html")
        }
        big_parts = [
            _body((DOCS / n).read_text(encoding="utf-8"))
            for n in ("json.html", "string.html", "sqlite3.html")
        ]
    else:  # no Debian docs here: generated pages of similar sizes
        small = {"keyword.html": _generated("Keywords", 2), "textwrap.html": _generated("Text wrapping", 12)}
        big_parts = [_body(_generated(f"Volume {i}", 120)) for i in range(3)]
    large = "<html><head><title>The large page</title></head><body>" + "\n".join(big_parts) + "</body></html>"
    pages = {}
    for name, page in {**small, "large.html": large}.items():
        match = re.search(r"(?is)<title>(.*?)</title>", page)
        pages[f"/{name}"] = (html.unescape(match.group(1)).strip() if match else name, page)
    return pages


class PageServer:
    """Serves `pages` over HTTP on 127.0.0.1 from a thread; counts requests per path."""

    def __init__(self, pages: dict[str, tuple[str, str]]) -> None:
        self.pages = pages
        self.hits: dict[str, int] = {}
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                owner.hits[path] = owner.hits.get(path, 0) + 1
                if path not in owner.pages:
                    self.send_error(404)
                    return
                data = owner.pages[path][1].encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def text(self, path: str) -> str:
        return html_to_text(self.pages[path][1])

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="session")
def pages() -> Iterator[PageServer]:
    server = PageServer(build_pages())
    yield server
    server.close()


# --------------------------------------------------------------------------------------------
# MCP servers in a thread
# --------------------------------------------------------------------------------------------


class ThreadedApp:
    """An ASGI app served by uvicorn from a daemon thread with its own event loop."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.port = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> Self:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self.app, log_level="warning", access_log=False, timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        server = self._server

        def run() -> None:
            try:
                asyncio.run(server.serve(sockets=[sock]))
            finally:
                sock.close()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("test MCP server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is None or self._thread is None:
            return
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._server = self._thread = None


def _mcp_app(server: MCPServer) -> Any:
    return server.streamable_http_app(stateless_http=True, host="127.0.0.1")


class SearchServer(ThreadedApp):
    """mcp-searxng's two tools; `results` are (title, url, description) triples."""

    def __init__(self, results: list[tuple[str, str, str]]) -> None:
        self.results = results
        self.queries: list[str] = []
        self.reads: list[str] = []
        server = MCPServer(name="test-searxng")

        @server.tool(structured_output=False)
        async def searxng_web_search(
            query: str,
            pageno: int = 1,
            time_range: str | None = None,
            language: str = "all",
            safesearch: int | None = None,
        ) -> str:
            """Search the web (canned results)."""
            self.queries.append(query)
            return "\n\n".join(
                f"Title: {t}\nDescription: {d}\nURL: {u}\nRelevance Score: {1 - i / 10:.3f}"
                for i, (t, u, d) in enumerate(self.results)
            )

        @server.tool(structured_output=False)
        async def web_url_read(
            url: str,
            startChar: int = 0,
            maxLength: int | None = None,
            section: str | None = None,
            paragraphRange: str | None = None,
            readHeadings: bool = False,
        ) -> str:
            """Read a URL as markdown."""
            self.reads.append(url)
            async with httpx.AsyncClient() as client:
                response = await client.get(url)
            text = html_to_text(response.text)[startChar:]
            return text[:maxLength] if maxLength else text

        super().__init__(_mcp_app(server))


class FakeSummarizer(ThreadedApp):
    """The summarizer's MCP contract, deterministic: `fetch_url` answers with header lines, a
    blank line and the content; over `budget` tokens the "summary" is the page's first words.

    `mode`: "ok"; "error" (fetch_url raises a tool error); "degraded" (fetch_url answers
    "not summarized (...)" with raw tokens, as the real one does when its LLM fails).
    """

    def __init__(self, budget: int = 1000) -> None:
        self.budget = budget
        self.mode = "ok"
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.answers: dict[str, str] = {}  # url -> the content part of the last answer
        server = MCPServer(name="fake-summarizer")

        @server.tool(structured_output=False)
        async def fetch_url(
            url: str, context: str = "", raw: bool = False, start_index: int = 0, max_length: int = 0
        ) -> str:
            """Fetch a page and summarize it for `context` when it is over the budget."""
            self.calls.append(("fetch_url", {"url": url, "context": context}))
            if self.mode == "error":
                raise ToolError(f"fetch failed: upstream error for {url}")
            async with httpx.AsyncClient() as client:
                response = await client.get(url)
            title = m.group(1) if (m := re.search(r"(?is)<title>(.*?)</title>", response.text)) else ""
            text = html_to_text(response.text)
            n = tokens.count(text)
            if n <= self.budget:
                status, content = f"full page, {n} tokens", text
            elif self.mode == "degraded":
                content = tokens.truncate(text, self.budget)
                status = (
                    f"not summarized (LLM unavailable: 503); raw tokens 0-{self.budget} of {n:,}, "
                    f"next start_index={self.budget}"
                )
            else:
                content = tokens.truncate(" ".join(text.split()[: self.budget // 2]), self.budget)
                size = tokens.count(content)
                status = f"summarized from {n:,} to {size:,} tokens (FETCH_MAX_TOKENS {self.budget})"
            self.answers[url] = content
            return f"URL: {url}\nTitle: {html.unescape(title).strip()}\nStatus: {status}\n\n{content}"

        @server.tool(structured_output=False)
        async def summarize_for_extraction(content: str, schema_hint: str, max_output_tokens: int = 0) -> str:
            """Summarize content for extraction."""
            self.calls.append(("summarize_for_extraction", {"schema_hint": schema_hint}))
            if tokens.count(content) <= self.budget:
                return content
            return " ".join(content.split()[: self.budget // 2])

        super().__init__(_mcp_app(server))


@pytest.fixture
def search(pages: PageServer) -> Iterator[SearchServer]:
    server = SearchServer(
        [
            ("keyword — Testing for Python keywords", pages.url("/keyword.html"), "Python keywords"),
            ("The large page", pages.url("/large.html"), "Several chapters in one page"),
        ]
    ).start()
    yield server
    server.stop()


@pytest.fixture
def fake_summarizer() -> Iterator[FakeSummarizer]:
    server = FakeSummarizer().start()
    yield server
    server.stop()


# --------------------------------------------------------------------------------------------
# Settings
# --------------------------------------------------------------------------------------------


def make_settings(tmp_path: Path, **overrides: str) -> Settings:
    env = {
        "RESEARCHER_LLM_BASE_URL": "http://127.0.0.1:9/v1",  # never used: tests pass a FunctionModel
        "RESEARCHER_DATA_DIR": str(tmp_path / "data"),
        "RESEARCHER_UNSUMMARIZED_MAX_TOKENS": "300",
        "RESEARCHER_MCP_CONNECT_TIMEOUT_SECONDS": "3",
        **overrides,
    }
    return load_settings(env)


def specs(
    search_url: str, summarizer_url: str, *, search_timeout: float = 30, summarizer_timeout: float = 120
):
    return [
        MCPServerSpec("search", search_url, search_timeout),
        MCPServerSpec("summarizer", summarizer_url, summarizer_timeout),
    ]


# --------------------------------------------------------------------------------------------
# The real summarizer (subprocess) and its test LLM
# --------------------------------------------------------------------------------------------


def load_fake_llm() -> ModuleType:
    """../mcp_summarizer/tests/support/fake_llm.py, imported by path (it needs mcp_summarizer installed)."""
    # The monorepo's scripts/setup.sh installs both packages: a missing one is a setup error.
    assert importlib.util.find_spec("mcp_summarizer") is not None, (
        "run scripts/setup.sh: mcp_summarizer missing"
    )
    assert FAKE_LLM_PATH.is_file(), f"{FAKE_LLM_PATH} is missing"
    name = "mcp_summarizer_tests_fake_llm"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, FAKE_LLM_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


RealSummarizer = ServiceProcess


def start_real_summarizer(llm_base_url: str, **env: str) -> RealSummarizer:
    """`mcp-summarizer` (the console script of this venv) over streamable HTTP on a free port."""
    port = free_port()
    script = shutil.which("mcp-summarizer", path=str(Path(sys.executable).parent))
    command = [script] if script else [sys.executable, "-m", "mcp_summarizer"]
    full_env = scrubbed_environ(("OPENROUTER_", "LLM_", "MCP_SUMMARIZER_", "FETCH_", "SUMMARIZER_"))
    full_env.update(
        {
            "MCP_SUMMARIZER_HOST": "127.0.0.1",
            "MCP_SUMMARIZER_PORT": str(port),
            "FETCH_ALLOW_PRIVATE": "true",
            "OPENROUTER_BASE_URL": llm_base_url,
            "OPENROUTER_API_KEY": "test",
            "SUMMARIZER_BACKEND": "openai",
            "LLM_MAX_ATTEMPTS": "1",
            # Its own store, and no result cache: every run asks the test LLM afresh.
            "CACHE_DIR": tempfile.mkdtemp(prefix="summarizer-store-"),
            "CACHE": "off",
            **env,
        }
    )
    return start_service(command, full_env, port)


async def require_fetch_url(server: RealSummarizer) -> None:
    """The contract these tests are written against: the summarizer offers fetch_url."""
    async with Client(server.url) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert "fetch_url" in names, f"the summarizer has no fetch_url tool (it offers {sorted(names)})"


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No researcher setting leaks in from the machine; the data dir is the test's; the root
    logger's handlers come back after a test that ran the CLI (it installs its JSON handler)."""
    for name in list(os.environ):
        if name.startswith(("RESEARCHER_", "OPENROUTER_", "MCP_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("RESEARCHER_DATA_DIR", str(tmp_path / "data"))
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:], root.level = handlers, level
