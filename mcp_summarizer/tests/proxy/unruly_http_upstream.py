"""A tiny MCP server over streamable HTTP (JSON responses) whose ``misbehave`` tool answers
with the byte 0xff in its reply, and ``echo`` as it should, for the proxy's tests.

    python unruly_http_upstream.py PORT
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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
        if "id" not in message:
            self.send_response(202)
            self.end_headers()
            return
        method, params = message["method"], message.get("params") or {}
        result: dict[str, Any] = {}
        if method == "initialize":
            result = {
                "protocolVersion": params["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "unruly-http", "version": "0"},
            }
        elif method == "tools/list":
            schema = {"type": "object"}
            result = {"tools": [{"name": name, "inputSchema": schema} for name in ("echo", "misbehave")]}
        elif method == "tools/call":
            text = "@" if params["name"] == "misbehave" else "http:echo"  # "@" becomes 0xff below
            result = {"content": [{"type": "text", "text": text}]}
        body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        body = body.replace(b"@", b"\xff")
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
