"""`world-lore-researcher research "Elwynn Forest" [--game G] [--out DIR] [--topics a,b] [--restart]`

Researches the zone topic by topic, one progress line per step on stderr, the checkpoint saved
after every step (a rerun resumes at the first unfinished topic), and writes the research as
JSON; its path is the only thing printed on stdout.  Logs are JSON lines on stderr.

Exit codes: 0 done; 1 a step failed (the completed ones are saved: rerun to resume);
2 bad configuration or arguments (including no LLM key); 130 interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from world_lore_researcher import __version__, tools
from world_lore_researcher.checkpoint import CheckpointStore, ResearchCheckpoint, zone_key
from world_lore_researcher.logs import setup_logging
from world_lore_researcher.mcp_config import MCPServerSpec, load_mcp_config, with_bearer
from world_lore_researcher.settings import ConfigError, Settings, load_settings
from world_lore_researcher.topics import Topic, load_topics, select_topics

if TYPE_CHECKING:
    from pydantic_ai.models import Model

    from world_lore_researcher.agent import LoreResearcher
    from world_lore_researcher.pipeline import Progress

__all__ = ["main", "run_cli", "write_research"]

PROG = "world-lore-researcher"
NO_KEY = (
    "no LLM API key: set RESEARCHER_LLM_API_KEY (or OPENROUTER_API_KEY), or point "
    "RESEARCHER_LLM_BASE_URL at a local OpenAI-compatible server that needs none"
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Research a game zone, topic by topic.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    research = commands.add_parser("research", help="research a zone and write the research as JSON")
    research.add_argument("zone", help='the zone, e.g. "Elwynn Forest"')
    research.add_argument("--game", help="the game (default: RESEARCHER_GAME, World of Warcraft)")
    research.add_argument("--out", type=Path, help="output folder (default: RESEARCHER_OUTPUT_DIR)")
    research.add_argument("--topics", help="comma-separated topic keys (default: all; see `topics`)")
    research.add_argument("--restart", action="store_true", help="ignore the checkpoint and start over")
    commands.add_parser("topics", help="list the research topics")
    return parser


def _format_progress(event: Progress) -> str:
    head = f"[{event.index}/{event.total}] {event.topic}"
    if event.event == "start":
        return f"{head}: researching..."
    if event.event == "failed":
        return f"{head}: FAILED: {event.error}"
    research = event.research
    if research is None:
        return f"{head}: {event.event}"
    unsummarized = sum(not s.summarized and s.status != "full" for s in research.sources)
    summary = (
        f"{len(research.sources)} sources, {research.tokens:,} tokens "
        f"({sum(s.summarized for s in research.sources)} summarized, {unsummarized} unsummarized)"
    )
    if event.event == "skip":
        return f"{head}: done in an earlier run (checkpoint): {summary}"
    notes = [f"{server} unavailable: {cause}" for server, cause in research.unavailable.items()]
    if research.incomplete:
        notes.append(research.incomplete)
    extra = f"; {'; '.join(notes)}" if notes else ""
    return f"{head}: done in {event.seconds:.1f}s: {summary}{extra}"


def _format_digest(summary: dict[str, Any]) -> str:
    if not summary.get("available"):
        return f"digest: not written: {summary.get('reason')}"
    index = summary.get("index") or {}
    coverage = index.get("coverage", {})
    how = f" (degraded: {summary.get('cause')})" if summary.get("degraded") else ""
    return (
        f"digest: {coverage.get('documents', 0)} sources -> {coverage.get('clusters', 0)} topics, "
        f"{summary.get('output_tokens')} tokens{how}"
    )


def write_research(
    checkpoint: ResearchCheckpoint, topics: list[Topic], out_dir: Path, digest: dict[str, Any] | None = None
) -> Path:
    """Write the selected topics' research as one JSON file; returns its path.  ``digest``,
    the sources condensed by the summarizer (or why there is none), goes beside them."""
    chosen = [checkpoint.research[t.key] for t in topics if t.key in checkpoint.research]
    sources = [s for r in chosen for s in r.sources]
    document = {
        "zone": checkpoint.zone_name,
        "game": checkpoint.game,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "totals": {
            "topics": len(chosen),
            "sources": len(sources),
            "tokens": sum(r.tokens for r in chosen),
            "summarized_sources": sum(s.summarized for s in sources),
            "unsummarized_sources": sum(not s.summarized and s.status != "full" for s in sources),
        },
        "topics": {r.topic: r.model_dump(mode="json") for r in chosen},
        "digest": digest if digest is not None else {"available": False, "reason": "not requested"},
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{zone_key(checkpoint.game)}__{zone_key(checkpoint.zone_name)}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(document, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def run_cli(
    argv: Sequence[str] | None = None,
    *,
    model_factory: Callable[[Settings], Model] | None = None,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
) -> int:
    """The command line; returns the exit code.  `model_factory` replaces the configured LLM."""
    out, err = stdout or sys.stdout, stderr or sys.stderr

    def fail(code: int, message: str) -> int:
        print(f"{PROG}: {message}", file=err)
        return code

    args = _parser().parse_args(argv)
    try:
        settings = load_settings()
        topics = load_topics(settings.researcher_topics_file)
    except ConfigError as exc:
        return fail(2, str(exc))
    if args.command == "topics":
        for topic in topics.values():
            print(f"{topic.key}\t{topic.title}", file=out)
        return 0
    if model_factory is None and not settings.llm_configured:
        return fail(2, NO_KEY)
    try:
        selected = select_topics(topics, args.topics)
        servers = with_bearer(
            load_mcp_config(settings.researcher_mcp_config),
            tools.SUMMARIZER_SERVER,
            settings.mcp_summarizer_auth_token.get_secret_value(),
        )
    except ConfigError as exc:
        return fail(2, str(exc))
    zone = " ".join(args.zone.split())
    if not zone:
        return fail(2, "the zone name is empty")
    game = " ".join((args.game or settings.researcher_game).split())
    # pydantic-ai takes seconds to import: only now that the command is known to run.
    from world_lore_researcher.agent import LoreResearcher

    setup_logging(settings.researcher_log_level, err)
    model = model_factory(settings) if model_factory is not None else None
    researcher = LoreResearcher(settings, model=model, mcp_servers=servers)
    store = CheckpointStore(settings.checkpoint_db)
    run = _research(zone, game, selected, researcher, store, args.restart, servers, settings, err)
    try:
        checkpoint, summary = asyncio.run(run)
    except KeyboardInterrupt:
        return fail(130, f"interrupted; completed steps are saved in {store.path}: rerun to resume")
    except Exception as exc:
        return fail(
            1,
            f"research stopped: {type(exc).__name__}: {exc}\n"
            f"completed steps are saved in {store.path}; rerun the same command to resume",
        )
    path = write_research(checkpoint, selected, args.out or settings.output_dir, summary)
    print(f"research written to {path}", file=err)
    print(path, file=out)
    return 0


async def _research(
    zone: str,
    game: str,
    selected: list[Topic],
    researcher: LoreResearcher,
    store: CheckpointStore,
    restart: bool,
    servers: list[MCPServerSpec],
    settings: Settings,
    err: IO[str],
) -> tuple[ResearchCheckpoint, dict[str, Any]]:
    """The zone researched topic by topic (progress on ``err``), then its sources' digest."""
    from world_lore_researcher.digest import digest
    from world_lore_researcher.pipeline import run_pipeline

    def show(event: Progress) -> None:
        print(_format_progress(event), file=err, flush=True)

    checkpoint = await run_pipeline(
        zone,
        game=game,
        topics=selected,
        researcher=researcher,
        store=store,
        restart=restart,
        progress=show,
    )
    chosen = [checkpoint.research[t.key] for t in selected if t.key in checkpoint.research]
    print("digest: summarizing the sources...", file=err, flush=True)
    summary = await digest(
        next((s for s in servers if s.name == tools.SUMMARIZER_SERVER), None),
        zone,
        chosen,
        max_tokens=settings.researcher_summary_max_tokens,
        seconds=settings.researcher_summary_timeout_seconds,
    )
    print(_format_digest(summary), file=err, flush=True)
    return checkpoint, summary


def main(argv: Sequence[str] | None = None) -> None:
    raise SystemExit(run_cli(argv))


if __name__ == "__main__":
    main()
