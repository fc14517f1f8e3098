"""The test LLM (`tests.support.fake_llm`) in a process of its own, on a fixed port, so that a
test can kill it with SIGKILL while the summarizer's calls are in flight and start another in its
place.

    python -m tests.reliability.llm_process PORT MODE LATENCY   # MODE: ok (after LATENCY s) or hang

Prints ``ready`` once it accepts connections; runs until stdin closes (or it is killed).
"""

from __future__ import annotations

import sys

from tests.support.fake_llm import FakeLLM, hang


def main() -> None:
    port, mode, latency = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    llm = FakeLLM(latency=latency, port=port)
    if mode == "hang":
        llm.responder = lambda record: hang()
    llm.start()
    print("ready", flush=True)
    sys.stdin.read()
    llm.stop()


if __name__ == "__main__":
    main()
