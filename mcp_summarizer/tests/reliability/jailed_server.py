"""`python -m mcp_summarizer ARGS`, with name resolution kept on this machine: the bad-input
suite sends fetch_url hosts of every shape, and none of them may turn into a DNS query.

    python jailed_server.py [--transport stdio] ...      # the same arguments as the service

`socket.getaddrinfo` answers numeric hosts (``127.0.0.1``, ``::1``, and the classic IPv4 forms
``2130706433``, ``0x7f.0.0.1``, ``127.1``, which the C library reads without asking DNS) and
``localhost`` (as 127.0.0.1); any other name fails as an unknown name would, and is appended
to the file named by ``DNS_JAIL_LOG`` (one name a line), so a test can tell which requests
would have asked DNS.  Everything else is the service as shipped.
"""

from __future__ import annotations

import os
import runpy
import socket
import sys
from typing import Any

_real_getaddrinfo = socket.getaddrinfo


def _jailed_getaddrinfo(host: Any, port: Any, family: int = 0, type: int = 0, proto: int = 0, flags: int = 0):
    name = host.decode("ascii", "replace") if isinstance(host, bytes) else host
    if name is None:
        return _real_getaddrinfo(host, port, family, type, proto, flags)
    if name.lower().rstrip(".") == "localhost":
        return _real_getaddrinfo("127.0.0.1", port, family, type, proto, flags | socket.AI_NUMERICHOST)
    try:
        return _real_getaddrinfo(host, port, family, type, proto, flags | socket.AI_NUMERICHOST)
    except socket.gaierror:
        log = os.environ.get("DNS_JAIL_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(name[:300].replace("\n", "\\n") + "\n")
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known") from None


socket.getaddrinfo = _jailed_getaddrinfo

if __name__ == "__main__":
    sys.argv = ["mcp_summarizer", *sys.argv[1:]]
    runpy.run_module("mcp_summarizer", run_name="__main__", alter_sys=True)
