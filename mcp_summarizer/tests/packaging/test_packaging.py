"""Registry metadata agrees with the code: one name, one version, real settings and defaults.

The MCP registry checks the name three ways (server.json, the `mcp-name` line of the PyPI
README, the Docker image label); a mismatch is found at publishing time, far from here.
"""

from __future__ import annotations

import importlib.resources
import json
import re
import tomllib
from pathlib import Path

import pytest

from mcp_summarizer import __version__
from mcp_summarizer.config import Environment, flat_values, load_settings

ROOT = Path(__file__).resolve().parents[3]
SERVER_JSON = json.loads((ROOT / "server.json").read_text(encoding="utf-8"))
NAME = SERVER_JSON["name"]


def test_schema_and_name_follow_the_registry_rules() -> None:
    assert (
        SERVER_JSON["$schema"]
        == "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
    )
    assert re.fullmatch(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+", NAME) and NAME.startswith("io.github.")
    assert 1 <= len(SERVER_JSON["description"]) <= 100


@pytest.mark.parametrize(
    "path",
    ["README.md", "mcp_summarizer/README.md"],
)
def test_readmes_carry_the_mcp_name(path: str) -> None:
    assert f"<!-- mcp-name: {NAME} -->" in (ROOT / path).read_text(encoding="utf-8")


def test_docker_image_is_labelled_with_the_name_and_version() -> None:
    dockerfile = (ROOT / "mcp_summarizer" / "Dockerfile").read_text(encoding="utf-8")
    assert f'io.modelcontextprotocol.server.name="{NAME}"' in dockerfile
    assert f'org.opencontainers.image.version="{__version__}"' in dockerfile


def test_one_version_everywhere() -> None:
    pyproject = tomllib.loads((ROOT / "mcp_summarizer" / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["version"] == __version__ == SERVER_JSON["version"]
    pypi, oci = SERVER_JSON["packages"]
    assert (pypi["registryType"], pypi["identifier"], pypi["version"]) == (
        "pypi",
        "mcp-summarizer",
        __version__,
    )
    assert pypi["runtimeHint"] == "uvx" and pypi["transport"] == {"type": "stdio"}
    assert oci["registryType"] == "oci" and oci["identifier"].endswith(f"/mcp-summarizer:{__version__}")


def test_declared_variables_are_real_settings_with_their_defaults() -> None:
    defaults = load_settings({})
    for package in SERVER_JSON["packages"]:
        for var in package["environmentVariables"]:
            field = var["name"].lower()
            assert field in Environment.model_fields, f"{var['name']} is not a setting"
            if "default" in var:
                assert load_settings({var["name"]: var["default"]}) == defaults, var["name"]
            if "choices" in var:
                assert str(flat_values(defaults)[field]) in var["choices"]
            assert var.get("isSecret", False) is ("key" in field), f"{var['name']}: secrets and only secrets"


def test_glama_json_names_maintainers() -> None:
    glama = json.loads((ROOT / "glama.json").read_text(encoding="utf-8"))
    assert glama["$schema"] == "https://glama.ai/mcp/schemas/server.json" and glama["maintainers"]


@pytest.mark.parametrize("package", ["mcp_summarizer", "shared"])
def test_packages_say_they_are_typed(package: str) -> None:
    """PEP 561: the library API's annotations reach a user's type checker (hatchling ships
    every file of the package folder, this one included)."""
    assert importlib.resources.files(package).joinpath("py.typed").is_file()
