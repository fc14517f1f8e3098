"""Redis lost, paused and back, as replicas see it (issue 33, item 8): the real service as
subprocesses on a real redis-server, the real MCP client over HTTP.

After Redis restarts empty, a replica that was running and one started later make the same
ids (the id secret is asked of Redis each time, and the first to ask puts back the one it
knew); /health says `"degraded"`, naming the content store, while Redis is down or paused
(still 200: it is the liveness probe), and `"ok"` again once it is back."""

from __future__ import annotations

import asyncio
import json
import signal
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.redis_server import RedisServer
from tests.support.servers import RunningServer, start_server, stop_server
from tests.support.system_packages import needs
from tests.support.tenants import call, text_of

pytestmark = needs("redis-server")

PAGE = "\n\n".join(f"## Part {i}\n\n" + f"Marshal Dughan {i} guards Goldshire. " * 20 for i in range(8))


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer().start()
    yield server
    server.kill()


def env(redis: RedisServer) -> dict[str, str]:
    return {"SUMMARIZER_BACKEND": "extractive", "REDIS_URL": redis.url, "CACHE": "on"}


async def version(server: RunningServer) -> str:
    result = await call(
        server,
        None,
        "summarize_documents",
        {"documents": [{"text": PAGE, "id": "elwynn"}], "max_output_tokens": 300},
    )
    assert not result.is_error, text_of(result)
    return str(result.structured_content["documents"][0]["version"])


def health(server: RunningServer) -> tuple[int, dict[str, Any]]:
    with urllib.request.urlopen(server.base + "/health", timeout=10) as response:
        return response.status, json.loads(response.read())


async def health_until(server: RunningServer, status: str) -> dict[str, Any]:
    """/health polled until it says ``status`` with the content store up ("ok") or down
    ("degraded"); 30 s at most: a freeze bound."""
    for _ in range(300):
        code, body = health(server)
        assert code == 200, (code, body)
        store_up = body["dependencies"]["content store"]["up"]
        if body["status"] == status and store_up == (status == "ok"):
            return body
        await asyncio.sleep(0.1)
    raise AssertionError(f"/health never said {status!r}: {body}")


async def test_replicas_agree_on_ids_after_redis_restarts_empty(redis_server: RedisServer) -> None:
    a = start_server(env(redis_server))
    b: RunningServer | None = None
    try:
        before = await version(a)
        redis_server.kill()
        redis_server.start()  # the same port, no data: the id secret is gone
        again = await version(a)  # the running replica puts its secret back
        b = start_server(env(redis_server))  # a replica started now finds it
        assert await version(b) == again == before
        opened = await call(b, None, "expand", {"source_id": f"elwynn~{before}#0"})
        assert not opened.is_error and "Marshal Dughan 0" in text_of(opened), text_of(opened)
    finally:
        stop_server(a)
        if b is not None:
            stop_server(b)


async def test_health_says_degraded_naming_redis_while_it_is_down_or_paused(
    redis_server: RedisServer,
) -> None:
    server = start_server(env(redis_server))
    try:
        sid = f"elwynn~{await version(server)}#0"
        body = await health_until(server, "ok")
        assert body["dependencies"]["content store"] == {"up": True}
        assert body["dependencies"]["result cache"] == {"up": True}

        redis_server.kill()
        body = await health_until(server, "degraded")
        assert "content store down" in body["reason"] and "expand" in body["reason"], body
        assert body["dependencies"]["content store"]["up"] is False
        failed = await call(server, None, "expand", {"source_id": sid})
        assert failed.is_error and "content store is unavailable" in text_of(failed)

        redis_server.start()
        await health_until(server, "ok")
        sid = f"elwynn~{await version(server)}#0"  # stored again (Redis came back empty)
        assert not (await call(server, None, "expand", {"source_id": sid})).is_error

        assert redis_server.proc is not None
        redis_server.proc.send_signal(signal.SIGSTOP)  # up, but answering nothing
        try:
            body = await health_until(server, "degraded")
            assert "PING" in body["dependencies"]["content store"]["reason"], body
        finally:
            redis_server.proc.send_signal(signal.SIGCONT)
        await health_until(server, "ok")
        assert not (await call(server, None, "expand", {"source_id": sid})).is_error
        assert [e["what"] for e in server.events("redis_unavailable")].count("content store") == 2
    finally:
        stop_server(server)
