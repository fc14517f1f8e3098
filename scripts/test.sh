#!/usr/bin/env bash
# Set up, lint, and run every test suite. This is what CI runs.
#
# Every step runs even when an earlier one fails, so one run reports every failure; the
# script exits non-zero if any failed.  Only a failed setup stops it (nothing can run then).
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh || { echo "test.sh: setup failed, nothing else can run" >&2; exit 1; }
bash scripts/system-packages.sh   # the Debian packages the tests use, installed or named

failed=()
step() {  # step NAME COMMAND...: run it, remember a failure, go on
    local name=$1
    shift
    echo "--- $name"
    "$@" || failed+=("$name")
}
pytest_in() {  # pytest_in FOLDER: one package's suite, from its own folder
    (cd "$1" && ../.venv/bin/python -m pytest -q -p no:cacheprovider)
}

step "compose" bash scripts/check_compose.sh   # docker-compose.yml through the real compose parser (no engine needed)
step "ruff check" .venv/bin/ruff check shared mcp_summarizer a_world_lore_researcher
step "ruff format" .venv/bin/ruff format --check shared mcp_summarizer a_world_lore_researcher
step "mypy" .venv/bin/mypy   # strict on the three packages' source: mypy.ini
step "shared tests" pytest_in shared
step "mcp_summarizer tests" pytest_in mcp_summarizer
step "a_world_lore_researcher tests" pytest_in a_world_lore_researcher

if [ ${#failed[@]} -gt 0 ]; then
    echo "test.sh: FAILED: $(IFS=,; echo "${failed[*]}" | sed 's/,/, /g')"
    exit 1
fi
echo "test.sh: every step passed"
