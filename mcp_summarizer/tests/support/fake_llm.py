"""A local, scriptable OpenAI-compatible chat server for the test-suite.

Why: the summarizer talks to its LLM through the real `openai` SDK over HTTP, and the behaviour
worth testing (retries, Retry-After, context-length errors, truncated replies, timeouts,
cancellation, concurrency limits) only shows up against a real server on a real socket.
`FakeLLM` is that server: it answers deterministically, can be scripted reply by reply, and
records everything it saw so tests can assert on it.

    with FakeLLM() as llm:                      # or `async with`, from async tests
        llm.script(error(429, headers={"Retry-After": "1"}), ok("short"))
        client = AsyncOpenAI(base_url=llm.base_url, api_key="k", max_retries=0)
        ...
        assert [r.outcome for r in llm.requests] == ["error:429", "ok"]

The server runs uvicorn in a background thread with its own event loop, so it does not care
which loop (if any) the test runs on, and a test that blocks its own loop cannot stall it.

A provider's capacity can be scripted too: `FakeLLM(capacity=N)` serves at most N calls at
once and answers the rest 429 with Retry-After (`retry_after`) at once, and with `load_slope`
a call's latency grows with the calls being served when it arrives (`latency * (1 +
load_slope * (n - 1) / capacity)` for the n-th), as a real server's does as its batch grows.

A server's context can be scripted (`FakeLLM(context=SmallContext(...))`, see `small_context`):
prompts counted with another tokenizer, and those too long refused as llama.cpp, OpenAI, vLLM
or OpenRouter refuse them.  A slow local server too: `slots=N` serves N calls at a time and
queues the rest in order (llama.cpp's way), and a call whose client hung up keeps its slot
until its work is done (as llama.cpp's did); `seconds_per_token` adds to a call's latency for
each token of its prompt, as the server counts it.

Replies are built with the module-level constructors `ok`, `length`, `error`, `hang` and
`trickle`. Their `delay` defaults to None, meaning "use `llm.latency`" (0.0 unless set); pass
`delay=0.0` explicitly to answer at once whatever the latency.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

import uvicorn
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from mcp_summarizer.text import tokens

if TYPE_CHECKING:
    from tests.support.small_context import SmallContext

__all__ = [
    "FakeLLM",
    "Recorded",
    "Reply",
    "default_summary",
    "error",
    "hang",
    "length",
    "ok",
    "trickle",
]

# Defaults for error bodies, shaped like the real API's so the SDK parses `.type`/`.code`.
_ERROR_DEFAULTS: dict[int, tuple[str, str, str | None]] = {
    400: ("Bad request.", "invalid_request_error", None),
    401: ("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"),
    404: ("The model does not exist.", "invalid_request_error", "model_not_found"),
    429: ("Rate limit reached for requests.", "requests", "rate_limit_exceeded"),
    500: ("The server had an error while processing your request.", "server_error", None),
    503: ("The server is overloaded or not ready yet.", "server_error", None),
}


@dataclass(frozen=True)
class Reply:
    """How the server answers one request. Build it with `ok`, `length`, `error`, `hang` or `trickle`."""

    kind: Literal["ok", "error", "hang"]
    content: str | None = None  # None: the deterministic `default_summary`
    finish_reason: str = "stop"
    status: int = 200
    message: str = ""
    error_type: str | None = None
    code: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float | None = None  # None: the server's `latency`
    interval: float | None = None  # trickle: seconds between the body's bytes
    extra: Mapping[str, Any] = field(default_factory=dict)  # error: more fields of its error object


def ok(content: str | None = None, *, delay: float | None = None, finish_reason: str = "stop") -> Reply:
    """A normal completion; `content=None` answers with `default_summary` of the request."""
    return Reply("ok", content=content, finish_reason=finish_reason, delay=delay)


def length(content: str | None = None, *, delay: float | None = None) -> Reply:
    """A completion cut off by the token limit (`finish_reason: "length"`)."""
    return Reply("ok", content=content, finish_reason="length", delay=delay)


def error(
    status: int,
    *,
    message: str | None = None,
    error_type: str | None = None,
    code: str | None = None,
    headers: Mapping[str, str] | None = None,
    delay: float | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Reply:
    """An HTTP error with an OpenAI-shaped body `{"error": {"message", "type", "param", "code"}}`.

    `type`/`code` default per status (429 → "requests"/"rate_limit_exceeded", ...); a 400 whose
    message mentions "maximum context length" gets code "context_length_exceeded", as the real
    API does, so `error(400, message="This model's maximum context length is ...")` is enough.
    """
    default_message, default_type, default_code = _ERROR_DEFAULTS.get(
        status, (f"Error {status}.", "server_error" if status >= 500 else "invalid_request_error", None)
    )
    message = default_message if message is None else message
    if status == 400 and code is None and "maximum context length" in message:
        code = "context_length_exceeded"
    return Reply(
        "error",
        status=status,
        message=message,
        error_type=error_type or default_type,
        code=code or default_code,
        headers=dict(headers or {}),
        delay=delay,
        extra=dict(extra or {}),
    )


def trickle(
    content: str | None = None,
    *,
    interval: float,
    finish_reason: str = "stop",
    delay: float | None = None,
) -> Reply:
    """A completion whose status and headers come at once and whose JSON body then comes one
    byte every `interval` seconds: an upstream that is slow without ever being silent for long,
    so a client's per-read timeout never fires. Outcome "ok" once the last byte is sent,
    "cancelled" if the client hangs up first."""
    return Reply("ok", content=content, finish_reason=finish_reason, delay=delay, interval=interval)


def hang() -> Reply:
    """Never answer: wait until the client disconnects ("cancelled") or the server stops ("hung")."""
    return Reply("hang")


def default_summary(user: str, max_tokens: int | None) -> str:
    """The deterministic default answer: the leading words of `user`, joined by single spaces,
    at most `min(max_tokens, max(1, count(user) // 4))` tokens (no max_tokens: the second term).

    Why words from the start: tests can predict it exactly, and it shrinks like a real summary,
    so map-reduce loops converge. It never exceeds `max_tokens`.
    """
    budget = max(1, tokens.count(user) // 4)
    if max_tokens is not None:
        budget = min(budget, max_tokens)
    words = user.split()
    if budget <= 0 or not words:
        return ""

    def fits(k: int) -> bool:
        return tokens.count(" ".join(words[:k])) <= budget

    # Every word costs at least one token, so no more than `budget` words can fit.  `lo` always
    # fits (0 words is ""), so whatever the search returns is within budget.
    lo, hi = 0, min(len(words), budget)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    if lo:
        return " ".join(words[:lo])
    # Not even the first word fits: cut it at token level instead of answering nothing.
    ids = tokens.encode(words[0])[:budget]
    while ids and tokens.count(tokens.encoding().decode(ids)) > budget:
        ids = ids[:-1]
    return tokens.encoding().decode(ids)


@dataclass
class Recorded:
    """One request as the server saw it (mutated by the server thread until `finished` is set).

    `outcome`: "pending" while in flight, then "ok", "error:<status>", "cancelled" (the client
    disconnected before the reply) or "hung" (still unanswered when the server stopped).
    """

    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    system: str = ""
    user: str = ""
    max_tokens: int | None = None
    prompt_tokens: int = 0  # tokens of all message contents
    server_prompt_tokens: int = 0  # with a context: the prompt as the server's tokenizer counts it
    started: float = 0.0  # time.monotonic()
    finished: float | None = None
    outcome: str = "pending"
    serving: int = 0  # with a capacity: the calls served when it was admitted, itself included
    generation: int = 0  # the `reset`s before it was received: a request of an earlier test's is older


def _text(content: Any) -> str:
    """Message content is a string or a list of parts; only text parts count."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


class FakeLLM:
    """An OpenAI-compatible server on 127.0.0.1 with an ephemeral port (or ``port``), for one test.

    Use as `with FakeLLM() as llm:` (sync or async tests) or `async with` (does not block the
    test's event loop while starting/stopping), or call `start()`/`stop()`.
    Replies: the `script` queue first, then `responder`, then `ok()` (the default summary).
    """

    def __init__(
        self,
        *,
        latency: float = 0.0,
        shutdown_timeout: float = 1.0,
        port: int = 0,
        capacity: int | None = None,
        retry_after: float = 1.0,
        load_slope: float = 0.0,
        context: SmallContext | None = None,
        slots: int | None = None,
        seconds_per_token: float = 0.0,
    ) -> None:
        self.latency = latency  # seconds from a request's arrival to its reply, if its `delay` is None
        # Calls served at once; the rest get 429 with Retry-After: `retry_after` (None: no limit).
        self.capacity = capacity
        self.retry_after = retry_after
        self.load_slope = load_slope  # latency grows by this fraction at full capacity
        self._serving = 0
        self.context = context  # prompts too long for it are refused as a real server does
        self.slots = slots  # calls worked on at once, the rest queued (None: no limit)
        self.seconds_per_token = seconds_per_token  # latency per prompt token (the server's count)
        self._slot_lock: tuple[int, asyncio.Semaphore] | None = None  # for `slots`, made on the server's loop
        # 0: an ephemeral port. A fixed one lets a test stop (or kill) a server and start a new
        # one where the service under test still points (SO_REUSEADDR: old connections may
        # linger in TIME_WAIT on it).
        self._requested_port = port
        self.responder: Callable[[Recorded], Reply] | None = None
        self._shutdown_timeout = shutdown_timeout
        self._lock = threading.Lock()
        self._script: deque[Reply] = deque()
        self._requests: list[Recorded] = []
        self._calls = self._in_flight = self._peak = 0
        # Requests of the current generation in flight (the peak counts only these), and the
        # generation: `reset` starts a new one.
        self._current = self._generation = 0
        self._ids = itertools.count(1)
        self._port = 0
        self._thread: threading.Thread | None = None
        self._server: uvicorn.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing: asyncio.Event | None = None
        self._app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ]
        )

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeLLM:
        """Bind a port, start uvicorn in a daemon thread and return once it accepts connections."""
        if self._thread is not None:
            raise RuntimeError("FakeLLM is already started")
        # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets it knows are TCP, and
        # without it every reply on a kept-alive connection waits ~40 ms for a delayed ACK.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        if self._requested_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Bound here so the port is known before the thread runs.
        sock.bind(("127.0.0.1", self._requested_port))
        self._port = sock.getsockname()[1]
        config = uvicorn.Config(
            self._app,
            lifespan="off",
            log_level="warning",
            access_log=False,
            # Backstop only: stop() releases hung/delayed handlers itself.
            timeout_graceful_shutdown=max(1, round(self._shutdown_timeout)),
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._run, args=(sock,), name=f"fake-llm-{self._port}", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("FakeLLM server failed to start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        """Release every waiting handler (they end as "hung"), then shut uvicorn down and join."""
        thread, server, loop, closing = self._thread, self._server, self._loop, self._closing
        if thread is None or server is None:
            return
        if loop is not None and closing is not None:
            try:
                loop.call_soon_threadsafe(closing.set)
            except RuntimeError:  # loop already closed: the server died on its own
                pass
        server.should_exit = True
        thread.join(timeout=self._shutdown_timeout + 5)
        self._thread = None
        if thread.is_alive():
            raise RuntimeError("FakeLLM server thread did not stop")

    def _run(self, sock: socket.socket) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._serve(sock))
            loop.run_until_complete(loop.shutdown_default_executor())  # no stray tokenizer threads
        finally:
            sock.close()
            loop.close()

    async def _serve(self, sock: socket.socket) -> None:
        assert self._server is not None
        self._closing = asyncio.Event()
        await self._server.serve(sockets=[sock])

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> FakeLLM:
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.stop)

    # -- test-facing state -------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        """What to pass as `AsyncOpenAI(base_url=...)`."""
        return f"http://127.0.0.1:{self._port}/v1"

    @property
    def requests(self) -> list[Recorded]:
        """A snapshot list of the chat requests received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def calls(self) -> int:
        """Chat requests received since start/reset (including rejected ones)."""
        with self._lock:
            return self._calls

    @property
    def in_flight(self) -> int:
        with self._lock:
            return self._in_flight

    @property
    def peak_concurrency(self) -> int:
        """The most chat requests that were in flight at the same time."""
        with self._lock:
            return self._peak

    def script(self, *replies: Reply) -> None:
        """Queue replies; each request consumes one, in order, before `responder` applies."""
        with self._lock:
            self._script.extend(replies)

    def reset(self) -> None:
        """Forget recorded requests, counters and unused scripted replies (the responder and
        latency stay): what one test scripted must not answer the next.

        A request sent before the reset is forgotten even if the server had not read it yet
        (an earlier test's call, cancelled as its test ended, lies unread on a socket while a
        loaded machine starves the server's thread): the server first reads whatever its
        clients have sent, then a new generation starts.  Requests of earlier generations
        still in flight count in `in_flight` (`wait_idle` waits for them) but not in
        `peak_concurrency`, and are recorded nowhere."""
        self._catch_up()
        with self._lock:
            self._script.clear()
            self._requests.clear()
            self._calls = 0
            self._generation += 1
            self._current = self._peak = 0

    def _catch_up(self) -> None:
        """Return once the server has taken in every request already on its sockets (it runs
        on its own thread and loop, perhaps not scheduled since they came)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or not thread.is_alive() or threading.current_thread() is thread:
            return
        try:
            asyncio.run_coroutine_threadsafe(_catch_up(), loop).result(timeout=30)
        except RuntimeError:  # the loop has closed: the server is gone, nothing more comes
            pass

    def wait_until(self, condition: Callable[[], bool], timeout: float = 2.0) -> None:
        """Block until `condition()` holds, e.g. `lambda: llm.in_flight == 3`.

        Why polling: the state changes on the server thread, a moment after the client acts
        (a disconnect is noticed only once the socket closes)."""
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise TimeoutError(f"condition still false after {timeout}s")
            time.sleep(0.005)

    async def wait_until_async(self, condition: Callable[[], bool], within: float = 2.0) -> None:
        """`wait_until` for async tests: waits in a worker thread, so the test's event loop keeps
        running (needed when the condition depends on the test's own client tasks)."""
        await asyncio.to_thread(self.wait_until, condition, within)

    def wait_idle(self, timeout: float = 2.0) -> None:
        """Block until no request is in flight."""
        self.wait_until(lambda: self.in_flight == 0, timeout)

    async def wait_idle_async(self, within: float = 2.0) -> None:
        """`wait_idle` without blocking the test's event loop."""
        await self.wait_until_async(lambda: self.in_flight == 0, within)

    # -- HTTP handlers (run on the server thread) --------------------------------------------

    async def _models(self, request: Request) -> Response:
        model = {"id": "fake-llm", "object": "model", "created": 0, "owned_by": "fake-llm"}
        return JSONResponse({"object": "list", "data": [model]})

    async def _chat(self, request: Request) -> Response:
        record = Recorded(headers=dict(request.headers), started=time.monotonic())
        with self._lock:
            record.generation = self._generation
            self._requests.append(record)
            self._calls += 1
            self._in_flight += 1
            self._current += 1
            self._peak = max(self._peak, self._current)
        streaming = False
        try:
            response = await self._answer(request, record)
            streaming = isinstance(response, _Trickle)  # it finishes the record itself
            return response
        finally:
            if not streaming:
                self._finish(record)

    def _finish(self, record: Recorded) -> None:
        # Outcome first, then in_flight: a test that waited for idle sees the final outcome.
        record.finished = time.monotonic()
        if record.outcome == "pending":  # cancelled by uvicorn's forced shutdown
            record.outcome = "hung"
        with self._lock:
            self._in_flight -= 1
            if record.generation == self._generation:
                self._current -= 1
            if record.serving:
                self._serving -= 1

    def _admit(self, record: Recorded) -> Reply | None:
        """With a capacity: the 429 for a call over it, or None once it is admitted."""
        with self._lock:
            if self.capacity is None:
                return None
            if self._serving >= self.capacity:
                return error(429, headers={"Retry-After": f"{self.retry_after:g}"}, delay=0.0)
            self._serving += 1
            record.serving = self._serving
            return None

    @property
    def serving(self) -> int:
        """With a capacity: the calls admitted and not yet answered."""
        with self._lock:
            return self._serving

    async def _read(self, request: Request, record: Recorded) -> Response | None:
        """Read the request into ``record`` (body, prompts, their tokens, max_tokens), or the
        response it gets at once: gone, over capacity, or not a chat completion request."""
        try:
            body = json.loads(await request.body())
        except ValueError:
            body = None
        except ClientDisconnect:  # gone before its request was even read (a slow FakeLLM)
            record.outcome = "cancelled"
            return Response(status_code=499)
        # Over capacity: refused as soon as it arrives, before any work on it.
        refused = self._admit(record)
        if refused is not None:
            return self._error_response(record, refused)
        if not isinstance(body, dict):
            return self._error_response(record, error(400, message="The request body is not a JSON object."))
        record.body = body
        messages = body.get("messages")
        if "model" not in body or not isinstance(messages, list) or not messages:
            message = "Missing required parameter: 'model' and a non-empty 'messages' list are required."
            return self._error_response(record, error(400, message=message))
        texts = [(m.get("role"), _text(m.get("content"))) for m in messages if isinstance(m, dict)]
        record.system = "\n".join(t for role, t in texts if role in ("system", "developer"))
        record.user = "\n".join(t for role, t in texts if role == "user")
        # Tokenizing a megabyte prompt takes a while: off the loop, so other requests and
        # disconnects are still served meanwhile.
        record.prompt_tokens = await asyncio.to_thread(lambda: sum(tokens.count(t) for _, t in texts))
        limit = body.get("max_tokens", body.get("max_completion_tokens"))
        record.max_tokens = limit if isinstance(limit, int) else None
        return None

    async def _answer(self, request: Request, record: Recorded) -> Response:
        read = await self._read(request, record)
        if read is not None:
            return read
        answer_limit = record.max_tokens
        if self.context is not None:
            record.server_prompt_tokens = self.context.count(record.prompt_tokens)
            if (
                too_long := self.context.refusal(record.server_prompt_tokens, record.max_tokens or 0)
            ) is not None:
                return self._error_response(record, too_long)
            answer_limit = self.context.answer_limit(record.server_prompt_tokens, record.max_tokens)

        reply = self._next_reply(record)
        if reply.kind == "ok" and answer_limit != record.max_tokens and reply.content is None:
            reply = ok(delay=reply.delay, finish_reason="length")  # the context ran out first
        latency = self.latency + self.seconds_per_token * (
            record.server_prompt_tokens or record.prompt_tokens
        )
        if record.serving and self.capacity:
            latency *= 1 + self.load_slope * (record.serving - 1) / self.capacity
        delay = None if reply.kind == "hang" else (latency if reply.delay is None else reply.delay)
        # The delay counts from the request's arrival, and the default answer is made while it
        # runs: a call takes `delay` and the sending of its reply, not the stand-in's own work
        # on top (tokenizing an 8k-token prompt and the answer took ~20 ms a call, 10% of a
        # 0.2 s latency, which benchmarks would have charged to the engine).
        summary = (
            asyncio.ensure_future(asyncio.to_thread(default_summary, record.user, answer_limit))
            if reply.kind != "error" and delay is not None and reply.content is None
            else None
        )
        begin, slot = record.started, self._slot()
        if slot is not None:  # queued until a slot is free; the work starts then
            took = await self._take_slot(request, slot)
            if took != "done":
                return self._gone(record, took)
            begin = time.monotonic()
        try:
            if delay is None or delay > 0:
                left = None if delay is None else max(0.0, delay - (time.monotonic() - begin))
                woke = await self._wait(request, left)
                if woke == "disconnected" and slot is not None and delay is not None:
                    await self._keep_working(begin + delay)  # as llama.cpp: the work goes on
                if woke != "done":
                    return self._gone(record, woke)
        finally:
            if slot is not None:
                slot.release()
        if reply.kind == "error":
            return self._error_response(record, reply)

        content = reply.content
        if content is None:
            assert summary is not None  # started above for every answer without content
            content = await summary
        completion_tokens = tokens.count(content)
        payload = {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": record.body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": record.prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": record.prompt_tokens + completion_tokens,
            },
        }
        if reply.interval is not None:
            return _Trickle(
                json.dumps(payload).encode(),
                reply.interval,
                wait=lambda seconds: self._wait(request, seconds),
                done=lambda outcome: self._trickled(record, outcome),
            )
        record.outcome = "ok"
        return JSONResponse(payload)

    def _gone(self, record: Recorded, why: str) -> Response:
        """The answer to a client that hung up (``why`` "disconnected") or when the server stops."""
        if why == "disconnected":
            record.outcome = "cancelled"
            return Response(status_code=499)  # nobody is listening any more
        return self._error_response(record, error(503, message="FakeLLM is shutting down."), "hung")

    def _slot(self) -> asyncio.Semaphore | None:
        """The slots' semaphore, made (on the server's loop) for the current `slots`."""
        if self.slots is None:
            return None
        if self._slot_lock is None or self._slot_lock[0] != self.slots:
            self._slot_lock = (self.slots, asyncio.Semaphore(self.slots))
        return self._slot_lock[1]

    async def _take_slot(self, request: Request, slot: asyncio.Semaphore) -> str:
        """Wait for a slot: "done" with it held, or "disconnected" / "closing" without."""
        assert self._closing is not None
        acquire = asyncio.ensure_future(slot.acquire())
        others = {
            asyncio.ensure_future(self._disconnect(request)): "disconnected",
            asyncio.ensure_future(self._closing.wait()): "closing",
        }
        try:
            done, _ = await asyncio.wait({acquire, *others}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in others:
                task.cancel()
            await asyncio.gather(*others, return_exceptions=True)
        if acquire in done:
            return "done"
        acquire.cancel()
        try:
            await acquire
            slot.release()  # it came just as the client left: not used
        except asyncio.CancelledError:
            pass
        return next(why for task, why in others.items() if task in done)

    async def _keep_working(self, until: float) -> None:
        """An abandoned call's work, done to its end unless the server stops."""
        assert self._closing is not None
        left = until - time.monotonic()
        if left > 0:
            try:
                await asyncio.wait_for(self._closing.wait(), left)
            except TimeoutError:
                pass

    def _trickled(self, record: Recorded, outcome: str) -> None:
        record.outcome = outcome
        self._finish(record)

    def _next_reply(self, record: Recorded) -> Reply:
        with self._lock:
            if self._script:
                return self._script.popleft()
        if self.responder is None:
            return ok()
        try:
            return self.responder(record)
        except Exception as exc:  # a broken responder shows up as a 500 the test will see
            return error(500, message=f"FakeLLM responder raised {exc!r}", delay=0.0)

    async def _wait(self, request: Request, seconds: float | None) -> str:
        """Sleep `seconds` (None: forever) unless the client disconnects or the server stops.

        Returns "done", "disconnected" or "closing". The body has been read, so the next
        ASGI `receive()` only returns once uvicorn sees the connection close.
        """
        assert self._closing is not None
        waiters = {
            asyncio.ensure_future(self._disconnect(request)): "disconnected",
            asyncio.ensure_future(self._closing.wait()): "closing",
        }
        if seconds is not None:
            waiters[asyncio.ensure_future(asyncio.sleep(seconds))] = "done"
        try:
            done, _ = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in waiters:
                task.cancel()
            await asyncio.gather(*waiters, return_exceptions=True)
        woken = {waiters[task] for task in done}
        return next(w for w in ("disconnected", "closing", "done") if w in woken)

    @staticmethod
    async def _disconnect(request: Request) -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    @staticmethod
    def _error_response(record: Recorded, reply: Reply, outcome: str | None = None) -> Response:
        record.outcome = outcome or f"error:{reply.status}"
        body = {
            "error": {
                "message": reply.message,
                "type": reply.error_type,
                "param": None,
                "code": reply.code,
                **reply.extra,
            }
        }
        return JSONResponse(body, status_code=reply.status, headers=dict(reply.headers))


# Turns of the server's loop that `reset` waits: a request on a socket is recorded within a few
# (the connection accepted, its transport made, its bytes read and parsed, its handler started),
# each turn polling the sockets; the rest is room.  Twice, a moment apart: bytes a client sent
# may reach the server's socket a moment late on a loaded machine.
_TURNS = 20


async def _catch_up() -> None:
    for _ in range(2):
        for _ in range(_TURNS):
            await asyncio.sleep(0)
        await asyncio.sleep(0.01)


class _Trickle(Response):
    """`trickle`'s response: status and headers at once (with the body's length), then the
    body one byte per `interval`; `done` gets "ok", "cancelled" (the client hung up) or "hung"
    (the server stopped first), exactly once."""

    def __init__(
        self,
        payload: bytes,
        interval: float,
        *,
        wait: Callable[[float], Awaitable[str]],
        done: Callable[[str], None],
    ) -> None:
        super().__init__(media_type="application/json")
        self._payload, self._interval, self._wait, self._done = payload, interval, wait, done

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        outcome = "hung"
        try:
            headers = [
                (b"content-type", b"application/json"),
                (b"content-length", b"%d" % len(self._payload)),
            ]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            for i in range(len(self._payload)):
                woke = await self._wait(self._interval)
                if woke != "done":
                    outcome = "cancelled" if woke == "disconnected" else "hung"
                    return
                await send(
                    {"type": "http.response.body", "body": self._payload[i : i + 1], "more_body": True}
                )
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            outcome = "ok"
        except OSError:  # the client went away between two bytes
            outcome = "cancelled"
        finally:
            self._done(outcome)
