"""Session ids that name the client, over raw HTTP as any client sends them (the TypeScript SDK
and Codex speak protocol 2025-11-25: initialize, then every request with the session id the
server answered it with).

Any replica reads the name back; an id the server did not make, or a garbled one, changes
nothing; GET (the stream a stateless server never writes to) is refused at once; DNS-rebinding
protection and bearer authentication come first, as before.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcp_summarizer.clients import session_id
from tests.clients.doc_upstream import reference
from tests.support.servers import RunningServer, start_server, stop_server
from tests.support.tenants import ALICE, TOKENS

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
CONTENT = reference(40)  # 43 KB, 600 lines, ~13,500 tokens: over Codex's 10,000 bytes and 256 lines
CODEX = "codex-mcp-client"


def initialize(name: Any = CODEX, **extra: Any) -> dict[str, Any]:
    info = {"name": name, "version": "0.63.0"} if name is not None else None
    params: dict[str, Any] = {"protocolVersion": "2025-11-25", "capabilities": {}, **extra}
    if info is not None:
        params["clientInfo"] = info
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


def post(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(url, content=json.dumps(body), headers={**HEADERS, **(headers or {})}, timeout=60)


def answer(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a response (an SSE stream's last data line)."""
    assert response.status_code == 200, (response.status_code, response.text[:300])
    data = [line[5:] for line in response.text.splitlines() if line.startswith("data:") and line[5:].strip()]
    message: dict[str, Any] = json.loads(data[-1])
    return message


def summarize(url: str, sid: str | None, headers: dict[str, str] | None = None) -> str:
    """A summarize call as a 2025-11-25 client sends it after initialize."""
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "summarize", "arguments": {"content": CONTENT, "max_output_tokens": 20_000}},
    }
    extra = {"MCP-Protocol-Version": "2025-11-25", **(headers or {})}
    if sid is not None:
        extra["Mcp-Session-Id"] = sid
    result = answer(post(url, call, extra))["result"]
    assert not result.get("isError"), result
    text: str = result["content"][0]["text"]
    return text


def fits_codex(text: str) -> bool:
    return len(text.encode()) <= 10_000 and text.count("\n") + 1 <= 256


@pytest.fixture(scope="module")
def replicas() -> Iterator[tuple[RunningServer, RunningServer]]:
    """Two replicas behind no shared state (each its own store)."""
    servers = [start_server({"SUMMARIZER_BACKEND": "extractive"}) for _ in range(2)]
    yield servers[0], servers[1]
    for srv in servers:
        stop_server(srv)


def test_initialize_names_the_client_for_any_replica(replicas: tuple[RunningServer, RunningServer]) -> None:
    one, other = replicas
    response = post(one.url, initialize())
    assert answer(response)["result"]["serverInfo"]["name"] == "mcp-summarizer"
    sid = response.headers["mcp-session-id"]
    assert session_id.name_in(sid) == CODEX
    # The other replica never saw the initialize: the id alone says who asks.
    assert fits_codex(summarize(other.url, sid))
    assert fits_codex(summarize(one.url, sid))
    assert summarize(other.url, None) == CONTENT  # no id: no name, the defaults
    assert other.events("client_initialized") == [] and one.events("client_initialized")[0]["client"] == CODEX


def test_each_initialize_gets_an_id_of_its_own(replicas: tuple[RunningServer, RunningServer]) -> None:
    ids = {post(replicas[0].url, initialize()).headers["mcp-session-id"] for _ in range(3)}
    assert len(ids) == 3


def _forged(raw: bytes) -> str:
    return f"v1.{'0' * 32}.{base64.urlsafe_b64encode(raw).rstrip(b'=').decode()}"


@pytest.mark.parametrize(
    "sid",
    [
        "garbage",
        "v1.",
        "0123456789abcdef0123456789abcdef",  # the SDK's own kind of session id
        f"v1.{'0' * 32}.!!!",
        f"v1.{'0' * 31}.Y29kZXg",  # one hex digit short
        _forged(b"\xff\xfecodex"),  # not UTF-8
        _forged(b"   "),  # no name
        _forged(b"c" * 200),  # longer than any id the server makes
        "v1." + "a" * 6000,
    ],
    ids=["word", "prefix", "sdk-uuid", "bad-base64", "short-nonce", "not-utf8", "blank", "too-long", "6k"],
)
def test_a_session_id_the_server_did_not_make_changes_nothing(
    replicas: tuple[RunningServer, RunningServer], sid: str
) -> None:
    assert summarize(replicas[0].url, sid) == CONTENT  # served, with the defaults


def test_an_id_made_by_hand_is_as_good_as_a_name_said_in_initialize(
    replicas: tuple[RunningServer, RunningServer],
) -> None:
    """Not signed, by design: the name is the client's claim either way, and it only shrinks
    answers (whose data a request reads is its bearer token's business)."""
    assert fits_codex(summarize(replicas[0].url, _forged(CODEX.encode())))


def test_long_and_odd_names(replicas: tuple[RunningServer, RunningServer]) -> None:
    url = replicas[0].url
    sid = post(url, initialize(CODEX + "x" * 5000)).headers["mcp-session-id"]
    assert len(sid) < 220 and fits_codex(summarize(url, sid))  # cut to its first 128 bytes
    odd = "opencode\n\x00 日本語 ünïcode"
    sid = post(url, initialize(odd)).headers["mcp-session-id"]
    assert sid.isascii() and sid.isprintable() and " " not in sid
    assert session_id.name_in(sid) == odd
    # No name, a name that is no string, an initialize over what is looked at: no id, served.
    for body in (initialize(None), initialize(["codex"]), initialize(padding="x" * 70_000)):
        response = post(url, body)
        assert response.status_code == 200 and "mcp-session-id" not in response.headers


def test_get_and_delete_are_refused_at_once_after_the_host_check(
    replicas: tuple[RunningServer, RunningServer],
) -> None:
    url = replicas[0].url
    sid = post(url, initialize()).headers["mcp-session-id"]
    stream = {"Accept": "text/event-stream", "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
    get = httpx.get(url, headers=stream, timeout=30)  # returns: no stream is held open
    assert get.status_code == 405 and get.headers["allow"] == "POST"
    assert "no GET stream" in get.json()["error"]["message"]
    assert httpx.get(url, headers={**stream, "Host": "evil.example"}, timeout=30).status_code == 421
    assert httpx.delete(url, headers=stream, timeout=30).status_code == 405


def test_bearer_authentication_comes_first() -> None:
    srv = start_server({"SUMMARIZER_BACKEND": "extractive", "AUTH_TOKENS": TOKENS})
    try:
        refused = post(srv.url, initialize())
        assert refused.status_code == 401 and "mcp-session-id" not in refused.headers
        assert httpx.get(srv.url, headers={"Accept": "text/event-stream"}, timeout=30).status_code == 401
        bearer = {"Authorization": f"Bearer {ALICE}"}
        sid = post(srv.url, initialize(), bearer).headers["mcp-session-id"]
        assert fits_codex(summarize(srv.url, sid, bearer))
        assert httpx.post(srv.url, headers={**HEADERS, "Mcp-Session-Id": sid}, timeout=30).status_code == 401
    finally:
        stop_server(srv)
