"""What one test's service start costs: CPU of the service process until /health answers,
started the whole way (`python -m mcp_summarizer`) and forked from the tests' fork server
(`shared.testing.fork_service`), side by side, alternating.

    cd mcp_summarizer && ../.venv/bin/python -m bench.service_start [--runs 5]

CPU is read from /proc/PID/stat when /health first answers (user + system), so a loaded machine
stretches the wall time more than these figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from tests.support.servers import start_server, stop_server

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()  # after the command's name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def one(exec_: bool) -> tuple[float, float]:
    began = time.perf_counter()
    server = start_server({}, exec_=exec_)
    wall = time.perf_counter() - began
    cpu = cpu_seconds(server.proc.pid)
    stop_server(server)
    return cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    one(exec_=False)  # the fork server's own start, once a test process
    figures: dict[str, list[tuple[float, float]]] = {"exec": [], "fork": []}
    for _ in range(runs):
        figures["exec"].append(one(exec_=True))
        figures["fork"].append(one(exec_=False))
    for name, rows in figures.items():
        cpu = statistics.median(c for c, _ in rows)
        wall = statistics.median(w for _, w in rows)
        print(f"{name}: service CPU to /health median {cpu:.2f} s, wall {wall:.2f} s ({runs} runs)")
    fork, exec_ = (statistics.median(c for c, _ in figures[name]) for name in ("fork", "exec"))
    print(f"fork/exec CPU ratio: {fork / exec_:.2f}")


if __name__ == "__main__":
    main()
