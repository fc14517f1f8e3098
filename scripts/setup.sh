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
# The editable packages' bytecode, once: where PYTHONDONTWRITEBYTECODE is set (CI sandboxes,
# some containers) nothing caches it, and every process the tests start (hundreds of service
# processes) would compile the packages' ~180 modules again: 0.4 s of CPU each here.
.venv/bin/python -m compileall -q shared/shared mcp_summarizer/mcp_summarizer a_world_lore_researcher/world_lore_researcher
