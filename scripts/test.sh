#!/usr/bin/env bash
# Set up, lint, and run every test suite. This is what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check shared mcp_summarizer
.venv/bin/ruff format --check shared mcp_summarizer
(cd shared && ../.venv/bin/python -m pytest -q -p no:cacheprovider)
(cd mcp_summarizer && ../.venv/bin/python -m pytest -q -p no:cacheprovider)
