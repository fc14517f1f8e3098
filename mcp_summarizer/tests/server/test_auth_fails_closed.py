"""Authentication fails closed (issue 33, item 6): a tokens file with no token is refused at
start, naming it; a request without a valid token is refused before its body is read; the
start-up event says whether authentication is on and for how many tenants.  The real server
(and the proxy) as subprocesses, over real HTTP."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_summarizer.auth import load_tokens
from mcp_summarizer.config import load_settings
from mcp_summarizer.errors import ConfigError
from tests.server.test_auth import PYTHONPATH
from tests.support.servers import RunningServer, start_server, stop_server
from tests.support.tenants import ALICE, TOKENS, call, post_mcp, text_of

DECLARED = 33_000_000  # bytes a request says it sends (the attack)


@pytest.mark.parametrize("content", ["", "\n\n", "# tenants go here\n\n   # alice:...\n"])
def test_a_tokens_file_without_a_token_is_refused_naming_it(tmp_path: Path, content: str) -> None:
    path = tmp_path / "tokens"
    path.write_text(content)
    with pytest.raises(ConfigError) as info:
        load_tokens(load_settings({"AUTH_TOKENS_FILE": str(path)}))
    assert f"AUTH_TOKENS_FILE={path}: holds no name:token line" in str(info.value)
    # A token in the variable does not make an empty file acceptable: the file was meant to hold some.
    with pytest.raises(ConfigError, match="holds no name:token line"):
        load_tokens(load_settings({"AUTH_TOKENS": f"alice:{ALICE}", "AUTH_TOKENS_FILE": str(path)}))


@pytest.mark.parametrize(
    "command", [[], ["proxy", "--config", "servers.json", "--transport", "streamable-http"]]
)
def test_the_service_and_the_proxy_refuse_to_start_on_an_empty_tokens_file(
    tmp_path: Path, command: list[str]
) -> None:
    (tmp_path / "tokens").write_text("# filled at deploy time\n")
    (tmp_path / "servers.json").write_text(json.dumps({"mcpServers": {}}))
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_summarizer", *command],
        cwd=tmp_path,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "PYTHONPATH": PYTHONPATH,
            "AUTH_TOKENS_FILE": str(tmp_path / "tokens"),
            "MCP_SUMMARIZER_PORT": "1",  # never reached: it must not start at all
        },
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 2
    lines = proc.stderr.decode().strip().splitlines()
    assert (
        len(lines) == 1 and f"AUTH_TOKENS_FILE={tmp_path / 'tokens'}: holds no name:token line" in lines[0]
    ), lines
    assert not proc.stdout.strip(), "nothing was served, not even a start-up event"


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    srv = start_server(
        {"SUMMARIZER_BACKEND": "extractive", "AUTH_TOKENS": TOKENS, "MAX_INPUT_TOKENS": "100000"}
    )
    yield srv
    stop_server(srv)


async def head_then_answer(server: RunningServer, authorization: str | None) -> bytes:
    """A POST to /mcp that declares DECLARED bytes and sends 64 KB of them: the answer the
    server gives without the rest (a server that reads the body first never answers: the
    timeout is a freeze catch, not a speed test)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    head = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{server.port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"Content-Length: {DECLARED}",
    ]
    if authorization:
        head.append(f"Authorization: {authorization}")
    body = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"summarize","arguments":{"content":"'
    )
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body + b"x" * 65_536)
    await writer.drain()
    try:
        return await asyncio.wait_for(reader.read(4096), 30)
    finally:
        writer.close()


async def test_a_request_without_a_valid_token_is_refused_before_its_body_is_read(
    server: RunningServer,
) -> None:
    for authorization in (None, "Bearer wrong-token-0123456789", f"Basic {ALICE}", "Bearer "):
        answer = await head_then_answer(server, authorization)
        status, _, rest = answer.partition(b"\r\n")
        assert status == b"HTTP/1.1 401 Unauthorized", (authorization, answer[:300])
        assert b"\r\nwww-authenticate: bearer " in rest.lower(), rest
    assert all(e.get("error") != "BodyTooLarge" for e in server.events("request_rejected")), (
        "the body limit answered no request without a token"
    )
    # A tenant over the limit still gets the answer that names it, and the server still serves.
    result = await call(server, ALICE, "summarize", {"content": "word " * 1_100_000})  # 5.5 MB
    assert result.is_error and "MAX_INPUT_TOKENS=100000" in text_of(result), text_of(result)
    assert server.events("request_rejected")[-1]["error"] == "BodyTooLarge"
    assert post_mcp(server, ALICE)[0] == 200


def test_the_start_up_event_says_authentication_is_on_for_two_tenants(server: RunningServer) -> None:
    (started,) = server.events("service_starting")
    assert started["authentication"] == "bearer tokens" and started["tenants"] == 2


def test_without_tokens_the_start_up_event_says_authentication_is_off() -> None:
    srv = start_server({"SUMMARIZER_BACKEND": "extractive"})
    try:
        (started,) = srv.events("service_starting")
    finally:
        stop_server(srv)
    assert started["authentication"] == "off" and started["tenants"] == 1


async def test_the_proxy_refuses_before_reading_and_says_authentication_is_on(tmp_path: Path) -> None:
    upstream = Path(__file__).parents[1] / "proxy" / "slow_upstream.py"
    config = tmp_path / "servers.json"
    servers = {"slow": {"command": sys.executable, "args": [str(upstream), str(tmp_path / "record.txt")]}}
    config.write_text(json.dumps({"mcpServers": servers}))
    proxy = start_server(
        {"AUTH_TOKENS": TOKENS}, ["proxy", "--config", str(config), "--transport", "streamable-http"]
    )
    try:
        answer = await head_then_answer(proxy, None)
        (ready,) = proxy.events("proxy_ready")
    finally:
        stop_server(proxy)
    assert answer.startswith(b"HTTP/1.1 401 Unauthorized\r\n"), answer[:300]
    assert ready["authentication"] == "bearer tokens" and ready["tenants"] == 2
