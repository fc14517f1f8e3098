"""A tiny stdio MCP server that misbehaves on command, for the proxy's tests: no SDK server
can be made to write bad bytes, so this one speaks newline-delimited JSON-RPC by hand.

    python unruly_upstream.py [--banner] LABEL [TOOL ...]

Every tool answers "LABEL:TOOL" (so a test sees which server a call reached); the default
tools are ``echo`` and ``misbehave``.  ``misbehave`` with ``how`` writes, in place of its
reply: ``bad_utf8`` (a reply with the byte 0xff in it), ``surrogate`` (a reply with a lone
surrogate escape, ``\\ud800``), ``raw_surrogate`` (its UTF-8 bytes, ED A0 80), ``not_json``
(a line of text), ``nul`` (a line of NUL bytes), ``huge`` (``mb`` megabytes with no
newline, then nothing), ``exit`` (half a reply, then the process exits) or ``trickle`` (a
reply one byte every ``every`` seconds).  ``--banner``: a line of text on stdout before it
answers ``initialize``, as some servers print at start.
"""

import json
import sys
import time
from typing import Any

banner = "--banner" in sys.argv
argv = [a for a in sys.argv[1:] if a != "--banner"]
label = argv[0] if argv else "unruly"
tools = argv[1:] or ["echo", "misbehave"]
out = sys.stdout.buffer


def write(data: bytes) -> None:
    out.write(data)
    out.flush()


def send(message: dict[str, Any]) -> None:
    write(json.dumps(message).encode() + b"\n")


def reply_bytes(id_: Any, text: str) -> bytes:
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    return json.dumps({"jsonrpc": "2.0", "id": id_, "result": result}).encode()


def misbehave(id_: Any, arguments: dict[str, Any]) -> None:
    how = arguments.get("how")
    if how == "bad_utf8":
        write(reply_bytes(id_, "caf@").replace(b"@", b"\xff") + b"\n")
    elif how == "surrogate":
        write(reply_bytes(id_, "\ud800") + b"\n")  # json.dumps escapes it: \ud800
    elif how == "raw_surrogate":
        write(reply_bytes(id_, "@").replace(b"@", "\ud800".encode("utf-8", "surrogatepass")) + b"\n")
    elif how == "not_json":
        write(b"this is not JSON-RPC: a log line on stdout\n")
    elif how == "nul":
        write(b"\x00" * 4096 + b"\n")
    elif how == "huge":
        block = b"x" * (1 << 20)
        for _ in range(int(arguments.get("mb", 8))):
            write(block)
    elif how == "exit":
        write(reply_bytes(id_, "never finished")[:20])
        sys.exit(0)
    elif how == "trickle":
        for byte in reply_bytes(id_, "slowly") + b"\n":
            write(bytes([byte]))
            time.sleep(float(arguments.get("every", 0.1)))
    else:
        send({"jsonrpc": "2.0", "id": id_, "result": {"content": [{"type": "text", "text": f"how? {how}"}]}})


def answer(message: dict[str, Any]) -> None:
    method, id_, params = message.get("method"), message.get("id"), message.get("params") or {}
    if id_ is None:
        return  # a notification: initialized, cancelled
    if method == "initialize":
        if banner:
            write(b"unruly server 0.1 listening on stdio\n")
        result: dict[str, Any] = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": label, "version": "0"},
        }
    elif method == "tools/list":
        schema = {"type": "object", "properties": {"how": {"type": "string"}}}
        result = {"tools": [{"name": name, "inputSchema": schema} for name in tools]}
    elif method == "tools/call" and params.get("name") in tools:
        if params["name"] == "misbehave":
            misbehave(id_, params.get("arguments") or {})
            return
        result = {"content": [{"type": "text", "text": f"{label}:{params['name']}"}]}
    elif method == "ping":
        result = {}
    else:
        send({"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": f"no {method}"}})
        return
    send({"jsonrpc": "2.0", "id": id_, "result": result})


for line in sys.stdin.buffer:
    if line.strip():
        answer(json.loads(line))
