#!/usr/bin/env bash
# Set up, lint, and run every test suite. This is what CI runs.
#
# The suites run on several workers (pytest-xdist), the load tests after them one at a time;
# the service's coverage is printed by folder.  A developer's quicker loops, from a package's
# folder: `../.venv/bin/python -m pytest -m "not integration" -n 4` (the unit tests, about a
# minute) or any folder of tests with `-n 4`.
#
# Every step runs even when an earlier one fails, so one run reports every failure; the
# script exits non-zero if any failed.  Only a failed setup stops it (nothing can run then).
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh || { echo "test.sh: setup failed, nothing else can run" >&2; exit 1; }
bash scripts/system-packages.sh   # the Debian packages the tests use, installed or named
# pytest keeps the test modules it rewrote (their asserts) as bytecode in __pycache__, unless
# PYTHONDONTWRITEBYTECODE is set, as in some CI sandboxes: then every pytest process rewrote
# and compiled the ~180 test modules again, 9 s of CPU under the coverage tracer instead of 4.
# The first run (the clocked tests) writes them; the service's suite and the load tests read them.
unset PYTHONDONTWRITEBYTECODE

failed=()
step() {  # step NAME COMMAND...: run it, remember a failure, go on
    local name=$1 start=$SECONDS
    shift
    echo "--- $name"
    "$@" || failed+=("$name")
    echo "--- $name: $((SECONDS - start)) s"
}
# Most tests wait on sockets and child processes, so two workers a core keep the cores busy.
WORKERS="${TEST_WORKERS:-$(( $(nproc) * 2 ))}"
pytest_in() {  # pytest_in FOLDER [ARGS...]: one package's suite, from its own folder, on WORKERS workers
    local folder=$1
    shift
    (cd "$folder" && ../.venv/bin/python -m pytest -q -p no:cacheprovider -n "$WORKERS" --dist worksteal "$@")
}

# The checks and the two smaller suites run side by side (mypy is one process on one core, the
# suites mostly wait on sockets): each one's output is printed whole when it ends, in order.
names=() pids=() logs=()
together() {  # together NAME COMMAND...: start it now; `joined` waits for it
    local log
    log="$(mktemp)"
    # Its output, then how long it took.
    ( start=$SECONDS; status=0; "${@:2}" || status=$?; echo "--- $1: $((SECONDS - start)) s"; exit $status ) > "$log" 2>&1 &
    names+=("$1") pids+=($!) logs+=("$log")
}
joined() {  # print each `together` step's output as a step, in order, recording failures
    local i
    for i in "${!pids[@]}"; do
        wait "${pids[$i]}" || failed+=("${names[$i]}")
        echo "--- ${names[$i]}"
        cat "${logs[$i]}"
        rm -f "${logs[$i]}"
    done
    names=() pids=() logs=()
}
mypy_tests() {  # each package's tests in its own run: three folders are named `tests`
    local suite status=0
    for suite in shared/tests mcp_summarizer/tests a_world_lore_researcher/tests; do
        .venv/bin/mypy --config-file mypy-tests.ini "$suite" || status=1
    done
    return $status
}
together "compose" bash scripts/check_compose.sh   # docker-compose.yml through the real compose parser (no engine needed)
together "ruff check" .venv/bin/ruff check shared mcp_summarizer a_world_lore_researcher
together "ruff format" .venv/bin/ruff format --check shared mcp_summarizer a_world_lore_researcher
together "mypy" .venv/bin/mypy   # strict on the three packages' source: mypy.ini
together "mypy tests" mypy_tests   # the tests' bodies: mypy-tests.ini (its own cache)
together "shared tests" pytest_in shared
together "a_world_lore_researcher tests" pytest_in a_world_lore_researcher
# The service's tests held to a clock (an answer by the client's deadline) mostly wait on a
# slow test LLM: three at a time, beside the checks, not under the coverage tracer.  (Beside
# the service's suite, that suite's tight timing tests failed more often; tests/conftest.py
# says which tests are which.)
together "mcp_summarizer clocked tests" pytest_in mcp_summarizer -m clocked -n 3 -p no:cov
joined
# Coverage is measured in the test processes and in every service process a test starts
# (mcp_summarizer/pyproject.toml, [tool.coverage.run]); the data goes to one file wherever a
# test runs its service from.
export COVERAGE_FILE="$PWD/mcp_summarizer/.coverage"
rm -f "$COVERAGE_FILE" "$COVERAGE_FILE".*
step "mcp_summarizer tests" pytest_in mcp_summarizer -m "not serial and not clocked" --cov --cov-report=
# The load tests measure the service on this machine: alone, one at a time, and not under the
# coverage tracer.
step "mcp_summarizer serial tests" pytest_in mcp_summarizer -m serial -n 0 -p no:cov
step "coverage" .venv/bin/python scripts/coverage_summary.py "$COVERAGE_FILE"
unset COVERAGE_FILE

if [ ${#failed[@]} -gt 0 ]; then
    echo "test.sh: FAILED: $(IFS=,; echo "${failed[*]}" | sed 's/,/, /g')"
    exit 1
fi
echo "test.sh: every step passed in $SECONDS s"
