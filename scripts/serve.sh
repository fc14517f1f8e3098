#!/usr/bin/env bash
# Set up, then run the summarizer on http://127.0.0.1:8007/mcp (settings from the environment
# or a .env file at the repository root; with no API key it starts and serves all the same).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ -f .env ]; then
    set -a; . ./.env; set +a
fi
exec .venv/bin/mcp-summarizer "$@"
