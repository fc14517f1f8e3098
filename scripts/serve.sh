#!/usr/bin/env bash
# Set up, then run the summarizer on http://127.0.0.1:8007/mcp (settings from the environment
# over a .env file at the repository root; with no API key it starts and serves all the same).
#
# .env is read by mcp-summarizer itself, under the process environment: a variable set in the
# shell wins (FETCH_ALLOW_PRIVATE=true bash scripts/serve.sh), as with the CLI anywhere.
# Setup runs again only when what it installs from changed: the stamp in .venv holds the
# hashes of the pyproject files, of setup.sh and the Python version (the packages are
# installed editable, so a change to their code needs no reinstall).
set -euo pipefail
cd "$(dirname "$0")/.."
STAMP=.venv/.serve-setup-stamp

inputs() {
    local file
    for file in shared/pyproject.toml mcp_summarizer/pyproject.toml \
        a_world_lore_researcher/pyproject.toml scripts/setup.sh; do
        if [ -f "$file" ]; then sha256sum "$file"; else echo "missing $file"; fi
    done
    if [ -x .venv/bin/python ]; then .venv/bin/python --version; fi
}

if [ ! -x .venv/bin/mcp-summarizer ] || [ ! -f "$STAMP" ] || [ "$(inputs)" != "$(cat "$STAMP")" ]; then
    rm -f "$STAMP"
    bash scripts/setup.sh
    inputs >"$STAMP"
fi
exec .venv/bin/mcp-summarizer "$@"
