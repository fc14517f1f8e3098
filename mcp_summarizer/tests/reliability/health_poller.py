"""GET /health every INTERVAL ms on a new connection each time (as a compose healthcheck does),
in a process of its own, until stdin closes; then write every sample to OUT as JSON.

    python health_poller.py http://127.0.0.1:PORT/health OUT.json [INTERVAL_MS]

Why a process of its own: the test process runs the clients and the test LLM, whose work would
otherwise delay the poller (one GIL) and be counted as the server's latency.  A sample is
``[start, seconds, status, gauges]``, ``start`` in ``time.monotonic()`` (CLOCK_MONOTONIC, the
same clock in every process on the machine, so the test can cut samples by its own times);
``status`` 0 and ``gauges`` null when the request failed.  Standard library only.
"""

from __future__ import annotations

import http.client
import json
import sys
import threading
import time
import urllib.parse


def main() -> None:
    url, out = sys.argv[1], sys.argv[2]
    interval = (float(sys.argv[3]) if len(sys.argv) > 3 else 20.0) / 1000
    parts = urllib.parse.urlsplit(url)
    assert parts.hostname is not None, f"no host in {url!r}"
    stop = threading.Event()

    def wait_for_eof() -> None:
        sys.stdin.read()
        stop.set()

    threading.Thread(target=wait_for_eof, daemon=True).start()
    samples: list[list[object]] = []
    next_start = time.monotonic()
    while not stop.is_set():
        started = time.monotonic()
        status, gauges = 0, None
        try:
            conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
            conn.request("GET", parts.path)
            response = conn.getresponse()
            body = response.read()
            status = response.status
            conn.close()
            gauges = json.loads(body) if status == 200 else None
        except (OSError, ValueError, http.client.HTTPException):
            pass
        samples.append([started, time.monotonic() - started, status, gauges])
        next_start = max(next_start + interval, time.monotonic())  # no catching up after a slow one
        stop.wait(max(0.0, next_start - time.monotonic()))
    with open(out, "w") as f:
        json.dump(samples, f)


if __name__ == "__main__":
    main()
