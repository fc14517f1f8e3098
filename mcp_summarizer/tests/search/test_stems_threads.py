"""Search terms are the same from any number of threads (issue 33 item 5): a stemmer shared
by threads gave another thread's word or raised IndexError, and the stem cache kept it.

The reference is computed single-threaded in a fresh process (so no cache of this one is
involved); the words are made up for this test, so no other test has stemmed them here.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading

from mcp_summarizer.search.passages import terms

SUFFIXES = ["ing", "ed", "ness", "ational", "izer", "fulness", "ously", "ies", "s", "ly", "ement", "iveness"]


def made_up_words(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        "".join(rng.choice("bcdfgklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(2, 5)))
        + rng.choice(SUFFIXES)
        for _ in range(n)
    ]


def reference(texts: list[str]) -> list[list[str]]:
    """``terms`` of each text, one at a time, in a process of its own."""
    code = "import json, sys\nfrom mcp_summarizer.search.passages import terms\n"
    code += "print(json.dumps([terms(t) for t in json.load(sys.stdin)]))"
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return list(json.loads(done.stdout))


def test_terms_from_four_threads_are_the_single_threaded_terms() -> None:
    threads = 4
    texts = [" ".join(made_up_words(500, seed=1000 + i)) for i in range(threads * 2)]
    expected = reference(texts)
    assert all(len(e) == 500 for e in expected)
    got: dict[int, list[str]] = {}
    failures: list[BaseException] = []
    start = threading.Barrier(threads)

    def work(k: int) -> None:
        start.wait()
        try:
            for i in range(k, len(texts), threads):
                got[i] = terms(texts[i])
        except BaseException as exc:  # the test reports it
            failures.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # threads switch often: a shared stemmer breaks within a few words
    try:
        workers = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(timeout=300)
    finally:
        sys.setswitchinterval(interval)
    assert not failures, failures[:3]
    wrong = [(a, b) for i in range(len(texts)) for a, b in zip(got[i], expected[i], strict=True) if a != b]
    assert not wrong, f"{len(wrong)} wrong stems of {len(texts) * 500}, such as {wrong[:5]}"
    # And the cache kept only right stems: asked again, one thread, the same.
    assert [terms(t) for t in texts] == expected
