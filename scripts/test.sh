#!/usr/bin/env bash
# Set up, lint, and run every test suite. This is what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/check_compose.sh   # docker-compose.yml through the real compose parser (no engine needed)
.venv/bin/ruff check shared mcp_summarizer a_world_lore_researcher
.venv/bin/ruff format --check shared mcp_summarizer a_world_lore_researcher
.venv/bin/mypy   # strict on the three packages' source: mypy.ini
(cd shared && ../.venv/bin/python -m pytest -q -p no:cacheprovider)
(cd mcp_summarizer && ../.venv/bin/python -m pytest -q -p no:cacheprovider)
(cd a_world_lore_researcher && ../.venv/bin/python -m pytest -q -p no:cacheprovider)
