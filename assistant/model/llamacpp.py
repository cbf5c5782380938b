"""llama.cpp's own OpenAI-compatible server as the serving engine (#80): ``EVIDENTIA_SERVING_ENGINE=llamacpp``.

The packaged model *is* a Q4_K_M GGUF, which llama.cpp serves as published: no bf16 conversion, no quantized copy,
and int4/int8 kernels for AVX2, AVX-512 and NEON alike (vLLM's 4-bit kernel needs AVX-512; without it vLLM computes
the bf16 weights in float32). Measured on 2 AMD EPYC cores with AVX-512 (docs/bench/runs/kernels-samples.md,
chat-llamacpp-6.md): one stream decodes 3.8x faster than vLLM's W4A16, a chat turn takes 4.4 s against 11.4 s,
and a claim check (prefill and n batched samples) about the same.

PyPI carries no prebuilt ``llama-server``, so it is built once per CPU from the llama.cpp sources that the pinned
``llama-cpp-python`` sdist vendors (``assistant/locks/llamacpp.txt``: its sha256 is checked by pip), with
``GGML_NATIVE`` so the kernels are this CPU's own, into ``<data>/llama.cpp/<version>-<cpu signature>/``.
It needs ``cmake`` and a C++ compiler (the server target alone: 311 s on 2 AMD EPYC cores, 2026-12-07).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from assistant import lockfiles
from assistant.settings import Settings
from kb.cpu import cpu_signature

SOURCE_PACKAGE = "llama-cpp-python"
VENDORED = Path("vendor") / "llama.cpp"  # where the sdist keeps llama.cpp's own sources
BINARY = "llama-server"
READY = "EVIDENTIA_LLAMA_SERVER_READY"
# The server target alone, statically linked, without the network (no curl: models are local files) and without
# the web UI's assets download; GGML_NATIVE compiles ggml for the CPU it is built on (-march=native).
CMAKE_FLAGS = ("-DCMAKE_BUILD_TYPE=Release", "-DGGML_NATIVE=ON", "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_CURL=OFF",
               "-DLLAMA_OPENSSL=OFF", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF",
               "-DLLAMA_BUILD_SERVER=ON", "-DLLAMA_BUILD_TOOLS=ON")


class EngineBuildError(RuntimeError):
    """llama-server could not be built or found. The message says why and what to do."""


def source_version() -> str:
    """The llama-cpp-python release whose vendored llama.cpp is built (from the committed lock)."""
    return lockfiles.locked_versions(lockfiles.LLAMACPP)[lockfiles.canonical(SOURCE_PACKAGE)]


def server_dir(settings: Settings) -> Path:
    """Where this CPU's build lives: a binary compiled for another CPU's instructions may not run here."""
    return settings.data_dir / "llama.cpp" / f"{source_version()}-{cpu_signature()}"


def installed_server(settings: Settings) -> Path | None:
    """The built ``llama-server`` for this CPU and this lock, or None."""
    folder = server_dir(settings)
    marker = folder / READY
    binary = folder / BINARY
    if marker.is_file() and marker.read_text().strip() == lockfiles.lock_id(lockfiles.LLAMACPP) \
            and os.access(binary, os.X_OK):
        return binary
    return None


def missing_tools() -> list[str]:
    return [tool for tool in ("cmake", "c++") if shutil.which(tool) is None]


def ensure_llama_server(settings: Settings, *, progress: bool = True,
                        echo: Callable[[str], None] | None = None) -> Path:
    """Build (once per CPU) and return ``llama-server``. Nothing half-built is kept: the build happens in a
    temporary folder and only a finished binary is moved into place, its marker written last."""
    say = echo or (lambda m: print(m, file=sys.stderr, flush=True))
    if (binary := installed_server(settings)) is not None:
        return binary
    if missing := missing_tools():
        raise EngineBuildError(
            f"Building llama.cpp's server needs {' and '.join(missing)}, which this machine lacks. Install them "
            "(Debian/Ubuntu: `apt-get install cmake g++`) or set EVIDENTIA_SERVING_ENGINE=vllm.")
    folder = server_dir(settings)
    say(f"Building llama.cpp's server from {SOURCE_PACKAGE} {source_version()}'s sources for this CPU, once "
        f"(about 5 minutes on 2 cores) into {folder} …")
    return build_server(folder, CMAKE_FLAGS, progress=progress, say=say)


def build_server(folder: Path, flags: tuple[str, ...], *, progress: bool = True,
                 say: Callable[[str], None] = print) -> Path:
    """Build ``llama-server`` from the locked sources with the CMake ``flags`` into ``folder`` (replaced only once
    the build succeeded). The product builds with :data:`CMAKE_FLAGS`; a benchmark may build other kernels (AVX2
    only, as the stand-in for an AVX2 machine in tests/bench/avx2_stand_in.py)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="llama-build-", dir=folder.parent) as tmp:
        work = Path(tmp)
        sdist = _download_source(work)
        src = _unpack(sdist, work / "src")
        build = work / "build"
        _step(["cmake", "-S", str(src), "-B", str(build), *flags], "configure llama.cpp", progress)
        _step(["cmake", "--build", str(build), "--target", BINARY, "-j", str(os.cpu_count() or 1)],
              "build llama-server", progress)
        built = build / "bin" / BINARY
        if not built.is_file():
            raise EngineBuildError(f"The build finished but left no {built}.")
        staged = work / "ready"
        staged.mkdir()
        shutil.copy2(built, staged / BINARY)
        (staged / READY).write_text(lockfiles.lock_id(lockfiles.LLAMACPP) + "\n")  # written last
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(staged, folder)
    say(f"llama-server built in {time.monotonic() - started:.0f} s: {folder / BINARY}")
    return folder / BINARY


def _download_source(work: Path) -> Path:
    """The pinned sdist, its hash checked by pip against the lock."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--require-hashes",
           "--disable-pip-version-check", "--quiet", "-d", str(work), "-r",
           str(lockfiles.lock_file(lockfiles.LLAMACPP))]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    found = sorted(work.glob("*.tar.gz"))
    if proc.returncode != 0 or not found:
        tail = " / ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
        raise EngineBuildError(f"Could not download {SOURCE_PACKAGE} {source_version()}'s sources from PyPI: "
                               f"{tail or 'pip gave no reason'}. Check the network and run again.")
    return found[0]


def _unpack(sdist: Path, into: Path) -> Path:
    """The sdist's vendored llama.cpp folder (extraction refuses links and paths that leave ``into``)."""
    with tarfile.open(sdist) as tar:
        tar.extractall(into, filter="data")
    roots = [p for p in into.iterdir() if (p / VENDORED / "CMakeLists.txt").is_file()]
    if not roots:
        raise EngineBuildError(f"{sdist.name} holds no {VENDORED}/CMakeLists.txt: not the expected sources.")
    return roots[0] / VENDORED


def _step(cmd: list[str], what: str, progress: bool) -> None:
    """One build step; its progress lines pass through (a build takes minutes), its last lines go in an error."""
    from assistant.model.provision import follow_child

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    tail = follow_child(proc, proc.stdout, progress)
    if proc.returncode != 0:
        raise EngineBuildError(f"Could not {what} (exit {proc.returncode}).\n" + "\n".join(tail[-10:]))


def build_command(settings: Settings, binary: Path, gguf: Path, *, port: int | None = None) -> list[str]:
    """llama-server on the packaged GGUF, named as vLLM names it, so the same client and settings serve.

    ``--parallel`` slots share the context: each gets ``vllm_max_model_len`` tokens (the client's budget). A
    request with ``n`` samples takes n slots, so there are as many slots as the program step samples in one
    request, times the checks an evaluation runs at once (``llamacpp_slots``). ``--jinja`` applies the GGUF's
    chat template, which parses the model's tool calls; ``--metrics`` exposes the token counters."""
    slots = settings.llamacpp_slots
    return [str(binary), "--model", str(gguf), "--alias", settings.llm_model,
            "--host", settings.vllm_host, "--port", str(port or settings.vllm_port),
            "--ctx-size", str(settings.vllm_max_model_len * slots), "--parallel", str(slots),
            "--threads", str(settings.llamacpp_threads or os.cpu_count() or 1),
            "--jinja", "--metrics", "--no-webui"]
