"""A small MCP server that attacks the proxy in front of it, for the proxy's tests: it speaks
newline-delimited JSON-RPC by hand (stdio, or HTTP with JSON responses), so every part of
every reply is the test's to choose, and answers each call in a thread of its own (a slow call
does not hold up the others).

    python hostile_upstream.py [--http PORT] [--tools N] [--bad-names] [--description-mb MB] LABEL

Tools (each answers "LABEL:<tool>" unless said otherwise):

- ``echo``;
- ``fail`` {code, message, bytes}: a JSON-RPC error reply with that code, its message repeated
  to ``bytes`` characters if given;
- ``slow`` {seconds}: answers after that long;
- ``sized`` {text, structured, resource, meta, link, error}: a result whose text block,
  ``structuredContent`` (an object with a list of items), embedded text resource, ``_meta``
  and a resource link's description are about that many bytes each (0: none), ``isError`` if
  ``error``;
- ``progress`` {count, message_bytes}: ``count`` progress notifications, then the answer;
- ``report`` {lines}: ``lines`` numbered lines of text;
- ``malformed``: a result the SDK cannot read (its content is not a list);
- ``typed``: a tool with an outputSchema ({"n": integer}) whose result breaks it ({"n": "x"});
- ``crash``: the process exits without answering.

``--tools N`` lists N more tools (``tool_<i>``, each with a 500-character description);
``--bad-names`` lists tools whose names are not valid MCP tool names (empty, blank, with a
space, a newline, a right-to-left override, 10,000 characters); ``--description-mb`` gives
``echo`` a description of that many megabytes.
"""

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

parser = argparse.ArgumentParser()
parser.add_argument("label")
parser.add_argument("--http", type=int, default=0)
parser.add_argument("--tools", type=int, default=0)
parser.add_argument("--bad-names", action="store_true")
parser.add_argument("--description-mb", type=float, default=0)
options = parser.parse_args()
label = options.label

TOOLS = ["echo", "fail", "slow", "sized", "progress", "report", "typed", "malformed", "crash"]
BAD_NAMES = ["", " ", "a b", "line\nbreak", "\u202eevil", "n" * 10_000, "tab\there"]
_lock = threading.Lock()


def write(message: dict[str, Any]) -> None:
    data = json.dumps(message).encode() + b"\n"
    with _lock:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


def listing() -> list[dict[str, Any]]:
    schema = {"type": "object", "properties": {"code": {"type": "integer"}}}
    tools = [{"name": name, "description": f"{name} of {label}", "inputSchema": schema} for name in TOOLS]
    typed = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    tools[TOOLS.index("typed")]["outputSchema"] = typed
    if options.description_mb:
        tools[0]["description"] = "d" * int(options.description_mb * 1_048_576)
    if options.bad_names:
        tools += [{"name": name, "inputSchema": schema} for name in BAD_NAMES]
    filler = "x" * 500
    tools += [
        {"name": f"tool_{i}", "description": filler, "inputSchema": schema} for i in range(options.tools)
    ]
    return tools


def sized(arguments: dict[str, Any]) -> dict[str, Any]:
    def text(n: int, word: str) -> str:
        return (word * (n // len(word) + 1))[:n]

    content: list[dict[str, Any]] = []
    if n := int(arguments.get("text", 0)):
        content.append({"type": "text", "text": text(n, "the text block. ")})
    else:
        content.append({"type": "text", "text": f"{label}:sized"})
    if n := int(arguments.get("resource", 0)):
        resource = {"uri": "file:///big.txt", "mimeType": "text/plain", "text": text(n, "resource line\n")}
        content.append({"type": "resource", "resource": resource})
    if n := int(arguments.get("link", 0)):
        link = {"type": "resource_link", "uri": "file:///x", "name": "x", "description": text(n, "link ")}
        content.append(link)
    result: dict[str, Any] = {"content": content, "isError": bool(arguments.get("error"))}
    if n := int(arguments.get("structured", 0)):
        items = [{"id": i, "name": f"item {i}", "status": "ok"} for i in range(n // 40 + 1)]
        result["structuredContent"] = {"total": len(items), "items": items}
    if n := int(arguments.get("meta", 0)):
        result["_meta"] = {"example.com/blob": text(n, "meta ")}
    return result


def call(id_: Any, params: dict[str, Any], emit: Any = None) -> None:
    emit = emit or write
    name, arguments = params.get("name"), params.get("arguments") or {}
    token = (params.get("_meta") or {}).get("progressToken")
    if name == "fail":
        message = str(arguments.get("message", "invalid input: the query is not valid"))
        if n := int(arguments.get("bytes", 0)):
            message = (message * (n // len(message) + 1))[:n]
        error = {"code": int(arguments.get("code", -32000)), "message": message}
        emit({"jsonrpc": "2.0", "id": id_, "error": error})
        return
    if name == "crash":
        os._exit(3)
    if name == "slow":
        time.sleep(float(arguments.get("seconds", 1)))
    result: dict[str, Any] = {"content": [{"type": "text", "text": f"{label}:{name}"}]}
    if name == "sized":
        result = sized(arguments)
    elif name == "malformed":
        result = {"content": "not a list", "isError": "maybe"}
    elif name == "typed":
        result = {"content": [{"type": "text", "text": '{"n": "x"}'}], "structuredContent": {"n": "x"}}
    elif name == "report":
        lines = int(arguments.get("lines", 100))
        text = "\n".join(f"line {i}: the gate {i} of Stormwind opens at {i % 24}:00." for i in range(lines))
        result = {"content": [{"type": "text", "text": text}]}
    elif name == "progress" and token is not None:
        words = "x" * int(arguments.get("message_bytes", 300))
        for i in range(int(arguments.get("count", 10))):
            params = {"progressToken": token, "progress": i + 1, "total": None, "message": f"{i} {words}"}
            emit({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
    emit({"jsonrpc": "2.0", "id": id_, "result": result})


def reply(message: dict[str, Any]) -> dict[str, Any] | None:
    """The answer to a request other than tools/call (None for a notification)."""
    method, id_, params = message.get("method"), message.get("id"), message.get("params") or {}
    if id_ is None:
        return None
    result: dict[str, Any]
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": label, "version": "0"},
        }
    elif method == "tools/list":
        result = {"tools": listing()}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": f"no {method}"}}
    return {"jsonrpc": "2.0", "id": id_, "result": result}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # no server-to-client stream
        self.send_response(405)
        self.end_headers()

    def do_DELETE(self) -> None:
        self.send_response(200)
        self.end_headers()

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["content-length"])))
        answer: dict[str, Any] | None
        if message.get("method") == "tools/call":
            answers: list[dict[str, Any]] = []  # JSON responses: no progress, the answer only
            call(message["id"], message.get("params") or {}, answers.append)
            answer = next(a for a in answers if "id" in a)
        else:
            answer = reply(message)
        if answer is None:
            self.send_response(202)
            self.end_headers()
            return
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


if options.http:
    ThreadingHTTPServer(("127.0.0.1", options.http), Handler).serve_forever()
else:
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        message = json.loads(line)
        if message.get("method") == "tools/call":
            args = (message["id"], message.get("params") or {})
            threading.Thread(target=call, args=args, daemon=True).start()
        elif (answer := reply(message)) is not None:
            write(answer)
