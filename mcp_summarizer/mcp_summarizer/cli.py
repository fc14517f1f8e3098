"""The `mcp-summarizer` console script: serve over streamable HTTP or stdio, or summarize a
file without a server (`mcp-summarizer summarize FILE`)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

import uvicorn

from mcp_summarizer import __version__
from mcp_summarizer.config import ConfigError, load_settings
from mcp_summarizer.logs import setup_logging
from mcp_summarizer.server import INSTRUCTIONS, _degrade, build_http_app, build_server, logger
from mcp_summarizer.summarize.chunker import STRATEGIES
from mcp_summarizer.summarize.engine import InputError, Outcome, Request
from mcp_summarizer.summarize.llm import LLMError

__all__ = ["main"]


def summarize_command(argv: Sequence[str]) -> None:
    """`mcp-summarizer summarize FILE`: the service's summary of a file, printed, no server."""
    parser = argparse.ArgumentParser(
        prog="mcp-summarizer summarize", description="Summarize a file or stdin."
    )
    parser.add_argument("file", nargs="?", default="-", help="file to summarize; - or nothing reads stdin")
    parser.add_argument("--max-output-tokens", type=int, default=0, help="budget in tokens (0 = the default)")
    parser.add_argument("--focus", default="", help="comma-separated topics to emphasize")
    parser.add_argument("--schema-hint", default="", help="summarize for extraction of this schema instead")
    parser.add_argument("--strategy", choices=STRATEGIES, default="semantic")
    args = parser.parse_args(argv)
    try:
        settings = load_settings()
    except ConfigError as exc:
        parser.exit(2, f"mcp-summarizer: {exc}\n")
    setup_logging("WARNING", sys.stderr)
    try:
        content = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        parser.exit(2, f"mcp-summarizer: cannot read {args.file}: {exc}\n")
    if args.max_output_tokens < 0 or args.max_output_tokens > settings.max_output_limit:
        parser.error(f"--max-output-tokens must be between 0 and {settings.max_output_limit}")
    _, service = build_server(settings)
    kind = "extraction" if args.schema_hint else "general"
    request = Request(
        content,
        args.max_output_tokens or settings.default_max_output_tokens,
        kind,
        args.schema_hint or args.focus,
        args.strategy,
    )

    async def run() -> Outcome:
        try:
            return await service.engine.summarize(request)
        except LLMError:
            return await _degrade(service, request)
        finally:
            if service.engine.backend is not None:
                await service.engine.backend.aclose()

    try:
        outcome = asyncio.run(run())
    except InputError as exc:
        parser.exit(1, f"mcp-summarizer: {exc}\n")
    print(outcome.text)
    print(
        f"[{outcome.input_tokens} -> {outcome.output_tokens} tokens, {service.engine.model}]",
        file=sys.stderr,
    )


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["summarize"]:
        summarize_command(argv[1:])
        return
    parser = argparse.ArgumentParser(
        prog="mcp-summarizer",
        description=INSTRUCTIONS,
        epilog="mcp-summarizer summarize FILE [--max-output-tokens N] summarizes a file without a server.",
    )
    parser.add_argument("--transport", choices=["streamable-http", "stdio"], default="streamable-http")
    parser.add_argument("--host", help="bind address (default: MCP_SUMMARIZER_HOST or 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port (default: MCP_SUMMARIZER_PORT or 8007)")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    args = parser.parse_args(argv)
    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"mcp-summarizer: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    if args.port is not None and not 1 <= args.port <= 65535:
        parser.error(f"--port must be between 1 and 65535, got {args.port}")
    overrides = {"mcp_summarizer_host": args.host, "mcp_summarizer_port": args.port}
    settings = settings.model_copy(update={k: v for k, v in overrides.items() if v is not None})
    # On stdio, stdout carries the protocol: logs go to stderr.
    setup_logging(settings.log_level, sys.stderr if args.transport == "stdio" else sys.stdout)
    server, service = build_server(settings)
    logger.info(
        "service_starting",
        extra={
            "version": __version__,
            "transport": args.transport,
            "backend": settings.backend,
            "model": service.engine.model,
            "host": settings.mcp_summarizer_host if args.transport != "stdio" else None,
            "port": settings.mcp_summarizer_port if args.transport != "stdio" else None,
            "max_concurrent_llm_calls": settings.max_concurrent_llm_calls,
            "llm_context_tokens": settings.llm_context_tokens,
        },
    )
    if settings.backend == "none":
        logger.warning(
            "no_llm_backend",
            extra={
                "hint": "set OPENROUTER_API_KEY or OPENROUTER_BASE_URL; content over budget gets an error"
            },
        )
    if args.transport == "stdio":
        server.run("stdio")
        return
    app = build_http_app(server, settings)
    config = uvicorn.Config(
        app,
        host=settings.mcp_summarizer_host,
        port=settings.mcp_summarizer_port,
        log_config=None,  # keep our JSON handler for uvicorn's logs too
        timeout_graceful_shutdown=5,
    )
    uvicorn.Server(config).run()


if __name__ == "__main__":
    main()
