#!/usr/bin/env bash
# Create .venv (if needed) and install the services with their test tools. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ./shared -e "./mcp_summarizer[test]" -e "./a_world_lore_researcher[test]"
