"""The `mcp-summarizer` console script: serve over streamable HTTP or stdio, or summarize a
file without a server (`mcp-summarizer summarize FILE`).

Both read settings from the environment over a `.env` file in the working directory (the
environment wins), as `scripts/serve.sh` does for the repository's own `.env`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, get_args

from mcp_summarizer.mcp.instructions import INSTRUCTIONS
from mcp_summarizer.process.allocator import limit_arenas
from mcp_summarizer.process.gil import hand_over_sooner
from mcp_summarizer.summarize.options import Strategy
from mcp_summarizer.version import __version__

# The rest is imported by the command that needs it: `--help` and a bad option answer without
# loading the engine, the SDKs and the tokenizer (tests/cli: under a second of CPU).
if TYPE_CHECKING:
    from mcp_summarizer.cli.terminal import PhaseBars
    from mcp_summarizer.config import Settings
    from mcp_summarizer.fidelity.receipt import Receipt
    from mcp_summarizer.summarize.engine import Engine, Outcome, Request

__all__ = ["build_parser", "main"]

ENV_FILE = Path(".env")


def main(argv: Sequence[str] | None = None) -> None:
    limit_arenas()  # before any thread starts (see process/allocator.py)
    hand_over_sooner()  # replies and /health wait less for worker threads (see process/gil.py)
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    args.run(args)


def build_parser() -> argparse.ArgumentParser:
    """The command line: ``serve`` (the default, so the top level takes its options too),
    ``summarize`` and ``proxy``, each with its own ``--help``."""
    parser = argparse.ArgumentParser(
        prog="mcp-summarizer",
        description=INSTRUCTIONS,
        epilog="Without a command it serves, as `serve` does. `mcp-summarizer COMMAND --help` "
        "tells more of each.",
    )
    _serve_options(parser, transport="streamable-http")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.set_defaults(run=serve_command, parser=parser)
    commands = parser.add_subparsers(title="commands", metavar="{serve,summarize,proxy}")

    serve = commands.add_parser(
        "serve", help="serve the tools over streamable HTTP or stdio (the default)", description=INSTRUCTIONS
    )
    _serve_options(serve, transport="streamable-http")
    serve.set_defaults(run=serve_command, parser=serve)

    summarize = commands.add_parser(
        "summarize",
        help="summarize a file or stdin without a server",
        description="Summarize a file or stdin and print the summary; the status goes to stderr "
        "(and the progress, when stderr is a terminal).",
    )
    summarize.add_argument("file", nargs="?", default="-", help="file to summarize; - or nothing reads stdin")
    summarize.add_argument(
        "--max-output-tokens", type=int, default=0, help="budget in tokens (0 = the default)"
    )
    summarize.add_argument("--focus", default="", help="comma-separated topics to emphasize")
    summarize.add_argument(
        "--schema-hint", default="", help="summarize for extraction of this schema instead"
    )
    summarize.add_argument("--strategy", choices=get_args(Strategy), default="semantic")
    summarize.set_defaults(run=summarize_command, parser=summarize)

    proxy = commands.add_parser(
        "proxy",
        help="serve other MCP servers' tools, their long results summarized",
        description="Serve the tools of the MCP servers in a config file (the mcpServers format of "
        "Claude Code's .mcp.json); a result over TOOL_OUTPUT_MAX_TOKENS is summarized, with a handle "
        "that expand opens.",
    )
    proxy.add_argument("--config", required=True, type=Path, help="the mcpServers JSON file")
    _serve_options(proxy, transport="stdio")
    proxy.set_defaults(run=proxy_command, parser=proxy)
    return parser


def _serve_options(parser: argparse.ArgumentParser, *, transport: str) -> None:
    parser.add_argument("--transport", choices=["streamable-http", "stdio"], default=transport)
    parser.add_argument("--host", help="bind address (default: MCP_SUMMARIZER_HOST or 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port (default: MCP_SUMMARIZER_PORT or 8007)")


def _serving_settings(args: argparse.Namespace) -> Settings:
    parser: argparse.ArgumentParser = args.parser
    if args.port is not None and not 1 <= args.port <= 65535:
        parser.error(f"--port must be between 1 and 65535, got {args.port}")
    settings = _settings(parser)
    overrides = {"mcp_summarizer_host": args.host, "mcp_summarizer_port": args.port}
    transport = settings.transport.model_copy(update={k: v for k, v in overrides.items() if v is not None})
    return settings.model_copy(update={"transport": transport})


def serve_command(args: argparse.Namespace) -> None:
    """`mcp-summarizer [serve]`: the tools over streamable HTTP or stdio."""
    from mcp_summarizer.assembly.from_settings import llm_endpoint
    from mcp_summarizer.assembly.root import build_service
    from mcp_summarizer.mcp.app import build_server, logger
    from mcp_summarizer.mcp.http_runner import build_http_app, serve
    from mcp_summarizer.process.ending import end_process
    from mcp_summarizer.process.logs import setup_logging

    settings = _serving_settings(args)
    # On stdio, stdout carries the protocol: logs go to stderr.
    setup_logging(settings.process.log_level, sys.stderr if args.transport == "stdio" else sys.stdout)
    service = build_service(settings)
    server = build_server(service)
    tenants = service.auth_tenants if args.transport != "stdio" else 0  # stdio has no bearer tokens
    logger.info(
        "service_starting",
        extra={
            "version": __version__,
            "transport": args.transport,
            "authentication": "bearer tokens" if tenants else "off",
            "tenants": tenants or 1,
            "backend": settings.llm.backend,
            "model": service.engine.model,
            "endpoint": llm_endpoint(settings),  # None on the embedded backend
            "websum_settings": list(settings.websum_names),  # websum's names it was configured by
            "host": settings.transport.mcp_summarizer_host if args.transport != "stdio" else None,
            "port": settings.transport.mcp_summarizer_port if args.transport != "stdio" else None,
            "max_concurrent_llm_calls": settings.llm.max_concurrent_llm_calls,
            "llm_context_tokens": settings.llm.llm_context_tokens,
        },
    )
    if args.transport == "stdio":
        from mcp_summarizer.mcp.stdio import run_stdio

        run_stdio(server)  # server.run("stdio"), but lines that are not JSON-RPC get an error
        end_process(0)  # stdin closed: the client waits for the process to go (see `ending`)
    serve(build_http_app(server, settings), service)  # ends the process once it has finished


def proxy_command(args: argparse.Namespace) -> None:
    """`mcp-summarizer proxy --config servers.json`: other MCP servers' tools, results that fit."""
    import asyncio

    from mcp_summarizer.assembly.root import build_proxy
    from mcp_summarizer.errors import ConfigError
    from mcp_summarizer.process.ending import end_process
    from mcp_summarizer.process.logs import setup_logging
    from mcp_summarizer.proxy.app import run_proxy
    from mcp_summarizer.proxy.server_list import load_proxy_config

    settings = _serving_settings(args)
    setup_logging(settings.process.log_level, sys.stderr if args.transport == "stdio" else sys.stdout)
    try:
        config = load_proxy_config(args.config)
    except ConfigError as exc:
        args.parser.exit(2, f"mcp-summarizer proxy: {exc}\n")
    asyncio.run(run_proxy(build_proxy(settings, config), args.transport))
    end_process(0)  # the upstreams are closed: no teardown to wait for (see `ending`)


def summarize_command(args: argparse.Namespace) -> None:
    """`mcp-summarizer summarize FILE`: the service's summary of a file, printed, no server."""
    import contextlib

    parser: argparse.ArgumentParser = args.parser
    bars = None
    if sys.stderr.isatty():  # drawn before the imports below, which take seconds on a busy machine
        from mcp_summarizer.cli.terminal import PhaseBars

        bars = PhaseBars(sys.stderr)
    with bars if bars is not None else contextlib.nullcontext():
        if bars is not None:
            bars.show(0, 3, "start: 0/3 loading the modules")
        outcome, model = _summarize_file(args, parser, bars)
    try:
        print(outcome.text, flush=True)
    except BrokenPipeError:  # `| head`: the reader has what it wants; no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nor one at exit's flush
        raise SystemExit(1) from None
    how = f"degraded ({outcome.policy}): {outcome.cause}" if outcome.degraded else model
    if outcome.fidelity is not None:  # none when the file came back unchanged
        print(fidelity_line(outcome.fidelity), file=sys.stderr)
    print(f"[{outcome.input_tokens} -> {outcome.output_tokens} tokens, {how}]", file=sys.stderr)


def _summarize_file(
    args: argparse.Namespace, parser: argparse.ArgumentParser, bars: PhaseBars | None
) -> tuple[Outcome, str]:
    """The file's summary and the model that wrote it (``bars``: the terminal's progress)."""
    import asyncio

    from mcp_summarizer.assembly.engine_setup import build_engine
    from mcp_summarizer.errors import SummarizerError
    from mcp_summarizer.process.logs import setup_logging
    from mcp_summarizer.summarize.engine import Request, log_completion
    from mcp_summarizer.web.charset import decode_text

    if bars is not None:
        bars.show(1, 3, f"start: 1/3 modules loaded, reading {args.file}")
    settings = _settings(parser)
    # Stderr is the reader's: warnings only, unless LOG_LEVEL asks for more (INFO shows the
    # events a server logs, summarization_complete among them).
    chosen = "log_level" in settings.process.model_fields_set
    setup_logging(settings.process.log_level if chosen else "WARNING", sys.stderr)
    try:
        body = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as exc:
        parser.exit(2, f"mcp-summarizer: cannot read {args.file}: {exc}\n")
    if bars is not None:
        bars.show(2, 3, f"start: 2/3 {args.file} read, building the engine")
    engine = build_engine(settings)
    if bars is not None:
        bars.show(3, 3, "start: 3/3 ready")
    try:
        request = Request(
            content=decode_text(body),  # any charset, sniffed as fetch_url sniffs a page's
            max_output_tokens=engine.budget.output_tokens(args.max_output_tokens, name="--max-output-tokens"),
            kind="extraction" if args.schema_hint else "general",
            focus=args.schema_hint or args.focus,
            strategy=args.strategy,
        )
        started = time.perf_counter()
        outcome = asyncio.run(_summarize(engine, request, bars))
        log_completion("cli", request, outcome, model=engine.model, started=started, file=args.file)
        return outcome, engine.model
    except SummarizerError as exc:
        parser.exit(1, f"mcp-summarizer: {exc}\n")


def fidelity_line(receipt: Receipt) -> str:
    """The receipt on one stderr line: facts kept of the source's, possible inventions, and
    the most salient dropped facts (up to 5)."""
    dropped = "; ".join(receipt.dropped[:5])
    return (
        f"[fidelity: kept {receipt.kept_facts} of {receipt.source_facts} facts, "
        f"{receipt.invented_facts} possibly invented"
        + (f"; dropped first: {dropped}" if dropped else "")
        + "]"
    )


async def _summarize(engine: Engine, request: Request, bars: PhaseBars | None) -> Outcome:
    try:
        return await engine.summarize(request, bars)
    finally:
        await engine.aclose()


def _settings(parser: argparse.ArgumentParser) -> Settings:
    from mcp_summarizer.auth import load_tokens
    from mcp_summarizer.config import load_settings
    from mcp_summarizer.errors import ConfigError

    try:
        settings = load_settings(env_file=ENV_FILE)
        load_tokens(settings)  # a malformed AUTH_TOKENS(_FILE) is one line at start, too
    except ConfigError as exc:
        parser.exit(2, f"mcp-summarizer: {exc}\n")
    return settings
